#!/bin/sh
# Chooses the process (or operator command) by its first argument. The bundles sit beside this
# script (/app in the image).
set -e
app="$(dirname "$(readlink -f "$0")")"
command="${1:-all-in-one}"
[ "$#" -gt 0 ] && shift
case "$command" in
  # A 4 MB young generation keeps an idle app under 100 MB resident at no measurable CPU cost
  # (see the README's capacity guide); NODE_OPTIONS may override it.
  management|issuer|verifier|all-in-one) exec node --enable-source-maps --max-semi-space-size=4 "$app/$command/main.js" "$@" ;;
  db:migrate|config:import|config:migrate|upgrade:check) exec node --enable-source-maps "$app/all-in-one/cli/$(echo "$command" | tr : -).js" "$@" ;;
  *) echo "usage: credential-service management|issuer|verifier|all-in-one|db:migrate|config:import|config:migrate|upgrade:check" >&2; exit 2 ;;
esac
