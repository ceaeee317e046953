#!/usr/bin/env python3
"""bench/percause.py: per root cause, truth incident groups against incidents reported, for a genlogs.py log.

    python3 bench/percause.py LOG TRUTH [TRIAGE] [--json REPORT] [--show CAUSE]

TRUTH is the sidecar of ../shared/bench/genlogs.py (--truth). One truth group is one incident; its
root cause is the group's `root_cause` (a taxonomy id, or `unclassified`). On triage's side an
incident counts once for each base id (the taxonomy id a reported root cause falls under, as in
recall.py, plus `unclassified`) among its root causes; symptoms do not count. Prints a table (cause,
truth, reported, difference) and exits 1 on any mismatch. --show CAUSE lists, for that base id, the
truth groups and the reported incidents by line range (for debugging the correlator).
"""
import argparse
import json
import os
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recall import base  # noqa: E402  (the same base ids as recall.py)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("truth")
    ap.add_argument("triage", nargs="?", default="build/recall/bin/triage")
    ap.add_argument("--json", help="read this report instead of running triage")
    ap.add_argument("--show", help="list the truth groups and reported incidents of this base id")
    a = ap.parse_args()

    groups = {}
    for line in open(a.truth, encoding="utf-8"):
        r = json.loads(line)
        if r.get("type") != "incident":
            continue
        g = groups.setdefault(r["group"], {"root": base(r["root_cause"]), "lo": r["first_line"],
                                           "hi": r["last_line"], "kinds": set()})
        g["lo"] = min(g["lo"], r["first_line"])
        g["hi"] = max(g["hi"], r["last_line"])
        g["kinds"].add(r["kind"])
    truth = Counter(g["root"] for g in groups.values())

    if a.json:
        doc = json.load(open(a.json))
    else:
        p = subprocess.run([a.triage, "analyze", "--no-store", "--json", "--threads", "1", a.log],
                           capture_output=True)
        if p.returncode not in (0, 1):
            sys.stderr.write(p.stderr.decode("utf-8", "replace"))
        doc = json.loads(p.stdout)

    reported = Counter()
    for inc in doc["incidents"]:
        for b in {base(c["cause"]) for c in inc["causes"]}:
            reported[b] += 1

    causes = sorted(set(truth) | set(reported))
    width = max([len("cause")] + [len(c) for c in causes])
    print("%-*s %6s %9s %6s" % (width, "cause", "truth", "reported", "diff"))
    bad = 0
    for c in causes:
        diff = reported[c] - truth[c]
        bad += diff != 0
        print("%-*s %6d %9d %+6d%s" % (width, c, truth[c], reported[c], diff, "" if diff == 0 else "  <"))
    print("%-*s %6d %9d %+6d" % (width, "total", sum(truth.values()), sum(reported.values()),
                                 sum(reported.values()) - sum(truth.values())))

    if a.show:
        print("\ntruth groups of %s:" % a.show)
        for gid, g in sorted(groups.items(), key=lambda x: x[1]["lo"]):
            if g["root"] == a.show:
                print("  group %s lines %d-%d %s" % (gid, g["lo"], g["hi"], ",".join(sorted(g["kinds"]))))
        print("reported incidents with %s:" % a.show)
        for inc in doc["incidents"]:
            if any(base(c["cause"]) == a.show for c in inc["causes"]):
                print("  lines %d-%d: %s" % (inc["first_line"], inc["last_line"], ", ".join(
                    "%s@%s" % (c["cause"], [e["line"] for e in c["evidence"]][:4]) for c in inc["causes"])))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
