#!/usr/bin/env bash
# The Debian package as a user gets it: cpack -G DEB from the build folder, its listing and
# control fields, and the binary unpacked into a folder of its own, run with an empty
# environment, finding its rules beside itself.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR [CPACK]
set -euo pipefail
build=$1 source=$2 cpack=${3:-cpack}
work=$(mktemp -d "${TMPDIR:-/tmp}/triage-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB"; }
debs=("$work"/out/triage_*.deb)
[ -f "${debs[0]}" ] || fail "no triage_*.deb in $(ls "$work/out")"
deb=${debs[0]}

dpkg-deb -c "$deb" | awk '{print $6}' >"$work/files"
for f in ./usr/bin/triage ./usr/share/triage/rules/cuda.toml ./usr/share/triage/rules/taxonomy.toml \
         ./usr/share/man/man1/triage.1 ./usr/share/bash-completion/completions/triage \
         ./usr/share/zsh/vendor-completions/_triage ./usr/share/fish/vendor_completions.d/triage.fish \
         ./usr/lib/systemd/system/triage.service ./usr/lib/sysusers.d/triage.conf \
         ./usr/share/doc/triage/README.md ./usr/share/doc/triage/service.md \
         ./usr/share/doc/triage/rules.md ./usr/share/doc/triage/examples/config.toml \
         ./usr/share/doc/triage/docs/rule-format.md; do
  grep -qx -- "$f" "$work/files" || fail "$f is not in the package"
done
shipped=$(ls "$source"/rules/*.toml "$source"/rules/sites/*.toml "$source"/rules/sites/*.tsv "$source"/rules/known_bugs/*.toml | wc -l)
packed=$(grep -cE '^\./usr/share/triage/rules/.*\.(toml|tsv)$' "$work/files")
[ "$shipped" -eq "$packed" ] || fail "$packed rule files packed, $shipped shipped"
# Nothing beside the binary: libsimdjson comes from its Debian package.
! grep -q 'libsimdjson' "$work/files" || fail "the package carries libsimdjson"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libsimdjson14* ]] || fail "Depends lacks libsimdjson14: $depends"
[[ $(dpkg-deb -f "$deb" Package) == triage ]] || fail "package name"

dpkg-deb -x "$deb" "$work/root"
bin=$work/root/usr/bin/triage
unit=$work/root/usr/lib/systemd/system/triage.service
grep -qx 'Documentation=man:triage(1) file:///usr/share/doc/triage/service.md' "$unit" || fail "unit Documentation="
grep -q '^ExecStart=/usr/bin/triage watch ' "$unit" || fail "unit ExecStart= is not the packaged binary"
cmp -s "$work/root/usr/share/man/man1/triage.1" <(env -i "$bin" --help-man) || fail "triage.1 differs from --help-man"

# Unpacked anywhere, with no environment: the rules beside the binary, the example's cause first.
example=$source/examples/sglang-blackwell/sglang-server.log
report=$(cd "$work" && env -i "$bin" analyze --no-store --json "$example") || fail "analyze exited $?"
first=$(grep -o '"cause":"[^"]*"' <<<"$report" | head -n 1)
[ "$first" = '"cause":"cuda.toolkit_too_old_for_arch"' ] || fail "first cause is $first"
env -i "$bin" rules list >"$work/rules"
grep -q " $work/root/usr/share/triage/rules/cuda.toml:" "$work/rules" || fail "rules not read from beside the binary"
! grep -q " $source/rules/" "$work/rules" || fail "rules read from the source tree"
echo "ok: $(basename "$deb"), $(wc -l <"$work/files") entries, Depends: $depends"
