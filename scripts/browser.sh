#!/usr/bin/env bash
# Installs the system Chromium and its driver for the playground's browser tests
# (tests/playground/test_playground_browser.py), from the distribution's packages: the tests
# never download a browser. Idempotent and quiet: does nothing when both are there; where apt
# is missing (or we are not root and have no sudo) it says so and leaves the tests to skip.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if { have chromium || have chromium-browser; } && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
if ! have apt-get; then
    echo "browser.sh: no apt-get here; install Chromium and chromedriver by hand (the browser tests skip without them)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if have sudo; then
        SUDO="sudo -n"
    else
        echo "browser.sh: not root and no sudo; the browser tests will skip" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
# Debian's package names; a stale package index is refreshed once, only when the install needs it.
if ! $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; then
    if ! { $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; }; then
        # loud, but not fatal: the rest of the test job still runs, and the browser tests say why they skip
        echo "browser.sh: WARNING: could not install chromium + chromium-driver with apt-get; the browser tests will skip" >&2
        exit 0
    fi
fi
echo "browser.sh: installed $(chromium --version 2>/dev/null | head -1)"
