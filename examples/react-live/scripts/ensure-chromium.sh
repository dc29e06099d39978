#!/bin/sh
# Makes sure Debian's chromium is installed for the end-to-end test (playwright-core drives it;
# no browser is downloaded by playwright). Installs it with apt when missing; needs root.
set -eu
HERE="$(dirname "$0")"
exec sh "$HERE/../../../scripts/ensure-apt.sh" "${CHROMIUM_PATH:-/usr/bin/chromium}" chromium
