#!/usr/bin/env bash
# Installs the Debian 12 packages triage needs. Idempotent.
#
#   scripts/deps.sh           what building and running need (the README's first command)
#   scripts/deps.sh --tests   those, and what the test suite adds (the README's test command)
#   --list                    print the packages, one a line, and install nothing
set -euo pipefail

tests=0
list=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "deps.sh: unknown option '$arg' (--tests, --list)" >&2; exit 2 ;;
  esac
done

# Building and running. The release preset builds the test programs too, so GoogleTest is here.
# libpq-dev: the PostgreSQL store's client header (libpq5 is loaded only when a postgresql://
# store is used). dpkg-dev: cpack's DEB generator finds the package's dependencies with
# dpkg-shlibdeps (README, "Install").
run=(cmake ninja-build g++ pkg-config zlib1g-dev libre2-dev libsimdjson-dev libsqlite3-dev
     libboost-dev libtomlplusplus-dev libgtest-dev libgmock-dev libpq-dev dpkg-dev libssl-dev)
# Hyperscan (the fast literal prefilter) is packaged for amd64 only; triage builds without it.
[ "$(dpkg --print-architecture)" = amd64 ] && run+=(libhyperscan-dev)

# What the tests add; none of it is needed to build or run triage.
# postgresql-15: the server the store's tests start in a temporary folder.
# prometheus: the metrics tests start a real Prometheus server and run promtool.
# prometheus-alertmanager: the notifier's tests deliver to a real Alertmanager.
# chromium, fonts-dejavu-core: the page's tests load `triage serve` in a headless browser and
#   keep screenshots (the font so that the text in them is drawn).
# lintian: the package test checks the .deb with it.
# python3, python3-yaml, zsh, fish: the tests parse the DaemonSet manifest and check the
#   completions; ripgrep and clang: the benchmarks' peer and the fuzz preset's compiler.
test_only=(postgresql-15 prometheus prometheus-alertmanager chromium fonts-dejavu-core lintian
           python3 python3-yaml zsh fish ripgrep clang)

pkgs=("${run[@]}")
[ "$tests" -eq 1 ] && pkgs+=("${test_only[@]}")
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${pkgs[@]}"
  exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
