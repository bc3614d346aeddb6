#!/usr/bin/env bash
# Installs the Debian packages the browser tests need when they are missing:
# chromium (+ driver) for Playwright, and Noto CJK fonts so Japanese screenshots are legible.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then need+=(fonts-noto-cjk); fi
if [ ${#need[@]} -eq 0 ]; then
  echo "system deps: chromium and CJK fonts present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "system deps missing (${need[*]}); install them with: sudo apt-get install -y ${need[*]}" >&2
  echo "(the browser tests skip without them, and fail under CI=true: tests/helpers/ci_skips.py)" >&2
  exit 0
fi
echo "installing ${need[*]} from Debian ..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" fontconfig >/dev/null
echo "system deps: installed ${need[*]}"
