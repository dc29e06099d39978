#!/bin/sh
# Makes sure Debian's redis-server is installed for the event-hub tests (they start their own
# server on a free loopback port with a temp dir and stop it; nothing is left running). Installs
# it with apt when missing; needs root.
set -eu
HERE="$(dirname "$0")"
REDIS="${REDIS_SERVER:-/usr/bin/redis-server}"
if [ -x "$REDIS" ]; then
  exit 0
fi
sh "$HERE/../../../scripts/ensure-apt.sh" "$REDIS" redis-server
# The package may start a system service on port 6379; the tests do not use it.
if command -v systemctl >/dev/null 2>&1; then
  systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
if command -v service >/dev/null 2>&1; then
  service redis-server stop >/dev/null 2>&1 || true
fi
