#!/usr/bin/env python3
"""Gives the rows of existing error-site tables (rules/sites/*.tsv) the ids that classify.py gives
them now, without extracting again: after a change to the procedure (classify.py's RULES or
exceptions.tsv), this brings every table in line with it.

The rows of one site (same origin, site, level and template) are classified together, their
forms joined, as build_table.py does; the exception class comes from the site column ("raise X",
"throw X", "assert"); a site whose class only extraction saw keeps its id. Prints the rows whose id changes; --write rewrites the tables (the cause and
why columns and the header's causes line) and nothing else.

  scripts/vocab/reclassify.py rules/sites            # what would change
  scripts/vocab/reclassify.py rules/sites --write
"""
import argparse, collections, glob, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import classify  # noqa: E402
from stats import unescape  # noqa: E402

LANGS = {".py": "python", ".pyi": "python", ".go": "go", ".rs": "rust"}


def lang_of(path):
    ext = os.path.splitext(path)[1]
    return LANGS.get(ext, "cpp")


def exc_of(site):
    for head in ("raise ", "throw "):
        if site.startswith(head):
            return site[len(head):].strip()
    return "AssertionError" if site == "assert" else ""


def reclassify(path, write):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    project = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("# project:")), "")
    rows = [(i, l.split("\t")) for i, l in enumerate(lines) if l and not l.startswith("#")]
    sites = collections.OrderedDict()
    for i, cols in rows:
        origin, site, level, _, _, form, template = (cols + [""] * 7)[:7]
        sites.setdefault((origin, site, level, template), []).append((i, cols, unescape(form)))
    changed = 0
    for (origin, site, level, template), members in sites.items():
        row = {"origin": origin, "lang": lang_of(origin.rsplit(":", 1)[0]), "site": site,
               "level": level, "exc": exc_of(site), "template": unescape(template),
               "forms": [m[2] for m in members]}
        # A class the site column does not show (C10_THROW_ERROR(DistError, ...)) decided at
        # extraction: that decision stands.
        if not row["exc"] and all(m[1][4].startswith("class: ") for m in members):
            continue
        cause, why = classify.classify(row, project)
        for i, cols, form in members:
            if cols[3] != cause or cols[4] != why:
                if cols[3] != cause:
                    changed += 1
                    print("%s\t%s -> %s\t%s\t%s" % (os.path.basename(path), cols[3], cause, origin, form[:160]))
                cols[3], cols[4] = cause, why
                lines[i] = "\t".join(cols)
    if write:
        causes = {cols[3] + (":hint" if cols[2] == "hint" else "") for _, cols in rows
                  if not (cols[2] == "hint" and cols[3] == "unclassified")}  # as build_table.py
        for k, l in enumerate(lines):
            if l.startswith("# causes:"):
                lines[k] = "# causes: " + " ".join(sorted(causes))
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return changed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args(argv)
    total = sum(reclassify(p, a.write) for p in sorted(glob.glob(os.path.join(a.folder, "*.tsv"))))
    print("%d rows change id" % total, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
