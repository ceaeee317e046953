#!/bin/sh
# On a GPU host: versions read from what the host's own tools print, and `--verify` filling a
# known bug's version from the host. Writes into OUT (first argument):
#   env.log        collect_env, nvidia-smi, nvcc --version and pip list of the interpreter, then a
#                  real traceback of that interpreter (torch.load of a missing file)
#   bare.log       the same traceback alone (no version shown)
#   env.json       `triage analyze --json env.log`: the versions it read
#   verify.json    `triage analyze --verify --json bare.log` with a base that holds one entry for
#                  that failure: the host's torch version decides it
# Usage: tests/gpu/live/known_bugs/run.sh BUNDLE OUT   (BUNDLE/bin holds triage and its libraries)
set -u
bundle=$1
out=$2
py=${PYTHON:-/opt/torch/.venv/bin/python}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
triage="$bundle/bin/triage"
{
  "$py" -m torch.utils.collect_env 2>&1
  nvidia-smi 2>&1 | head -5
  nvcc --version 2>&1 || /usr/local/cuda/bin/nvcc --version 2>&1
  "$py" -m pip list 2>/dev/null | grep -iE '^(torch|triton|jax|jaxlib|transformers|cupy|numpy) '
} >"$out/env.log"
"$py" -c "import torch; torch.load('/nonexistent/ckpt.pt')" >"$out/bare.log" 2>&1
cat "$out/bare.log" >>"$out/env.log"
"$triage" analyze --no-store --json "$out/env.log" >"$out/env.json"
rules="$out/rules"
mkdir -p "$rules/known_bugs"
cat >"$rules/known_bugs/check.toml" <<'TOML'
[[bug]]
id         = "check#1"
package    = "torch"
affected   = ">=2.0, <99"
fixed_in   = "99"
issue      = "https://example.org/check/1"
match      = ['''No such file or directory: .*/nonexistent/ckpt\.pt''']
summary    = "a stand-in entry for the failure this check provokes"
workaround = "none"
TOML
"$triage" analyze --no-store --json --rules "$rules" "$out/bare.log" >"$out/plain.json"
"$triage" analyze --no-store --json --verify --rules "$rules" "$out/bare.log" >"$out/verify.json"
"$py" - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
env = json.load(open(os.path.join(out, "env.json")))
print("versions read from env.log:")
for i in env["incidents"]:
    for v in i.get("versions", []):
        print("  %-14s %-22s line %s" % (v["package"], v["version"], v.get("line")))
for name in ("plain", "verify"):
    d = json.load(open(os.path.join(out, name + ".json")))
    for i in d["incidents"]:
        for c in i["causes"]:
            for kb in c.get("known_bugs", []):
                print("%s: %s %s %s version=%s from=%s" % (name, c["cause"], kb["id"], kb["status"],
                                                          kb["version"], kb["version_from"]))
        for v in i.get("versions", []):
            print("%s: version %s %s from %s (%s)" % (name, v["package"], v["version"], v["from"], v["source"]))
PY
