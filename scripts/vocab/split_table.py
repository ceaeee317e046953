#!/usr/bin/env python3
"""Rewrites an error-site table (rules/sites/<project>.tsv and any parts <project>_N.tsv) in parts
of at most about 1.5 MB, as build_table.py writes a large table, without reading the source again.

    scripts/vocab/split_table.py rules/sites/pytorch.tsv [--part-bytes N]

The header's lines stay in every part, each '# file:' line goes with the part that holds its
file's first row, and the rows keep their order.
"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_table  # noqa: E402


def split(table, part_bytes=build_table.PART_BYTES):
    header, files, rows = build_table.read_parts(table)
    return build_table.write_parts(table, header, files, rows, part_bytes), len(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table")
    ap.add_argument("--part-bytes", type=int, default=build_table.PART_BYTES)
    a = ap.parse_args(argv)
    paths, rows = split(a.table, a.part_bytes)
    print("%s: %d rows in %d part(s)" % (a.table, rows, len(paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
