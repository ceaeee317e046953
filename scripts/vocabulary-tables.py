#!/usr/bin/env python3
"""Writes docs/vocabulary-tables.md from the vocabulary tables (rules/vocab_*.toml): each table's
id, source, version, row count and rows per taxonomy id. The core test suite checks that the page
names every table with its current row count, so run this after changing a table:

    scripts/vocabulary-tables.py            (from the repository root)
"""
import collections, glob, os, sys, tomllib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tables = []
for path in sorted(glob.glob(os.path.join(root, "rules", "vocab_*.toml"))):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    head = doc.get("vocabulary", {})
    rows = doc.get("row", [])
    causes = collections.Counter(r.get("cause", "") for r in rows)
    tables.append((os.path.relpath(path, root), head, rows, causes))

out = ["# Vocabulary tables", "",
       "The closed error lists triage reads as data (the format: `docs/vocabularies.md`). Each row of a",
       "table is one entry of its source, mapped to a taxonomy id with a remedy (`unclassified`: an",
       "error with no root-cause id of its own; a failure it marks is reported with its own words).",
       "Written by `scripts/vocabulary-tables.py`; the core tests check that this page names every",
       "table with its row count.", "",
       "| table | file | source | version | rows | rows per taxonomy id |",
       "|---|---|---|---|---:|---|"]
total = 0
for rel, head, rows, causes in tables:
    total += len(rows)
    per = ", ".join("%s %d" % (c, n) for c, n in sorted(causes.items(), key=lambda x: (-x[1], x[0])))
    src = head.get("source", "").replace("|", "\\|")
    url = head.get("source_url", "")
    out.append("| `%s` | `%s` | [%s](%s) | %s | %d | %s |" % (
        head.get("id", "?"), rel, src, url, head.get("version", "").replace("|", "\\|"), len(rows), per))
out += ["", "%d tables, %d rows." % (len(tables), total), ""]
with open(os.path.join(root, "docs", "vocabulary-tables.md"), "w") as f:
    f.write("\n".join(out))
print("docs/vocabulary-tables.md: %d tables, %d rows" % (len(tables), total))
