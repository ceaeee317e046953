#!/usr/bin/env python3
"""Scores triage on failed multi-rank jobs (tests/data/jobs): for each job, the root cause and
the first failing rank, from torchrun's combined log and from the per-rank files read together.

    bench/score_jobs.py TRIAGE [JOBS_DIR]

A job is right when the first incident's first cause has the labelled taxonomy id; its rank is
right when the incident names the labelled rank as its first actor, and the job is one incident.
"""
import json
import re
import os
import subprocess
import sys


def taxonomy_ids(root):
    """The taxonomy's ids, as rules/taxonomy.toml lists them."""
    with open(os.path.join(root, "rules", "taxonomy.toml")) as f:
        return re.findall(r'^id\s*=\s*"([^"]+)"', f.read(), re.M)


def taxonomy_id(cause, known):
    for k in sorted(known, key=len, reverse=True):
        if cause == k or cause.startswith(k + "."):
            return k
    return cause


def analyze(triage, paths):
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([triage, "analyze", "--no-store", "--json"] + paths, capture_output=True, env=env)
    if p.returncode not in (0, 1):
        return None
    return json.loads(p.stdout)


def verdict(doc, label, rank, known):
    if not doc or not doc.get("incidents"):
        return False, False, 0, "-", "-"
    inc = doc["incidents"]
    first = inc[0]
    cause = taxonomy_id(first["causes"][0]["cause"], known) if first.get("causes") else "-"
    actor = first.get("first_actor", "-")
    return cause == label, actor == "rank %d" % rank and len(inc) == 1, len(inc), cause, actor


def main():
    triage = sys.argv[1]
    known = taxonomy_ids(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    jobs = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "tests", "data", "jobs")
    totals = {"combined": [0, 0], "files": [0, 0]}
    n = 0
    with open(os.path.join(jobs, "cases.jsonl")) as f:
        cases = [json.loads(l) for l in f if l.strip()]
    for c in cases:
        n += 1
        d = os.path.join(jobs, c["id"])
        files = []
        for root, _, names in os.walk(os.path.join(d, "logs")):
            files += [os.path.join(root, x) for x in sorted(names) if x.endswith(".log") or x.endswith(".json")]
        for mode, paths in (("combined", [os.path.join(d, "combined.log")]), ("files", sorted(files))):
            if not paths:
                continue
            ok, rank_ok, k, cause, actor = verdict(analyze(triage, paths), c["labels"][0], c["first_rank"], known)
            totals[mode][0] += ok
            totals[mode][1] += rank_ok
            print("%-22s %-8s cause %-28s %s  first %-8s %s  incidents %d" % (
                c["id"], mode, cause, "ok  " if ok else "MISS", actor, "ok" if rank_ok else "MISS", k))
    for mode, (ok, rk) in totals.items():
        print("%s: root cause %d/%d, first rank %d/%d" % (mode, ok, n, rk, n))


if __name__ == "__main__":
    main()
