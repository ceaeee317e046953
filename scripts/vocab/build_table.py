#!/usr/bin/env python3
"""Writes one error-site table, rules/sites/<project>.tsv, from a project's source.

    scripts/vocab/build_table.py PROJECT REPO SOURCE [--release TAG] [--commit SHA]
                                 [--under DIR ...] [--exclude GLOB ...] [--out FILE]
                                 [--keep TABLE]

SOURCE is a checkout (a folder) or a bare git folder (its HEAD is read through `git archive`).
Release and commit are read from SOURCE's git when not given (`git describe --tags`, HEAD).
--under limits the extraction to folders of the tree (PyTorch: c10 aten torch).
--exclude leaves out more files or folders, as extract.py's --exclude (globs matched against
"/" + the path under each --under folder, and against the file's name): files a snapshot changed
from its release, vendored code the default excludes do not know; say so in the --commit text.
--keep TABLE keeps the rows (and '# file:' lines) of an earlier table whose file SOURCE does not
have: a release's distribution (a wheel's Python sources and headers) read whole, beside C++ files
of the tree an earlier table read one by one; say both in --release.

A table over PART_BYTES (1.5 MB) is written in parts, <project>.tsv, <project>_2.tsv, ...: each
part has the whole header but the '# file:' lines, which go with the part holding the file's rows;
the engine reads the parts of a folder as one table. --keep reads every part of TABLE.

Every site that scripts/vocab/extract.py finds becomes one row per form, classified by
scripts/vocab/classify.py (its procedure: scripts/vocab/CLASSIFICATION.md). The engine reads the
format described in engine/core/include/triage/core/sites.h; `triage rules check` validates it.
"""
import argparse, datetime, glob, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extract  # noqa: E402
import classify  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def git(source, *args):
    bare = not os.path.isdir(os.path.join(source, ".git"))
    cmd = ["git", "--git-dir=" + source] if bare else ["git", "-C", source]
    return subprocess.run(cmd + list(args), capture_output=True, text=True).stdout.strip()


def escape(text):
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "")


SOURCE_SUFFIXES = (".py", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".go", ".rs")


