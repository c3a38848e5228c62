#!/bin/sh
# Chooses the process (or operator command) by its first argument.
set -e
command="${1:-all-in-one}"
[ "$#" -gt 0 ] && shift
case "$command" in
  management|issuer|verifier|all-in-one) exec node --enable-source-maps "/app/$command/main.js" "$@" ;;
  config:import|config:migrate|upgrade:check) exec node --enable-source-maps "/app/all-in-one/cli/$(echo "$command" | tr : -).js" "$@" ;;
  *) echo "usage: credential-service management|issuer|verifier|all-in-one|config:import|config:migrate|upgrade:check" >&2; exit 2 ;;
esac
