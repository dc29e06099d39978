#!/bin/sh
# Makes sure Debian's chromium is installed for the end-to-end test (playwright-core drives it;
# no browser is downloaded by playwright). Installs it with apt when missing; needs root.
set -eu

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "ensure-chromium: $CHROMIUM is missing and installing it needs root (apt-get install chromium)" >&2
    exit 1
  fi
else
  SUDO=
fi

echo "ensure-chromium: installing chromium with apt-get" >&2
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: chromium installed but $CHROMIUM is not executable" >&2
  exit 1
fi
