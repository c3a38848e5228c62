#!/bin/sh
# Chooses the process (or operator command) by its first argument. The bundles sit beside this
# script (/app in the image).
set -e
app="$(dirname "$(readlink -f "$0")")"
command="${1:-all-in-one}"
[ "$#" -gt 0 ] && shift
case "$command" in
  # A 4 MB young generation keeps an idle app small at no measurable CPU cost, and the servers run
  # without --enable-source-maps: Node decodes a bundle's whole source map at start, 8-11 MB of heap
  # for the life of the process, only to print stack traces in TypeScript positions (the bundle is
  # not minified, so its own positions and names read well). NODE_OPTIONS=--enable-source-maps
  # turns them back on (docs/benchmarks.md, Memory). The short-lived commands keep them.
  management|issuer|verifier|all-in-one) exec node --max-semi-space-size=4 "$app/$command/main.js" "$@" ;;
  db:migrate|config:import|config:migrate|upgrade:check) exec node --enable-source-maps "$app/all-in-one/cli/$(echo "$command" | tr : -).js" "$@" ;;
  *) echo "usage: credential-service management|issuer|verifier|all-in-one|db:migrate|config:import|config:migrate|upgrade:check" >&2; exit 2 ;;
esac
