"""Tests of the parts a large error-site table is written in (build_table.write_parts,
split_table.py): every row and '# file:' line kept once, each part a whole table, stale parts
removed, and --keep reading all the parts.

    python3 -m unittest discover -s scripts/vocab/tests -t scripts/vocab   (from the repository root)
"""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import build_table  # noqa: E402
import split_table  # noqa: E402

HEADER = ["# project: demo\n", "# repo: example/demo\n", "# release: v1\n", "# commit: abc\n",
          "# causes: config.invalid unclassified\n"]


def rows(n):
    return ["demo/f%d.py:%d\traise ValueError\terror\tunclassified\tdefault\tMessage number %d of the demo\tx"
            % (i // 10, i, i) for i in range(n)]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


class WritePartsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "demo.tsv")
        self.files = [["demo/f%d.py" % i, "c%d" % i] for i in range(10)] + [["demo/empty.py", "ce"]]

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_small_table_is_one_file(self):
        paths = build_table.write_parts(self.out, HEADER, self.files, rows(20))
        self.assertEqual(paths, [self.out])
        self.assertEqual(build_table.table_parts(self.out), [self.out])

    def test_a_large_table_is_split_and_loses_nothing(self):
        lines = rows(100)
        paths = build_table.write_parts(self.out, HEADER, self.files, lines, part_bytes=2000)
        self.assertGreater(len(paths), 2)
        self.assertEqual(build_table.table_parts(self.out), paths)
        self.assertEqual(paths[1], os.path.join(self.tmp.name, "demo_2.tsv"))
        got_rows, got_files = [], []
        for p in paths:
            text = read(p)
            self.assertEqual(text[:5], [h.rstrip("\n") for h in HEADER])  # every part a whole table
            self.assertLess(sum(len(l) + 1 for l in text if not l.startswith("#")), 2000 + 200)
            got_rows += [l for l in text if not l.startswith("#")]
            got_files += [l for l in text if l.startswith("# file: ")]
            # a part's '# file:' lines name files whose first row it holds (or none, in the first part)
            for f in (l.split()[2] for l in text if l.startswith("# file: ")):
                if f != "demo/empty.py":
                    self.assertTrue(any(r.startswith(f + ":") for r in text if not r.startswith("#")), (p, f))
        self.assertEqual(got_rows, lines)
        self.assertEqual(sorted(got_files), sorted("# file: %s %s" % tuple(f) for f in self.files))
        self.assertIn("# file: demo/empty.py ce", read(paths[0]))

    def test_a_smaller_table_removes_the_parts_it_no_longer_needs(self):
        build_table.write_parts(self.out, HEADER, self.files, rows(100), part_bytes=2000)
        build_table.write_parts(self.out, HEADER, self.files, rows(5), part_bytes=2000)
        self.assertEqual(build_table.table_parts(self.out), [self.out])
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "demo_2.tsv")))

    def test_the_limit_counts_bytes(self):
        lines = ["demo/u.py:%d\traise X\terror\tunclassified\tdefault\t%s\tx" % (i, "é" * 40) for i in range(40)]
        paths = build_table.write_parts(self.out, HEADER, self.files, lines, part_bytes=1000)
        for p in paths:
            with open(p, "rb") as f:
                rows = [l for l in f.read().split(b"\n") if l and not l.startswith(b"#")]
            self.assertLessEqual(sum(len(r) + 1 for r in rows), 1000)

    def test_another_projects_table_named_like_a_part_is_left_alone(self):
        other = os.path.join(self.tmp.name, "demo_12.tsv")
        with open(other, "w", encoding="utf-8") as f:
            f.write("# project: demo_12\n# columns: origin\n")
        build_table.write_parts(self.out, HEADER, self.files, rows(100), part_bytes=2000)
        build_table.write_parts(self.out, HEADER, self.files, rows(5), part_bytes=2000)
        self.assertTrue(os.path.exists(other))
        self.assertEqual(build_table.table_parts(self.out), [self.out])

    def test_a_part_numbered_out_of_order_is_removed_not_the_new_one(self):
        stray = os.path.join(self.tmp.name, "demo_1.tsv")
        with open(stray, "w", encoding="utf-8") as f:
            f.writelines(HEADER)
        paths = build_table.write_parts(self.out, HEADER, self.files, rows(100), part_bytes=2000)
        self.assertFalse(os.path.exists(stray))
        for p in paths:
            self.assertTrue(os.path.exists(p))

    def test_keep_reads_every_part(self):
        build_table.write_parts(self.out, HEADER, self.files, rows(100), part_bytes=2000)
        files, kept = build_table.kept_rows(self.out, {"demo/f0.py"})
        self.assertEqual(len(kept), 90)
        self.assertEqual(len(files), 10)

    def test_split_table_rewrites_a_table_in_parts_with_the_same_rows(self):
        build_table.write_parts(self.out, HEADER, self.files, rows(100))
        before = read(self.out)
        paths, n = split_table.split(self.out, part_bytes=3000)
        self.assertEqual(n, 100)
        self.assertGreater(len(paths), 1)
        after = [l for p in paths for l in read(p)]
        self.assertEqual([l for l in after if not l.startswith("#")], [l for l in before if not l.startswith("#")])
        paths, n = split_table.split(self.out)  # and back into one file (its '# file:' lines in part order)
        self.assertEqual(paths, [self.out])
        self.assertEqual(sorted(read(self.out)), sorted(before))


if __name__ == "__main__":
    unittest.main()
