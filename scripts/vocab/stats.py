#!/usr/bin/env python3
"""Writes docs/site-tables.md from the error-site tables (rules/sites/*.tsv): the header facts
of each table (repo, release, commit, date of extraction), counts per project (rows, sites,
classified, unclassified, hints), a table of taxonomy ids per project, the counts per id over
all projects and the rows per rule of the classification procedure (the `why` column). Run it
after building or rebuilding a table:

    scripts/vocab/stats.py                       (from the repository root)
    scripts/vocab/stats.py --sites DIR --out FILE

A table (written by scripts/vocab/build_table.py) is `# key: value` header lines, then one row
a line with the tab-separated columns origin, site, level, cause, why, form, template, where
`\\t`, `\\n` and `\\\\` stand for a tab, a newline and a backslash. Rows with one origin are
forms of one site.
"""
import argparse
import collections
import glob
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLUMNS = ("origin", "site", "level", "cause", "why", "form", "template")
HEADER_FACTS = ("repo", "release", "commit", "extracted")


def unescape(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append({"t": "\t", "n": "\n", "\\": "\\"}.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def read_table_text(text):
    """{"header": {key: value}, "rows": [{column: value}], "bad": [line numbers]}."""
    header, rows, bad = {}, [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                header.setdefault(key.strip(), value.strip())
            continue
        cols = line.split("\t")
        if len(cols) != len(COLUMNS):
            bad.append(n)
            continue
        rows.append({k: unescape(v) for k, v in zip(COLUMNS, cols)})
    return {"header": header, "rows": rows, "bad": bad}


def read_tables(folder):
    """One table per project: the parts of a table split over several files are one."""
    tables = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            t = read_table_text(f.read())
        project = t["header"].get("project") or os.path.splitext(os.path.basename(path))[0]
        if project in tables:
            tables[project]["files"].append(path)
            tables[project]["rows"] += t["rows"]
            tables[project]["bad"] += t["bad"]
            continue
        t["files"] = [path]
        t["project"] = project
        tables[project] = t
    return [tables[p] for p in sorted(tables, key=lambda p: tables[p]["files"][0])]


def counts(rows):
    sites = {r["origin"] for r in rows}
    classified = [r for r in rows if r["cause"] != "unclassified"]
    return {
        "rows": len(rows),
        "sites": len(sites),
        "classified": len(classified),
        "unclassified": len(rows) - len(classified),
        "hints": sum(1 for r in rows if r["level"] == "hint"),
        "classified_sites": len({r["origin"] for r in classified}),
    }


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(tables, sites_rel):
    intro = ("Every place a program of the GPU stack raises or logs an error, read from its source "
             "(`scripts/vocab/extract.py`) and given a taxonomy id by the written procedure of "
             "`scripts/vocab/CLASSIFICATION.md` (`scripts/vocab/classify.py`); one table per project and "
             "release in `%s` (the format: `docs/vocabularies.md`). A row is one form of a site's message; "
             "a site with several forms has several rows. `unclassified` rows name no root cause: a failure "
             "they mark is reported with the program's own words, project, file and line. Hints are "
             "warnings: they tell what a failure means, but an input that ends with one has not failed." % sites_rel)
    out = ["# Error-site tables", ""] + textwrap.wrap(intro, 100, break_on_hyphens=False) + [
           "", "Written by `scripts/vocab/stats.py`; run it after building a table.", ""]
    if not tables:
        out += ["No tables yet.", ""]
        return "\n".join(out)

    out += ["## Tables", "",
            "| project | repo | release | commit | extracted | files |",
            "|---|---|---|---|---|---|"]
    for t in tables:
        h = t["header"]
        out.append("| `%s` | %s | %s | `%s` | %s | %s |" % (
            cell(t["project"]), cell(h.get("repo", "")), cell(h.get("release", "")),
            cell(h.get("commit", "")[:12]), cell(h.get("extracted", "")),
            ", ".join("`%s`" % cell(os.path.join(sites_rel, os.path.basename(f))) for f in t["files"])))
    bad = [(t, t["bad"]) for t in tables if t["bad"]]
    if bad:
        out += [""] + ["Rows with the wrong number of columns, left out: `%s` lines %s." % (
            ", ".join(os.path.basename(f) for f in t["files"]), ", ".join(map(str, b[:10])) + (" ..." if len(b) > 10 else ""))
            for t, b in bad]

    out += ["", "## Per project", "",
            "Sites are distinct origins; classified rows carry a taxonomy id.", "",
            "| project | rows | sites | classified | unclassified | hints | classified share |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    total = collections.Counter()
    for t in tables:
        c = counts(t["rows"])
        total.update(c)
        share = "%.1f%%" % (100.0 * c["classified"] / c["rows"]) if c["rows"] else "-"
        out.append("| `%s` | %d | %d | %d | %d | %d | %s |" % (
            cell(t["project"]), c["rows"], c["sites"], c["classified"], c["unclassified"], c["hints"], share))
    share = "%.1f%%" % (100.0 * total["classified"] / total["rows"]) if total["rows"] else "-"
    out.append("| all | %d | %d | %d | %d | %d | %s |" % (
        total["rows"], total["sites"], total["classified"], total["unclassified"], total["hints"], share))

    out += ["", "## Per id", "",
            "Over all projects: rows, sites, hint rows, the projects with a row of the id and the rows of each.", "",
            "| id | rows | sites | hints | projects | rows per project |",
            "|---|---:|---:|---:|---:|---|"]
    by_id = collections.defaultdict(list)
    for t in tables:
        for r in t["rows"]:
            by_id[r["cause"]].append((t["project"], r))
    order = sorted(by_id, key=lambda c: (c == "unclassified", -len(by_id[c]), c))
    for cause in order:
        items = by_id[cause]
        per = collections.Counter(p for p, _ in items)
        out.append("| `%s` | %d | %d | %d | %d | %s |" % (
            cell(cause), len(items), len({(p, r["origin"]) for p, r in items}),
            sum(1 for _, r in items if r["level"] == "hint"), len(per),
            ", ".join("%s %d" % (p, n) for p, n in sorted(per.items(), key=lambda x: (-x[1], x[0])))))

    out += ["", "## Ids per project", ""]
    for t in tables:
        c = collections.Counter(r["cause"] for r in t["rows"])
        s = collections.defaultdict(set)
        h = collections.Counter()
        for r in t["rows"]:
            s[r["cause"]].add(r["origin"])
            if r["level"] == "hint":
                h[r["cause"]] += 1
        out += ["### `%s`" % cell(t["project"]), "",
                "| id | rows | sites | hints |", "|---|---:|---:|---:|"]
        for cause in sorted(c, key=lambda k: (k == "unclassified", -c[k], k)):
            out.append("| `%s` | %d | %d | %d |" % (cell(cause), c[cause], len(s[cause]), h[cause]))
        out.append("")

    out += ["## Rows per rule", "",
            "The `why` column: which rule of the procedure decided (the first place to look when reviewing "
            "a table; `scripts/vocab/CLASSIFICATION.md` says how).", "",
            "| rule (why) | id | rows | projects |", "|---|---|---:|---:|"]
    by_why = collections.defaultdict(list)
    for t in tables:
        for r in t["rows"]:
            by_why[(r["why"], r["cause"])].append(t["project"])
    for (why, cause), projects in sorted(by_why.items(), key=lambda x: (x[0][1] == "unclassified", -len(x[1]), x[0])):
        out.append("| %s | `%s` | %d | %d |" % (cell(why), cell(cause), len(projects), len(set(projects))))
    out.append("")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write docs/site-tables.md from rules/sites/*.tsv.")
    ap.add_argument("--sites", default=os.path.join(ROOT, "rules", "sites"), help="folder of the tables")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "site-tables.md"), help="page to write")
    a = ap.parse_args(argv)
    tables = read_tables(a.sites)
    try:
        sites_rel = os.path.relpath(a.sites, ROOT)
    except ValueError:
        sites_rel = a.sites
    if sites_rel.startswith(".."):
        sites_rel = "rules/sites"
    page = render(tables, sites_rel)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(page)
    rows = sum(len(t["rows"]) for t in tables)
    print("%s: %d tables, %d rows" % (os.path.relpath(a.out, os.getcwd()), len(tables), rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
