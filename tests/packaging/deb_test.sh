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
         ./usr/share/man/man1/triage.1.gz ./usr/share/bash-completion/completions/triage \
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
cmp -s <(gzip -dc "$work/root/usr/share/man/man1/triage.1.gz") <(env -i "$bin" --help-man) || fail "triage.1 differs from --help-man"

# Unpacked anywhere, with no environment: the rules beside the binary, the example's cause first.
example=$source/examples/sglang-blackwell/sglang-server.log
report=$(cd "$work" && env -i "$bin" analyze --no-store --json "$example") || fail "analyze exited $?"
first=$(grep -o '"causes":\[{"cause":"[^"]*"' <<<"$report" | head -n 1)
[ "$first" = '"causes":[{"cause":"cuda.toolkit_too_old_for_arch"' ] || fail "first cause is $first"
env -i "$bin" rules list >"$work/rules"
grep -q " $work/root/usr/share/triage/rules/cuda.toml:" "$work/rules" || fail "rules not read from beside the binary"
! grep -q " $source/rules/" "$work/rules" || fail "rules read from the source tree"
# The copyright file Debian's policy asks for, and a stripped binary.
grep -qx './usr/share/doc/triage/copyright' "$work/files" || fail "no /usr/share/doc/triage/copyright"
! file -L "$bin" | grep -q 'not stripped' || fail "the binary is not stripped: $(file -L "$bin")"

# Removal stops the service: prerm remove asks systemd (through deb-systemd-invoke, here a
# stand-in that notes its arguments) to stop triage.service; an upgrade leaves it running. Run
# where /run/systemd/system exists, as on a booted systemd host (a tmpfs over /run in a mount
# namespace of its own; skipped without the privilege for one).
dpkg-deb -e "$deb" "$work/control"
[ -x "$work/control/prerm" ] || fail "the package has no prerm"
mkdir "$work/fakebin"
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$work/invoked" >"$work/fakebin/deb-systemd-invoke"
chmod +x "$work/fakebin/deb-systemd-invoke"
in_systemd() {
  unshare -m --propagation private sh -c \
    'mount -t tmpfs none /run && mkdir -p /run/systemd/system && PATH="$1:$PATH" sh "$2" "$3" "$4"' \
    sh "$work/fakebin" "$work/control/prerm" "$@"
}
if unshare -m true 2>/dev/null; then
  : >"$work/invoked"
  in_systemd remove "" || fail "prerm remove exited $?"
  [ "$(cat "$work/invoked")" = "stop triage.service" ] || fail "prerm remove: '$(cat "$work/invoked")', not a stop"
  : >"$work/invoked"
  in_systemd upgrade 0.9.0 || fail "prerm upgrade exited $?"
  [ ! -s "$work/invoked" ] || fail "prerm upgrade stopped the service: $(cat "$work/invoked")"
else
  echo "note: no mount namespace here; prerm's stop not run"
fi

# lintian, where installed (the test set-up may `apt-get install lintian`): no error, no warning.
if command -v lintian >/dev/null; then
  lintian --fail-on error,warning "$deb" >"$work/lintian" 2>&1 || { cat "$work/lintian" >&2; fail "lintian"; }
  echo "lintian: $(grep -c . "$work/lintian" || true) notes, no error or warning"
else
  echo "note: lintian is not installed; not run"
fi
echo "ok: $(basename "$deb"), $(wc -l <"$work/files") entries, Depends: $depends"
