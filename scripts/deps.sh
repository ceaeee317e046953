#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing triage need. Idempotent.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang python3 pkg-config zlib1g-dev libre2-dev libsimdjson-dev
      libsqlite3-dev libboost-dev libtomlplusplus-dev libgtest-dev libgmock-dev ripgrep
      prometheus)  # the metrics tests start a real Prometheus server and run promtool
# Hyperscan (the fast literal prefilter) is packaged for amd64 only; triage builds without it.
[ "$(dpkg --print-architecture)" = amd64 ] && pkgs+=(libhyperscan-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
