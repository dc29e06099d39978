#!/bin/sh
# Usage: sh scripts/ensure-apt.sh BINARY PACKAGE
# Makes sure a Debian package that tests need is installed (chromium for the browser tests,
# redis-server for the event-hub tests): exits at once when BINARY is executable, otherwise
# installs PACKAGE with apt-get. Needs root (or sudo).
set -eu

BINARY="$1"
PACKAGE="$2"
if [ -x "$BINARY" ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "ensure-apt: $BINARY is missing and installing it needs root (apt-get install $PACKAGE)" >&2
    exit 1
  fi
else
  SUDO=
fi

echo "ensure-apt: installing $PACKAGE with apt-get" >&2
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$PACKAGE"

if [ ! -x "$BINARY" ]; then
  echo "ensure-apt: $PACKAGE installed but $BINARY is not executable" >&2
  exit 1
fi
