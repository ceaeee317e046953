#!/usr/bin/env python3
"""bench/recall.py: incident recall and decoy check of `triage analyze` against a genlogs.py log.

    python3 bench/recall.py LOG TRUTH [TRIAGE] [--misses N] [--json REPORT]

TRUTH is the sidecar of ../shared/bench/genlogs.py (--truth). Truth incidents are grouped by
"group"; a group whose root cause is a taxonomy id is *found* when some reported root cause with
that base id has an evidence line inside the group's [first_line, last_line] (the lenient count,
as /tmp/recall.py had it) and, for the strict count, on one of the group's own lines (what
bench/analyze.sh checks). A decoy line (a prompt quoting an error) reported as the evidence of a
cause or of a symptom is counted as a false one. Prints one summary line, then up to N misses
with the reported incidents that overlap them (for debugging the correlator). Exit status 1 when
a group is missed (strictly) or a decoy is evidence.
"""
import argparse
import json
import subprocess
import sys
from collections import Counter

TAXONOMY = ["cuda.toolkit_too_old_for_arch", "cuda.no_kernel_image", "cuda.driver_too_old", "lib.arch_unsupported",
            "cuda.oom", "host.oom_killed", "python.symbol_missing", "python.module_missing", "native.undefined_symbol",
            "native.lib_not_found", "jit.build_failed", "cuda.illegal_memory_access", "nccl.failure",
            "gpu.hardware_fault", "net.port_in_use"]


def base(cause):
    for t in TAXONOMY + ["unclassified"]:
        if cause == t or cause.startswith(t + "."):
            return t
    return cause


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("truth")
    ap.add_argument("triage", nargs="?", default="build/recall/bin/triage")
    ap.add_argument("--misses", type=int, default=0, help="show this many misses")
    ap.add_argument("--json", help="read this report instead of running triage")
    a = ap.parse_args()

    groups, decoys = {}, set()
    for line in open(a.truth, encoding="utf-8"):
        r = json.loads(line)
        if r.get("type") == "incident":
            g = groups.setdefault(r["group"], {"root": r["root_cause"], "kind": r["kind"], "lines": set(),
                                               "lo": r["first_line"], "hi": r["last_line"]})
            g["lines"].update(r["lines"])
            g["lo"] = min(g["lo"], r["first_line"])
            g["hi"] = max(g["hi"], r["last_line"])
        elif r.get("type") == "hard_case" and r.get("kind") == "decoy_prompt":
            decoys.add(r["line"])

    if a.json:
        doc = json.load(open(a.json))
    else:
        p = subprocess.run([a.triage, "analyze", "--no-store", "--json", "--threads", "1", a.log],
                           capture_output=True)
        doc = json.loads(p.stdout)

    causes = []  # (base id, evidence lines, incident)
    decoy_hits = []
    for inc in doc["incidents"]:
        for c in inc["causes"]:
            lines = [e["line"] for e in c["evidence"]]
            causes.append((base(c["cause"]), lines, inc))
            for s in c.get("symptoms", []):
                lines = lines + [e["line"] for e in s["evidence"]]
            decoy_hits += [(c["cause"], l) for l in lines if l in decoys]

    want = [g for g in groups.values() if g["root"] in TAXONOMY]
    found_lenient = found_strict = 0
    missed = []
    for g in want:
        ours = [(b, ls) for b, ls, _ in causes if b == g["root"]]
        if any(g["lo"] <= l <= g["hi"] for _, ls in ours for l in ls):
            found_lenient += 1
        if any(l in g["lines"] for _, ls in ours for l in ls):
            found_strict += 1
        else:
            missed.append(g)
    print("groups %d found %d (strict %d) missed %d; decoys %d, as evidence %d; incidents reported %d"
          % (len(want), found_lenient, found_strict, len(missed), len(decoys), len(decoy_hits),
             len(doc["incidents"])))
    kinds = Counter((g["root"], g["kind"]) for g in missed)
    if kinds:
        print("  missed by kind:", dict(kinds))
    for g in missed[:a.misses]:
        print("  missed %s (%s) lines %d-%d" % (g["root"], g["kind"], g["lo"], g["hi"]))
        for inc in doc["incidents"]:
            if inc["first_line"] <= g["hi"] and inc["last_line"] >= g["lo"]:
                print("    overlapping incident %d-%d: %s" % (
                    inc["first_line"], inc["last_line"],
                    ", ".join("%s@%s" % (c["cause"], [e["line"] for e in c["evidence"]][:4]) for c in inc["causes"])))
    for c, l in decoy_hits[:10]:
        print("  decoy line %d reported as evidence of %s" % (l, c))
    sys.exit(1 if missed or decoy_hits else 0)


if __name__ == "__main__":
    main()