def unpack(gitdir, under, into):
    """The source files of HEAD of a bare repository (under `under`, when given) into `into`.
    Read blob by blob, so that a snapshot whose largest files are absent still gives the rest."""
    listing = subprocess.run(["git", "--git-dir=" + gitdir, "ls-tree", "-r", "-z", "HEAD"] + list(under or []),
                             capture_output=True).stdout.split(b"\0")
    wanted = []
    for entry in listing:
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "replace")
        if kind == b"blob" and name.endswith(SOURCE_SUFFIXES):
            wanted.append((sha.decode(), name))
    batch = subprocess.Popen(["git", "--git-dir=" + gitdir, "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for sha, name in wanted:
        batch.stdin.write((sha + "\n").encode())
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        dest = os.path.join(into, name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
    batch.stdin.close()
    batch.wait()


# What the engine looks for at all (engine/core/src/sites.cpp): a form with less constant text
# holds for too many lines its site never printed.
MIN_PIECE, MIN_CONSTANT = 8, 16


def matchable(form):
    pieces = [p for p in form.split("{*}") if p]
    return pieces and max(map(len, pieces)) >= MIN_PIECE and sum(map(len, pieces)) >= MIN_CONSTANT


def rows_of(sites, project):
    seen = set()
    for s in sites:
        cause, why = classify.classify(s, project)
        for form in s["forms"]:
            if not matchable(form):
                continue
            key = (s["origin"], form)
            if key in seen:
                continue
            seen.add(key)
            yield [s["origin"], s["site"], s["level"], cause, why, form, s.get("template", "")[:300]]


def files_of(tree, under):
    """The source files of `tree` (under each of `under`), as paths from the tree's root."""
    present = set()
    for sub in (under or ["."]):
        for folder, _, names in os.walk(os.path.join(tree, sub)):
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    present.add(os.path.normpath(os.path.relpath(os.path.join(folder, name), tree)))
    return present


PART_BYTES = 1_500_000


def header_project(path):
    """The `# project:` of the table file at `path` ("" when it has none or cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.startswith("#"):
                    break
                if line.startswith("# project:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def stem_of(table):
    """`table`'s path without its .tsv."""
    return table[:-len(".tsv")] if table.endswith(".tsv") else table


def table_parts(table):
    """The files of the table written at `table` (<project>.tsv): it and its parts <project>_N.tsv,
    those whose header names the same project (another project may be called <project>_N)."""
    stem = stem_of(table)
    project = header_project(table) if os.path.exists(table) else ""
    parts = [p for p in glob.glob(glob.escape(stem) + "_*.tsv") if re.fullmatch(r"_\d+\.tsv", p[len(stem):])
             and (not project or header_project(p) == project)]
    return [table] + sorted(parts, key=lambda p: int(p[len(stem) + 1:-len(".tsv")]))


def write_parts(out, header, files, lines, part_bytes=PART_BYTES):
    """Writes a table of `header` lines (each ending in a newline; no '# file:' line), the '# file:'
    entries `files` ([path, commit]) and the row `lines` (escaped, no newline) at `out`, in parts of
    about `part_bytes` when larger (see the module's text); removes parts an earlier, larger table
    left. Returns the paths written."""
    chunks, size = [[]], 0
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        if chunks[-1] and size + n > part_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += n
    stem = stem_of(out)
    paths = [out] + ["%s_%d.tsv" % (stem, i + 1) for i in range(1, len(chunks))]
    owner = {}  # each file's part: the first that holds a row of it
    for i, chunk in enumerate(chunks):
        for line in chunk:
            owner.setdefault(line.split("\t", 1)[0].rsplit(":", 1)[0], i)
    for i, (path, chunk) in enumerate(zip(paths, chunks)):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(header)
            for name, commit in files:
                if owner.get(name, 0) == i:
                    f.write("# file: %s %s\n" % (name, commit))
            f.write("# columns: origin\tsite\tlevel\tcause\twhy\tform\ttemplate\n")
            for line in chunk:
                f.write(line + "\n")
    for stale in table_parts(out):
        if stale not in paths:
            os.remove(stale)
    return paths


def read_parts(table):
    """The table at `table`, all its parts read as one: its first part's header lines (with their
    newlines; no '# file:' or '# columns:' line), its '# file:' entries ([path, commit]) and its
    rows (as written, escaped, without the newline)."""
    header, files, rows = [], [], []
    for i, part in enumerate(table_parts(table)):
        with open(part, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# file: "):
                    files.append(line[len("# file: "):].split()[:2])
                elif line.startswith("# columns:"):
                    continue
                elif line.startswith("#") or not line.strip():
                    if i == 0:
                        header.append(line)
                else:
                    rows.append(line.rstrip("\n"))
    return header, files, rows


def kept_rows(table, present):
    """The '# file:' entries and rows (split into columns) of `table` (all its parts) whose file is
    not in `present`."""
    _, files, rows = read_parts(table)
    cols = [r.split("\t") for r in rows]
    return ([f for f in files if f[0] not in present],
            [c for c in cols if c[0].rsplit(":", 1)[0] not in present])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("project")
    ap.add_argument("repo")
    ap.add_argument("source")
    ap.add_argument("--release")
    ap.add_argument("--commit")
    ap.add_argument("--under", nargs="*", default=[])
    ap.add_argument("--exclude", nargs="*", default=[])
    ap.add_argument("--out")
    ap.add_argument("--keep", help="an earlier table: its rows of files SOURCE lacks are kept")
    ap.add_argument("--manifest", help="SOURCE is part of a tree: a file of lines 'path<TAB>commit' "
                    "naming each file and the commit it was read at (written into the header)")
    a = ap.parse_args()
    manifest = []
    if a.manifest:
        with open(a.manifest) as f:
            manifest = [l.rstrip("\n").split("\t")[:2] for l in f if l.strip()]
        a.release = a.release or "part of the tree: %d files, each at the commit its '# file:' line names" % len(manifest)
        a.commit = a.commit or "per file (below)"
    release = a.release or git(a.source, "describe", "--tags", "HEAD") or "untagged"
    commit = a.commit or git(a.source, "rev-parse", "HEAD")
    with tempfile.TemporaryDirectory() as tmp:
        tree = a.source
        if not os.path.isdir(os.path.join(a.source, ".git")) and os.path.exists(os.path.join(a.source, "HEAD")):
            unpack(a.source, a.under, tmp)
            tree = tmp
        sites = []
        for sub in (a.under or ["."]):
            part = extract.extract_tree(os.path.join(tree, sub), excludes=a.exclude)
            for s in part:
                if sub != ".":
                    s["origin"] = os.path.normpath(os.path.join(sub, s["origin"]))
            sites.extend(part)
        kept_files, kept = kept_rows(a.keep, files_of(tree, a.under)) if a.keep else ([], [])
    manifest += kept_files
    sites.sort(key=lambda s: (s["origin"].rsplit(":", 1)[0], int(s["origin"].rsplit(":", 1)[1])))
    rows = list(rows_of(sites, a.project))
    out = a.out or os.path.join(ROOT, "rules", "sites", a.project + ".tsv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    keys = sorted({(r[3] + (":hint" if r[2] == "hint" else "")) for r in rows + kept
                   if not (r[2] == "hint" and r[3] == "unclassified")})
    header = [
        "# The error sites of %s: every place its source raises or logs an error, with the\n" % a.repo,
        "# message as a log shows it and the taxonomy id scripts/vocab/classify.py gave it.\n",
        "# project: %s\n# repo: %s\n# release: %s\n# commit: %s\n" % (a.project, a.repo, release, commit),
        "# extracted: %s by scripts/vocab/build_table.py%s\n" % (
            datetime.date.today().isoformat(), (" --under " + " ".join(a.under)) if a.under else ""),
        "# causes: %s\n" % " ".join(keys)]
    write_parts(out, header, manifest, ["\t".join(escape(c) for c in r) for r in rows] + ["\t".join(r) for r in kept])
    causes = {}
    for r in rows + kept:
        causes[r[3]] = causes.get(r[3], 0) + 1
    print("%s: %d rows from %d sites (%s)" % (os.path.relpath(out, ROOT) if out.startswith(ROOT) else out,
          len(rows), len(sites), ", ".join("%s %d" % kv for kv in sorted(causes.items(), key=lambda x: -x[1]))))


if __name__ == "__main__":
    main()
