#!/usr/bin/env bash
# Debian's headless-capable Chromium, for the browser tests of `git jules web` (tests/it/web.rs drive
# /usr/bin/chromium through the DevTools protocol).
set -euo pipefail
if ! [ -x /usr/bin/chromium ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
/usr/bin/chromium --version
