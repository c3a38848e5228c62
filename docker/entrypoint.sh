#!/bin/sh
# Chooses the process by its first argument.
set -e
app="${1:-all-in-one}"
case "$app" in
  management|issuer|verifier|all-in-one) exec node --enable-source-maps "/app/$app/main.js" ;;
  *) echo "usage: credential-service management|issuer|verifier|all-in-one" >&2; exit 2 ;;
esac
