#!/usr/bin/env bash
# Installs the system parts the test suite drives for real: Debian's headless Chromium (browser tests),
# bubblewrap (the sandbox that seals each cell, docs/security.md) and a Docker engine with a local Python base image (docker backend tests). Idempotent. Needs root
# for apt; without root it only reports what is missing, and the tests that need it say so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-system: installing ${missing[*]} (Debian packages)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "ensure-system: missing ${missing[*]}; install them (apt-get install ${missing[*]}) for the browser and sandbox tests"
  fi
fi

if [ -x "$here/docker-setup.sh" ] || [ -f "$here/docker-setup.sh" ]; then
  bash "$here/docker-setup.sh"
fi
