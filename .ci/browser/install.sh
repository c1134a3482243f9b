#!/bin/bash
# Install Debian's Chromium for the browser test of the game pages
# (tests/test_web_browser.py drives it with Playwright: `playwright install`
# cannot fetch its own browsers here). Idempotent and quiet; run as root.
set -euo pipefail

if command -v chromium >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: chromium is missing and this is not root; run as root: $0" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt_install() { apt-get install -y -q --no-install-recommends chromium >/dev/null; }
# A fresh machine has no package lists (or stale ones): update, then retry once.
if ! apt_install; then
    apt-get update -q >/dev/null
    apt_install
fi
command -v chromium >/dev/null || { echo "install.sh: chromium still missing" >&2; exit 1; }
