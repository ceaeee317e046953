#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing triage need. Idempotent.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang python3 pkg-config zlib1g-dev libre2-dev libsimdjson-dev
      libsqlite3-dev libboost-dev libtomlplusplus-dev libgtest-dev libgmock-dev ripgrep
      libpq-dev postgresql-15 dpkg-dev python3-yaml zsh fish prometheus libssl-dev
      prometheus-alertmanager)
# libpq-dev: the PostgreSQL store's client header (libpq5 is loaded only when a postgresql://
# store is used); postgresql-15: the server the store's tests start in a temporary folder.
# dpkg-dev: cpack's DEB generator finds the package's dependencies with dpkg-shlibdeps.
# python3-yaml, zsh, fish: the tests parse the DaemonSet manifest and check the completions.
# prometheus: the metrics tests start a real Prometheus server and run promtool.
# libssl-dev: OpenSSL, the TLS of https webhooks (libssl3 at run time).
# prometheus-alertmanager: tests only; the notification tests start a real Alertmanager.
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
