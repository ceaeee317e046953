#!/usr/bin/env python3
"""Lists the places a project raises or logs an error, each with its message turned into forms.

    scripts/vocab/extract.py CHECKOUT [--lang python,cpp,go,rust] [--exclude GLOB ...]
                             [--no-default-excludes] [--jobs N] > sites.jsonl

CHECKOUT is a source tree (a folder). Each line of the output is one site, a JSON object:

    {"origin": "pkg/mod.py:123", "lang": "python", "site": "raise ValueError", "level": "error",
     "exc": "ValueError", "template": "f\\"Unknown quantization method: {method}\\"",
     "forms": ["Unknown quantization method:"]}

origin   the file (relative to CHECKOUT) and the line the site starts on
lang     python, cpp (C, C++, CUDA, Objective-C), go or rust
site     what raises or logs, as the source names it: "raise ValueError", "logger.error",
         "TORCH_CHECK", "LOG(ERROR)", "throw std::runtime_error", "fmt.Errorf", "bail!", ...
level    "error", or "hint" for warnings (warnings.warn, logger.warning, TORCH_WARN,
         LOG(WARNING), *_LOG_WARN, Go's Warn*, Rust's warn!)
exc      the exception or error class where the site names one (ValueError, c10::ValueError,
         std::runtime_error, InvalidArgument for an absl/tsl status, codes.NotFound), else ""
template the message expression as the source writes it, whitespace collapsed, at most 400 chars
         (for `raise X(msg)` the expression `msg` was assigned, when it could be resolved)
forms    the message as the log shows it, in the form language of docs/vocabularies.md: plain
         text where {*} stands for any text

Sites recognised
  Python  (the ast module; statements only: a call inside an expression is not a site)
          raise X(...) / raise X; assert cond, msg; logger.error/exception/critical/fatal and
          .warning/.warn (hint), also *_once, on a receiver named log, logger, logging, _logger,
          LOGGER, *_logger ... or logging.getLogger(...)/init_logger(...); warnings.warn and a
          `warn` imported from warnings (hint). The message: a string, implicit concatenation, +,
          % (also a logger's own %-args), .format(...), f-strings, x if c else y (both), a name
          assigned earlier in the same function (its last `=` and the `+=` after it) or once at
          module level.
  C/C++   TORCH_CHECK and TORCH_CHECK_* (VALUE, INDEX, TYPE, ..., EQ/NE/LT/LE/GT/GE),
          TORCH_INTERNAL_ASSERT, TORCH_WARN[_ONCE] (hint), AT_ERROR, C10_THROW_ERROR,
          throw std::*(...) and throw <name ending in Error/Exception/Failure/Fault>(...),
          LOG/PLOG/LOG_IF/LOG_FIRST_N/LOG_EVERY_N(ERROR|FATAL|DFATAL|WARNING) << ...,
          CHECK/QCHECK/PCHECK and CHECK_EQ... (ABSL_ too) when a << message follows or the file
          mentions glog/absl logging, absl::<Code>Error(...), errors::/tsl::/xla::<Code>(...) and
          `return <Code>(...)` with a string argument, ORT_THROW, ORT_ENFORCE, ORT_MAKE_STATUS,
          ORT_NOT_IMPLEMENTED, TLLM_THROW, TLLM_CHECK_WITH_INFO, TLLM_CHECK, GGML_ABORT, GGML_ASSERT,
          LLAMA_LOG_ERROR, GGML_LOG_ERROR, LOG_ERR, *_LOG_WARN and LOG_WRN (hint), NCCL's WARN,
          Ray's RAY_CHECK, RAY_CHECK_OK, RAY_CHECK_EQ... and RAY_LOG(ERROR|FATAL) << ... (also
          RAY_LOG_EVERY_N/_EVERY_MS/_ONCE_PER_PROCESS; calls chained to the logger, such as
          .WithField(id), are skipped), CTranslate2's THROW_RUNTIME_ERROR and THROW_INVALID_ARGUMENT,
          fprintf(stderr, fmt, ...) whose format holds "error" (any case). Arguments: adjacent
          literals are joined (PRId64 and friends are a conversion, #x is a placeholder), + and
          << chains, c10::str/StrCat/MakeString/std::string are joined, StrFormat/fmtstr/
          sprintf-likes are printf formats, fmt::format/std::format brace formats (a bare
          format(...) both); anything else is a placeholder. A CHECK, WARN, LOG or new
          TORCH_CHECK_* name that the file #defines itself is that project's own macro: skipped.
  Go      fmt.Errorf, errors.New, panic(...), status.Errorf/Error(codes.X, ...), and on any
          receiver (log, logrus, slog, a logger, x.WithError(e)....) the methods Error(f|ln|
          Context), Fatal(f|ln), Panic(f|ln), Critical(f), Warn(f|ln|Context)/Warning(f) (hint)
          when the message is a string or fmt.Sprintf(...); key-value pairs after slog's message
          are not part of it.
  Rust    panic!, anyhow!, bail!, ensure!(cond, ...), error!/warn! (hint) with any path
          (tracing::, log::), fields before the format string skipped; #[error("...")] of
          thiserror (exc: Enum::Variant or the struct); .expect("..."); format!(...) inside.
          unreachable!, todo!, unimplemented! and `#[cfg(test)] mod ... { }` are skipped.

Templates become forms so: every placeholder (a non-literal expression, a printf conversion such
as %d %s %zu %.2f %*d %[1]v, a brace field such as {} {0} {name!r:>8} {:?}, an f-string field) is
{*}; placeholders with only blanks between them are one {*}; blank runs are one space; {*} and
blanks at either end are dropped. A message of several lines gives its first line with at least
12 constant characters (a log shows it line by line). A form is kept only if its longest constant
piece has at least 8 characters and 2 words of letters; a site left without a form is dropped and
counted on stderr, as is a site whose forms all appeared earlier in the same file.

Prefixes that a macro prints before the message are added where they are well known:
  TORCH_CHECK(cond)             "Expected <cond> to be true, but got false." (no message given)
  TORCH_INTERNAL_ASSERT(cond,m) "<cond> INTERNAL ASSERT FAILED at {*}, please report a bug to
                                 PyTorch. <m>"
  CHECK(cond) << m              "Check failed: <cond> <m>"            (glog, absl, QCHECK, PCHECK)
  CHECK_EQ(a, b) << m           "Check failed: <a> == <b> {*} <m>"    (the {*}: "(1 vs. 2)");
                                 likewise TORCH_CHECK_EQ and the other comparisons
  GGML_ASSERT(cond)             "GGML_ASSERT(<cond>) failed"          (ggml_abort's text)
  ORT_ENFORCE(cond, m)          "<cond> was false. <m>"
  TLLM_CHECK(cond)              "[TensorRT-LLM][ERROR] Assertion failed: <cond>" (throwRuntimeError)
  RAY_CHECK(cond) << m          "Check failed: <cond> <m>"            (the sentence Ray 2.4x+ prints
                                 before it, the same at every site, is left out)
  RAY_CHECK_OK(s) << m          "Check failed: <s> Status not OK: {*} <m>"
  RAY_CHECK_EQ(a, b) << m       "Check failed: RAY_PREDICT_TRUE(_left_ == _right_) {*} vs {*}<m>"
                                 (its text names no site: dropped without a message of its own)
<cond> is the condition as written, blanks collapsed: the preprocessor prints it so (#cond).
Inside a #define body the condition is a macro argument and becomes {*}; a site there whose only
constant text would be the macro's prefix is dropped (that form would match every failure of
the macro).

Skipped by default (see DEFAULT_EXCLUDES; --no-default-excludes drops them): tests, examples,
docs, benchmarks, vendored and third-party folders; always skipped: hidden folders, files over
2 MiB (generated tables). Python files that do not parse are skipped and counted.

As a library: extract_tree(root, langs=None, excludes=(), default_excludes=True, stats=None,
jobs=1) returns the rows as dicts, ordered by file and line; pass a dict as stats to receive the
counts (sites, dropped_no_text, dropped_weak, dropped_duplicate, python_parse_errors,
files_<lang>). The command line reads files in as many processes as there are CPUs (--jobs).
"""
import argparse
import ast
import bisect
import collections
import fnmatch
import gc
import json
import multiprocessing
import os
import re
import sys
import warnings

PH = "\x00"  # a placeholder inside rendered message text
MAX_VARIANTS = 4  # a message with alternatives (a if c else b) gives at most this many forms
MAX_TEMPLATE = 400
MAX_FORM = 300
MAX_FILE_BYTES = 2 << 20  # larger files are generated tables, not code
MAX_CALL_SPAN = 20000  # a call whose closing parenthesis is further away is given up

LANG_EXTS = {
    "python": (".py",),
    "cpp": (".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh",
            ".inl", ".ipp", ".m", ".mm"),
    "go": (".go",),
    "rust": (".rs",),
}
EXT_LANG = {ext: lang for lang, exts in LANG_EXTS.items() for ext in exts}

# Matched against "/" + the path relative to the checkout, and against the file's name alone.
DEFAULT_EXCLUDES = (
    "*/test/*", "*/tests/*", "*/testdata/*", "*/integration-tests/*", "*/integration_tests/*",
    "test_*.py", "*_test.py", "conftest.py", "*_test.go", "*_test.cc", "*_test.cpp", "*_test.cu",
    "tests.rs", "*/examples/*", "*/docs/*", "*/benchmarks/*", "*/third_party/*", "*/vendor/*",
    "*/3rdparty/*",
)

# ---------------------------------------------------------------------------------------------
# Message text: variants of strings in which PH marks a placeholder.


def cat(*parts):
    """Concatenates lists of variants (the product, capped)."""
    out = [""]
    for part in parts:
        out = [a + b for a in out for b in part][:MAX_VARIANTS]
    return out


def each(variants, fn):
    return [fn(v) for v in variants]


_PRINTF = re.compile(
    r"%%|%(?:\([^)\n]*\))?(?:\[\d+\])?[-+#0']*(?:\*(?:\[\d+\])?|\d+)?(?:\.(?:\*|\d+)?)?"
    r"(?:\[\d+\])?(?:hh|h|ll|l|L|q|j|z|Z|t|I64|I32|I)?[diouxXeEfFgGaAcspnvTtbqwUOr]")
_BRACE = re.compile(r"\{\{|\}\}|\{[^{}\n]*(?:\{[^{}\n]*\}[^{}\n]*)*\}")


def printf_ph(s):
    """printf, Python %-formatting and Go's fmt verbs: each conversion a placeholder."""
    return _PRINTF.sub(lambda m: "%" if m.group() == "%%" else PH, s)


def brace_ph(s):
    """str.format, fmt::format, std::format and Rust's format!: each {field} a placeholder."""
    def one(m):
        t = m.group()
        return "{" if t == "{{" else "}" if t == "}}" else PH
    return _BRACE.sub(one, s)


def auto_ph(s):
    return brace_ph(printf_ph(s))


_BLANKS = re.compile(r"\s+")
_PH_RUN = re.compile(PH + r"(?:\s*" + PH + ")+")
_NOT_CONST = re.compile(r"[\s" + PH + "]")
_LINE_BREAK = re.compile(r"[\r\n]+")
_WORD = re.compile(r"[^\W\d_]{2,}")


def render_form(text):
    """One variant of a message (PH for placeholders) -> its form, or "" when nothing is left."""
    text = text.replace("{*}", PH)
    lines = _LINE_BREAK.split(text)
    chosen = None
    for line in lines:
        if len(_NOT_CONST.sub("", line)) >= 12:
            chosen = line
            break
    if chosen is None:
        chosen = max(lines, key=lambda l: len(_NOT_CONST.sub("", l)))
    s = _BLANKS.sub(" ", chosen)
    s = _PH_RUN.sub(PH, s)
    s = s.strip(" " + PH)
    if len(s) > MAX_FORM:
        s = s[:MAX_FORM].rstrip(" " + PH)
    return s.replace(PH, "{*}")


def strong_form(form):
    """The longest constant piece has at least 8 characters and 2 words of letters."""
    if not form:
        return False
    longest = max((p.strip() for p in form.split("{*}")), key=len)
    return len(longest) >= 8 and len(_WORD.findall(longest)) >= 2


def has_text(variants):
    """Some variant holds constant text."""
    return any(_NOT_CONST.sub("", v) for v in variants)


def collapse(s, limit=MAX_TEMPLATE):
    s = _BLANKS.sub(" ", s).strip()
    return s[:limit]


# ---------------------------------------------------------------------------------------------
# Rows and counts.


class FileContext:
    """Collects one file's sites, then keeps them in line order with their usable forms."""

    def __init__(self, rel, lang, stats):
        self.rel, self.lang, self.stats = rel, lang, stats
        self.pending = []

    def add(self, line, site, level, exc, template, variants):
        """variants: the message's variants (PH for placeholders), or None: no message at all."""
        self.pending.append((line, len(self.pending), site, level, exc, template, variants))

    def finish(self):
        rows, seen = [], set()
        for line, _, site, level, exc, template, variants in sorted(self.pending, key=lambda p: p[:2]):
            forms = []
            for v in variants or ():
                f = render_form(v)
                if f not in forms:
                    forms.append(f)
            if not any(forms):
                self.stats["dropped_no_text"] += 1
                continue
            forms = [f for f in forms if strong_form(f)]
            if not forms:
                self.stats["dropped_weak"] += 1
                continue
            fresh = [f for f in forms if f not in seen]
            if not fresh:
                self.stats["dropped_duplicate"] += 1
                continue
            seen.update(fresh)
            self.stats["sites"] += 1
            rows.append({
                "origin": "%s:%d" % (self.rel, line), "lang": self.lang, "site": site,
                "level": level, "exc": exc, "template": collapse(template), "forms": fresh,
            })
        return rows


# ---------------------------------------------------------------------------------------------
# Python, through the ast module.

_LOGGER_NAME = re.compile(r"^_*(?:\w*_)?(?:log|logger|logging)$", re.I)
_LOGGER_FACTORY = {"getLogger", "get_logger", "init_logger", "getChild"}
_PY_LOG_LEVEL = {
    "error": "error", "exception": "error", "critical": "error", "fatal": "error",
    "error_once": "error", "warning": "hint", "warn": "hint", "warning_once": "hint",
}
_MSG_KEYWORDS = ("msg", "message", "detail", "reason", "error", "text", "description")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def has_str(node):
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node))


class PyFile:
    def __init__(self, data, ctx):
        self.tree = ast.parse(data)
        self.lines = data.splitlines(keepends=True)
        self.ctx = ctx
        self.assigns_cache = {}
        self.warn_names = set()
        self.module = self.tree

    # source text of nodes (col_offset counts UTF-8 bytes)
    def seg(self, first, last=None):
        last = last or first
        try:
            l1, c1 = first.lineno - 1, first.col_offset
            l2, c2 = last.end_lineno - 1, last.end_col_offset
            if l1 == l2:
                raw = self.lines[l1][c1:c2]
            else:
                raw = b"".join([self.lines[l1][c1:]] + self.lines[l1 + 1:l2] + [self.lines[l2][:c2]])
            return raw.decode("utf-8", "replace")
        except (AttributeError, IndexError, TypeError):
            return ""

    def assigns(self, scope):
        """name -> [(lineno, end_lineno, op, value)] for assignments directly in scope."""
        key = id(scope)
        got = self.assigns_cache.get(key)
        if got is not None:
            return got
        got = collections.defaultdict(list)
        stack = [scope.body]
        while stack:
            for n in stack.pop():
                t = type(n)
                if t in _SCOPES:
                    continue
                if t is ast.Assign:
                    for target in n.targets:
                        if type(target) is ast.Name:
                            got[target.id].append((n.lineno, n.end_lineno, "=", n.value))
                elif t is ast.AnnAssign and n.value is not None and type(n.target) is ast.Name:
                    got[n.target.id].append((n.lineno, n.end_lineno, "=", n.value))
                elif t is ast.AugAssign and type(n.op) is ast.Add and type(n.target) is ast.Name:
                    got[n.target.id].append((n.lineno, n.end_lineno, "+=", n.value))
                for f in _BODIES:
                    sub = getattr(n, f, None)
                    if sub:
                        stack.append(sub)
        for v in got.values():
            v.sort(key=lambda e: e[0])
        self.assigns_cache[key] = got
        return got

    def resolve(self, name, line, scope):
        """The value nodes a name holds at a line: its last assignment before the line in the
        same scope and the += that follow it; else a module-level name assigned once."""
        entries = [e for e in self.assigns(scope).get(name, ()) if e[1] < line]
        last = max((i for i, e in enumerate(entries) if e[2] == "="), default=None)
        if last is not None:
            return [e[3] for e in entries[last:]]
        if scope is not self.module:
            entries = self.assigns(self.module).get(name, ())
            if len(entries) == 1 and entries[0][2] == "=":
                return [entries[0][3]]
        return None

    def expr(self, node, scope, depth=0):
        """An expression -> variants of its text (PH where it is not constant)."""
        if isinstance(node, ast.Constant):
            return [node.value.replace(PH, "")] if isinstance(node.value, str) else [PH]
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    out.append(v.value.replace(PH, ""))
                else:
                    out.append(PH)
            return ["".join(out)]
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                return cat(self.expr(node.left, scope, depth), self.expr(node.right, scope, depth))
            if isinstance(node.op, ast.Mod) and has_str(node.left):
                return each(self.expr(node.left, scope, depth), printf_ph)
            return [PH]
        if isinstance(node, ast.IfExp):
            return (self.expr(node.body, scope, depth) + self.expr(node.orelse, scope, depth))[:MAX_VARIANTS]
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "format":
                return each(self.expr(f.value, scope, depth), brace_ph)
            if isinstance(f, ast.Attribute) and f.attr in ("strip", "rstrip", "lstrip") and not node.args:
                return self.expr(f.value, scope, depth)
            if dotted(f) in ("textwrap.dedent", "dedent") and node.args:
                return self.expr(node.args[0], scope, depth)
            return [PH]
        if isinstance(node, ast.Name) and depth < 3:
            values = self.resolve(node.id, node.lineno, scope)
            if values:
                return cat(*[self.expr(v, scope, depth + 1) for v in values])
        return [PH]

    def template(self, node, scope, last=None):
        if isinstance(node, ast.Name) and last is None:
            values = self.resolve(node.id, node.lineno, scope)
            if values:
                return " + ".join(self.seg(v) for v in values)
        return self.seg(node, last)

    def run(self):
        """Walks the statements (sites are statements: raise, assert, and calls standing alone)."""
        stack = [(self.tree.body, self.tree)]
        while stack:
            body, scope = stack.pop()
            for st in body:
                t = type(st)
                if t is ast.Expr:
                    v = st.value
                    if type(v) is ast.Await:
                        v = v.value
                    if type(v) is ast.Call:
                        self.call_site(v, scope)
                elif t is ast.Raise:
                    self.raise_site(st, scope)
                elif t is ast.Assert:
                    if st.msg is not None:
                        self.ctx.add(st.lineno, "assert", "error", "AssertionError",
                                     self.template(st.msg, scope), self.expr(st.msg, scope))
                elif t is ast.ImportFrom and st.module == "warnings":
                    for a in st.names:
                        if a.name == "warn":
                            self.warn_names.add(a.asname or a.name)
                inner = st if t in _SCOPES else scope
                for f in _BODIES:
                    sub = getattr(st, f, None)
                    if sub:
                        stack.append((sub, inner))

    def raise_site(self, node, scope):
        exc = node.exc
        if exc is None:
            return
        if isinstance(exc, ast.Call):
            name = dotted(exc.func)
            msg = self.pick_message(exc.args, exc.keywords)
        else:
            name = dotted(exc)
            if not name or not name.split(".")[-1][:1].isupper():
                return  # re-raising a caught exception held in a variable
            msg = None
        cls = name if name and name.split(".")[-1][:1].isupper() else ""
        site = "raise " + (name or "<expr>")
        if msg is None:
            self.ctx.add(node.lineno, site, "error", cls, "", None)
        else:
            self.ctx.add(node.lineno, site, "error", cls, self.template(msg, scope), self.expr(msg, scope))

    @staticmethod
    def pick_message(args, keywords):
        for a in args:
            if not isinstance(a, ast.Starred) and has_str(a):
                return a
        for kw in keywords:
            if kw.arg in _MSG_KEYWORDS:
                return kw.value
        for a in args:
            if isinstance(a, (ast.Name, ast.Attribute)):
                return a
        return args[0] if args and not isinstance(args[0], ast.Starred) else None

    def call_site(self, node, scope):
        f = node.func
        if isinstance(f, ast.Attribute):
            recv = f.value
            if f.attr == "warn" and isinstance(recv, ast.Name) and recv.id == "warnings":
                self.warn_site(node, scope, "warnings.warn")
                return
            if f.attr in _PY_LOG_LEVEL:
                rname = ""
                if isinstance(recv, ast.Name):
                    rname = recv.id
                elif isinstance(recv, ast.Attribute):
                    rname = recv.attr
                elif isinstance(recv, ast.Call):
                    fn = dotted(recv.func).split(".")[-1]
                    rname = "logger" if fn in _LOGGER_FACTORY else ""
                if not rname or not _LOGGER_NAME.match(rname):
                    return
                if not node.args or isinstance(node.args[0], ast.Starred):
                    return
                first, args = node.args[0], node.args
                variants = self.expr(first, scope)
                if len(args) > 1:
                    variants = each(variants, printf_ph)
                tmpl = self.template(first, scope) if len(args) == 1 else self.seg(first, args[-1])
                self.ctx.add(node.lineno, rname + "." + f.attr, _PY_LOG_LEVEL[f.attr], "", tmpl, variants)
            return
        if isinstance(f, ast.Name) and f.id in self.warn_names:
            self.warn_site(node, scope, f.id)

    def warn_site(self, node, scope, site):
        msg = node.args[0] if node.args else None
        category = node.args[1] if len(node.args) > 1 else None
        for kw in node.keywords:
            if kw.arg == "message":
                msg = kw.value
            elif kw.arg == "category":
                category = kw.value
        exc = (dotted(category) if category is not None else "UserWarning") or ""
        if msg is None:
            self.ctx.add(node.lineno, site, "hint", exc, "", None)
        else:
            self.ctx.add(node.lineno, site, "hint", exc, self.template(msg, scope), self.expr(msg, scope))


# ---------------------------------------------------------------------------------------------
# C, C++, Go and Rust: a masked copy of the text (comments blanked, string literals filled, the
# same length and lines) is searched and balanced; the literals are kept decoded aside.

_BRACKETS = re.compile(r"[()\[\]{}]")
_SPLITTERS = {
    ",": re.compile(r"[()\[\]{}]|,"),
    "+": re.compile(r"[()\[\]{}]|(?<![+])\+(?![+=])"),
    "<<": re.compile(r"[()\[\]{}]|<<(?!=)"),
}
_STMT_END = re.compile(r"[()\[\]{};]")
_IDENT_RUN = re.compile(r"[A-Za-z_]\w*")


def _fill(chunk, ch):
    if "\n" not in chunk:
        return ch * len(chunk)
    return re.sub(r"[^\n]", ch, chunk)


class Scanner:
    """A source file as a masked copy (comments blanked, literals filled with "_", the same length
    and lines as the text) in which sites are found and calls balanced, and its string literals,
    decoded, by position."""
    OPENERS = re.compile(r"[/\"']")
    LINE_COMMENT = re.compile(r"//[^\n]*")
    BLOCK_COMMENT = re.compile(r"/\*[\s\S]*?(?:\*/|\Z)")
    STRING = re.compile(r'"(?:[^"\\\n]|\\[\s\S])*"')
    CHAR = re.compile(r"'(?:[^'\\\n]|\\[^\n]){1,10}'")
    CALL = re.compile(r"(?:::)?[A-Za-z_]\w*(?:\s*(?:::|\.)\s*[A-Za-z_]\w*)*\s*!?\s*\(")
    SUFFIX = re.compile(r"$^")  # trailing calls that keep a string's text (.c_str())
    CONCAT_OPS = ("+",)
    CHARS_ARE_TEXT = False
    KEYWORDS = ()  # strings one of which every site contains

    def __init__(self, text, ctx):
        self.text, self.ctx = text, ctx
        pieces, lits, pos, p = [], [], 0, 0
        search = self.OPENERS.search
        while True:
            m = search(text, p)
            if not m:
                break
            p = m.start()
            tok = self.token_at(text, p)
            if tok is None or tok[1] < pos:
                p += 1
                continue
            kind, s, e = tok
            pieces.append(text[pos:s])
            chunk = text[s:e]
            if kind == "com":
                pieces.append(_fill(chunk, " "))
            else:
                q = "'" if kind == "chr" else '"'
                pieces.append(q + _fill(chunk[1:-1], "_") + q if len(chunk) >= 2 else q)
                if kind != "chr" or self.CHARS_ARE_TEXT:
                    lits.append((s, e, self.decode(chunk, kind)))
            pos = p = e
        pieces.append(text[pos:])
        self.masked = "".join(pieces)
        self.lits = lits
        self.lit_starts = [l[0] for l in lits]
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def token_at(self, text, p):
        """(kind, start, end) of the comment or literal whose opening character is at p."""
        c = text[p]
        if c == "/":
            n = text[p + 1:p + 2]
            m = self.LINE_COMMENT.match(text, p) if n == "/" else \
                self.BLOCK_COMMENT.match(text, p) if n == "*" else None
            return ("com", p, m.end()) if m else None
        if c == '"':
            raw = self.raw_at(text, p)
            if raw:
                return raw
            m = self.STRING.match(text, p)
            return ("str", p, m.end()) if m else None
        if c == "'":
            m = self.CHAR.match(text, p)
            return ("chr", p, m.end()) if m else None
        return None

    def raw_at(self, text, p):
        return None

    def hits(self):
        """Positions where a keyword starts, in order, each a candidate site."""
        m, found = self.masked, set()
        for kw in self.KEYWORDS:
            i = m.find(kw)
            while i >= 0:
                found.add(i)
                i = m.find(kw, i + 1)
        return sorted(found)

    def word_start(self, p):
        """p starts a word: no identifier character (or . or ->) right before it."""
        if p == 0:
            return True
        c = self.masked[p - 1]
        return not (c.isalnum() or c in "_." or (c == ">" and self.masked[p - 2:p] == "->"))

    def line_of(self, pos):
        return bisect.bisect_right(self.line_starts, pos)

    def close_of(self, open_pos):
        depth = 0
        for m in _BRACKETS.finditer(self.masked, open_pos, min(len(self.masked), open_pos + MAX_CALL_SPAN)):
            if m.group() in "([{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return m.start()
        return -1

    def split(self, a, b, sep):
        parts, depth, start = [], 0, a
        for m in _SPLITTERS[sep].finditer(self.masked, a, b):
            t = m.group()
            if t in "([{":
                depth += 1
            elif t in ")]}":
                depth -= 1
            elif depth == 0:
                parts.append((start, m.start()))
                start = m.end()
        parts.append((start, b))
        return parts

    def args(self, open_pos, close_pos):
        parts = self.split(open_pos + 1, close_pos, ",")
        if len(parts) == 1 and not self.masked[open_pos + 1:close_pos].strip():
            return []
        return parts

    def trim(self, a, b):
        m = self.masked
        while a < b and m[a].isspace():
            a += 1
        while b > a and m[b - 1].isspace():
            b -= 1
        return a, b

    def src(self, a, b):
        return self.text[a:b].replace("\\\n", " ")

    def code(self, a, b):
        """The text of a range with comments blanked and line splices removed, blanks collapsed."""
        out = "".join(o if mk != " " else " " for o, mk in zip(self.text[a:b], self.masked[a:b]))
        return collapse(out.replace("\\\n", " "), 10 ** 6)

    def gap_text(self, gap):
        """Text between adjacent literals: blanks, or macros that expand to literals."""
        out = []
        # A backslash outside a literal is a line splice; a range may end right after one (the
        # blanks up to its newline trimmed) when a literal ends a line of a #define body.
        for tok in re.findall(r"\\\s*$|\\\n|#\s*\w+|\S+", gap):
            if tok.startswith("\\"):
                continue
            if tok.startswith("#") and tok != "#":
                out.append(PH)  # a macro argument, stringized
                continue
            if not _IDENT_RUN.fullmatch(tok):
                return None
            if tok.startswith(("PRI", "SCN")):
                out.append("d")
            elif tok.isupper() or tok.startswith("__"):
                out.append(PH)
            else:
                return None
        return "".join(out)

    def literal(self, a, b):
        """The decoded text of a range made only of string literals, else None."""
        i = bisect.bisect_left(self.lit_starts, a)
        vals, cur = [], a
        while i < len(self.lits) and self.lits[i][0] < b:
            s, e, v = self.lits[i]
            if e > b:
                return None
            g = self.gap_text(self.masked[cur:s])
            if g is None:
                return None
            vals.append(g)
            vals.append(v)
            cur, i = e, i + 1
        if cur == a:
            return None
        g = self.gap_text(self.masked[cur:b])
        if g is None:
            return None
        vals.append(g)
        return "".join(vals)

    def has_literal(self, a, b):
        i = bisect.bisect_left(self.lit_starts, a)
        return i < len(self.lits) and self.lits[i][0] < b

    def call_at(self, a, b):
        """(name, open, close) when the range is one call NAME(...) (with an allowed suffix)."""
        m = self.CALL.match(self.masked, a, b)
        if not m:
            return None
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return None
        rest = self.masked[close + 1:b]
        if rest.strip() and not self.SUFFIX.fullmatch(rest):
            return None
        name = re.sub(r"\s+", "", self.masked[a:open_pos]).lstrip(":")
        return name, open_pos, close

    def call_kind(self, name):
        return None

    def expr(self, a, b, depth=0):
        a, b = self.trim(a, b)
        if a >= b or depth > 8:
            return [PH]
        m = self.masked
        lit = self.literal(a, b)
        if lit is not None:
            return [lit]
        if m[a] == "(" and self.close_of(a) == b - 1:
            return self.expr(a + 1, b - 1, depth + 1)
        if m[a] == "&":
            return self.expr(a + 1, b, depth + 1)
        for op in self.CONCAT_OPS:
            parts = self.split(a, b, op)
            if len(parts) > 1:
                return cat(*[self.expr(p, q, depth + 1) for p, q in parts])
        call = self.call_at(a, b)
        if call:
            name, o, c = call
            kind = self.call_kind(name)
            if kind:
                args = self.args(o, c)
                if kind == "concat":
                    return cat(*[self.expr(p, q, depth + 1) for p, q in args]) if args else [PH]
                skip = 1 if kind == "printf2" else 0
                fn = {"printf": printf_ph, "printf2": printf_ph, "brace": brace_ph, "auto": auto_ph}[kind]
                if len(args) > skip:
                    return each(self.expr(*args[skip], depth=depth + 1), fn)
        return [PH]

    def fmt(self, arg, style):
        """A format-string argument -> variants with its conversions as placeholders."""
        fn = {"printf": printf_ph, "brace": brace_ph, "auto": auto_ph, None: None}[style]
        v = self.expr(*arg)
        return each(v, fn) if fn else v

    def concat(self, args):
        return cat(*[self.expr(p, q) for p, q in args]) if args else [""]

    def tmpl(self, args):
        if not args:
            return ""
        return self.src(args[0][0], args[-1][1])


def _unescape(pattern, table):
    def one(m):
        t = m.group()
        if t[1:2] in table:
            return table[t[1:2]]
        if t[1:2] in "\n\r":
            return ""
        if t[1:2] in "xX":
            try:
                return chr(int(t[2:].strip("{}"), 16))
            except ValueError:
                return PH
        if t[1:2] in "uU":
            try:
                return chr(int(t[2:].strip("{}"), 16))
            except ValueError:
                return PH
        if t[1:2].isdigit():
            try:
                return chr(int(t[1:], 8))
            except ValueError:
                return PH
        return t[1:]
    return lambda s: pattern.sub(one, s).replace(PH, "")


_ESC_TABLE = {"n": "\n", "t": "\t", "r": "\r", "a": " ", "b": " ", "f": " ", "v": " ", "\\": "\\",
              '"': '"', "'": "'", "?": "?", "0": "\0"}
_C_UNESCAPE = _unescape(re.compile(r"\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|\r?\n|.)", re.S),
                        {k: v for k, v in _ESC_TABLE.items() if k != "0"})
_GO_UNESCAPE = _unescape(re.compile(r"\\(?:[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S),
                         {k: v for k, v in _ESC_TABLE.items() if k != "0"})
_RS_UNESCAPE = _unescape(re.compile(r"\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|\n\s*|.)", re.S), _ESC_TABLE)


class CppFile(Scanner):
    RAW = re.compile(r'R"([^()\\\s"]{0,16})\([\s\S]*?\)\1"')
    LINE_COMMENT = re.compile(r"//(?:[^\n\\]|\\[\s\S])*")
    SUFFIX = re.compile(r"\s*(?:\.\s*(?:c_str|data|str)\s*\(\s*\)\s*)+")
    CONCAT_OPS = ("+", "<<")
    CHARS_ARE_TEXT = True
    STATUS_CODES = ("InvalidArgument", "Internal", "FailedPrecondition", "NotFound", "Unimplemented",
                    "ResourceExhausted", "Unavailable", "Aborted", "OutOfRange", "Unknown",
                    "DeadlineExceeded", "PermissionDenied", "AlreadyExists", "DataLoss", "Cancelled",
                    "Unauthenticated")
    KEYWORDS = ("TORCH_", "AT_ERROR", "C10_THROW_ERROR", "ORT_", "TLLM_", "GGML_", "LLAMA_LOG_", "LOG",
                "WARN", "fprintf", "CHECK", "ABSL_", "throw", "RAY_", "THROW_") + STATUS_CODES
    NAME_AT = re.compile(r"""(?P<name>
            TORCH_CHECK\w* | TORCH_INTERNAL_ASSERT | TORCH_WARN(?:_ONCE)? | AT_ERROR | C10_THROW_ERROR
          | ORT_THROW | ORT_ENFORCE | ORT_MAKE_STATUS | ORT_NOT_IMPLEMENTED
          | TLLM_THROW | TLLM_CHECK_WITH_INFO | TLLM_CHECK
          | THROW_RUNTIME_ERROR | THROW_INVALID_ARGUMENT
          | RAY_CHECK_OK | RAY_CHECK(?:_(?:EQ|NE|LT|LE|GT|GE))?
          | RAY_LOG(?:_EVERY_N|_EVERY_MS|_ONCE_PER_PROCESS)?
          | GGML_ABORT | GGML_ASSERT | LLAMA_LOG_ERROR | GGML_LOG_ERROR | LOG_ERR
          | LLAMA_LOG_WARN | GGML_LOG_WARN | LOG_WRN
          | WARN | fprintf
          | (?:ABSL_)?(?:P?LOG(?:_IF|_FIRST_N|_EVERY_N)?)
          | (?:ABSL_)?[QP]?CHECK(?:_(?:EQ|NE|LT|LE|GT|GE))?
        )\s*\(""", re.X)
    THROW_AT = re.compile(r"throw\s+(?P<tname>(?:::)?\w+(?:\s*::\s*\w+)*)\s*[({]")
    STATUS_AT = re.compile(r"(?P<code>%s)(?P<err>Error)?\s*\(" % "|".join(STATUS_CODES))
    STATUS_BEFORE = re.compile(r"(?:\b(?P<ns>(?:absl|errors|xla|tsl|tensorflow)(?:\s*::\s*\w+)*\s*::\s*)"
                               r"|\breturn\s+)$")
    PREFILTER = re.compile("|".join(KEYWORDS))
    DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", re.M)
    DEFINE_NAME = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
    KNOWN_PREFIXES = ("GGML_", "LLAMA_", "ORT_", "TLLM_", "C10_", "AT_", "TORCH_INTERNAL", "TORCH_WARN")
    SEVERITY = {"ERROR": "error", "FATAL": "error", "DFATAL": "error", "QFATAL": "error",
                "WARNING": "hint"}
    TORCH_EXC = {"": "c10::Error", "VALUE": "c10::ValueError", "INDEX": "c10::IndexError",
                 "TYPE": "c10::TypeError", "NOT_IMPLEMENTED": "c10::NotImplementedError",
                 "LINALG": "c10::LinAlgError", "IF_NOT_ON_CUDA": "c10::Error",
                 "ALWAYS_SHOW_CPP_STACKTRACE": "c10::ErrorAlwaysShowCppStacktrace"}
    OPS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}
    # Ray's RAY_CHECK (src/ray/util/logging.h) prints "Check failed: <cond> " and the streamed
    # message; since Ray 2.4x a sentence of about 200 characters comes first ("An unexpected
    # system state has occurred. ... Check failed: "), the same at every site: the form starts at
    # "Check failed: ", so that it holds for older releases too and keeps its 300 characters for
    # the site's own text. The levels of RAY_LOG that are sites (its WARNING and INFO are not).
    RAY_CHECK_PREFIX = "Check failed: "
    RAY_LOG_LEVELS = ("ERROR", "FATAL")
    # TensorRT-LLM's throwRuntimeError (tensorrt_llm/common/assert.h) for TLLM_CHECK(cond).
    TLLM_ASSERT_PREFIX = "[TensorRT-LLM][ERROR] Assertion failed: "
    # CTranslate2's THROW_* (include/ctranslate2/utils.h): the message, thrown as this class.
    CT2_THROW = {"THROW_RUNTIME_ERROR": "std::runtime_error", "THROW_INVALID_ARGUMENT": "std::invalid_argument"}
    EXC_NAME = re.compile(r"(?i)(error|exception|failure|fault)$")
    METHOD_AFTER = re.compile(r"\.\s*[A-Za-z_]\w*\s*\(")
    CONCAT_CALLS = {"str", "StrCat", "MakeString", "string", "string_view", "StrAppend", "Concat"}
    PRINTF_CALLS = {"StrFormat", "fmtstr", "StringPrintf", "Sprintf", "string_format", "format_string",
                    "sprintf", "StrPrintf", "formatString", "strprintf"}

    def token_at(self, text, p):
        tok = Scanner.token_at(self, text, p)
        if tok and tok[0] in ("str", "chr") and p > 0 and text[p - 1] in "8uUL":
            for prefix in ("u8", "u", "U", "L"):  # u8"...", L'x'
                s = p - len(prefix)
                if text[max(0, s):p] == prefix and not (s > 0 and (text[s - 1].isalnum() or text[s - 1] == "_")):
                    return tok[0], s, tok[2]
        return tok

    def raw_at(self, text, p):
        """A raw string R"d(...)d", with an optional u8/u/U/L prefix, whose quote is at p."""
        if p == 0 or text[p - 1] != "R":
            return None
        s = p - 1
        for prefix in ("u8", "u", "U", "L"):
            if text[max(0, s - len(prefix)):s] == prefix:
                s -= len(prefix)
                break
        if s > 0 and (text[s - 1].isalnum() or text[s - 1] == "_"):
            return None
        m = self.RAW.match(text, p - 1)
        return ("raw", s, m.end()) if m else None

    @staticmethod
    def decode(chunk, kind):
        if kind == "raw":
            q = chunk.index('"')
            delim = chunk[q + 1:chunk.index("(", q)]
            return chunk[q + 2 + len(delim):len(chunk) - 1 - len(delim) - 1]
        q = chunk.index('"' if kind == "str" else "'")
        return _C_UNESCAPE(chunk[q + 1:-1])

    def call_kind(self, name):
        last = re.split(r"::|\.", name)[-1]
        if last in self.CONCAT_CALLS:
            return "concat"
        if last in self.PRINTF_CALLS:
            return "printf"
        if last in ("format", "vformat"):
            return "brace" if name.startswith(("fmt::", "std::")) else "auto"
        return None

    def run(self):
        text, masked = self.text, self.masked
        defines = [(m.start(), m.end()) for m in self.DEFINE.finditer(masked)]
        def_starts = [d[0] for d in defines]
        self.glogish = any(k in text for k in ("glog", "absl/log", "LOG(ERROR)", "LOG(FATAL)"))
        # Names of common shape (CHECK, WARN, LOG, TORCH_CHECK_<something new>) that this file
        # defines itself are the project's own macros, of unknown text: not sites.
        self.own_macros = {m.group(1) for m in self.DEFINE_NAME.finditer(masked)
                           if not m.group(1).startswith(self.KNOWN_PREFIXES)}
        for start in self.hits():
            if not self.word_start(start):
                continue
            i = bisect.bisect_right(def_starts, start) - 1
            in_define = i >= 0 and defines[i][1] > start
            if in_define and re.search(r"#\s*define\s+$", masked[defines[i][0]:start]):
                continue  # the macro's own definition
            try:
                m = self.NAME_AT.match(masked, start)
                if m:
                    self.macro(m, in_define)
                    continue
                m = self.THROW_AT.match(masked, start)
                if m:
                    self.throw(m)
                    continue
                m = self.STATUS_AT.match(masked, start)
                if m:
                    before = self.STATUS_BEFORE.search(masked, max(0, start - 120), start)
                    if before:
                        self.status(m, re.sub(r"\s+", "", before.group("ns") or ""))
            except (ValueError, IndexError):
                continue

    def cond(self, arg, in_define):
        return PH if in_define else self.code(*arg)

    @staticmethod
    def own(in_define, msg, variants):
        """The message with a macro's printed prefix, unless the prefix would be all its text
        (a condition inside a #define is a placeholder; a form of the prefix alone matches every
        failure of that macro)."""
        return variants if not in_define or has_text(msg) else [PH]

    def stream(self, close):
        """The `<< a << b` that follows position close, as (variants, template), or None."""
        m = self.masked
        p = close + 1
        while True:
            while p < len(m) and m[p].isspace():
                p += 1
            call = self.METHOD_AFTER.match(m, p)  # RAY_LOG(ERROR).WithField(id) << ...
            if not call:
                break
            c = self.close_of(call.end() - 1)
            if c < 0:
                return None
            p = c + 1
        if not m.startswith("<<", p):
            return None
        depth, end = 0, len(m)
        for t in _STMT_END.finditer(m, p, min(len(m), p + MAX_CALL_SPAN)):
            c = t.group()
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    end = t.start()
                    break
            elif depth == 0:
                end = t.start()
                break
        parts = self.split(p, end, "<<")[1:]
        return self.concat(parts), self.src(p + 2, end)

    def macro_call(self, m):
        """The arguments, line and closing ')' of the call whose '(' ends match `m`; None when
        its parentheses do not balance."""
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return None
        return self.args(open_pos, close), self.line_of(m.start()), close

    def macro(self, m, in_define):
        name = m.group("name")
        if name in self.own_macros:
            return
        call = self.macro_call(m)
        if call is None:
            return
        args, line, close = call
        add = self.ctx.add
        if name.startswith("TORCH_CHECK"):
            suffix = name[len("TORCH_CHECK"):].lstrip("_")
            if suffix.endswith("MSG") or suffix in ("NOTNULL",) or not args:
                return
            if suffix not in self.TORCH_EXC and suffix not in self.OPS and suffix not in ("WITH", "ARG") \
                    and len(args) < 2:
                return  # a TORCH_CHECK_<name> of unknown kind with a condition only
            if suffix in self.OPS:
                if len(args) < 2:
                    return
                self.check_op(line, name, self.OPS[suffix], args, close, in_define)
                return
            exc = self.TORCH_EXC.get(suffix, "c10::Error")
            if suffix == "WITH":
                if len(args) < 2:
                    return
                exc = "c10::" + self.code(*args[0])
                args = args[1:]
            if suffix == "ARG" and len(args) >= 2:
                msg = cat(["invalid argument "], [PH], [": "], self.concat(args[2:]))
                add(line, name, "error", exc, self.tmpl(args[1:]), msg)
                return
            if len(args) == 1:
                msg = cat(["Expected "], [self.cond(args[0], in_define)], [" to be true, but got false."])
                add(line, name, "error", exc, self.src(*args[0]), self.own(in_define, [""], msg))
            else:
                add(line, name, "error", exc, self.tmpl(args[1:]), self.concat(args[1:]))
        elif name == "TORCH_INTERNAL_ASSERT":
            if not args:
                return
            own = self.concat(args[1:])
            msg = cat([self.cond(args[0], in_define)],
                      [" INTERNAL ASSERT FAILED at " + PH + ", please report a bug to PyTorch. "], own)
            add(line, name, "error", "c10::Error", self.tmpl(args), self.own(in_define, own, msg))
        elif name.startswith("TORCH_WARN"):
            add(line, name, "hint", "c10::UserWarning", self.tmpl(args), self.concat(args))
        elif name == "AT_ERROR":
            add(line, name, "error", "c10::Error", self.tmpl(args), self.concat(args))
        elif name == "C10_THROW_ERROR":
            if len(args) < 2:
                return
            add(line, name, "error", "c10::" + self.code(*args[0]), self.tmpl(args[1:]), self.concat(args[1:]))
        elif name in ("ORT_THROW", "ORT_NOT_IMPLEMENTED"):
            add(line, name, "error", "onnxruntime::OnnxRuntimeException", self.tmpl(args), self.concat(args))
        elif name == "ORT_ENFORCE":
            if not args:
                return
            own = self.concat(args[1:])
            msg = cat([self.cond(args[0], in_define)], [" was false. "], own)
            add(line, name, "error", "onnxruntime::OnnxRuntimeException", self.tmpl(args),
                self.own(in_define, own, msg))
        elif name == "ORT_MAKE_STATUS":
            if len(args) < 3:
                return
            add(line, name, "error", self.code(*args[1]), self.tmpl(args[2:]), self.concat(args[2:]))
        elif name == "TLLM_THROW":
            if args:
                add(line, name, "error", "tensorrt_llm::common::TllmException", self.tmpl(args),
                    self.fmt(args[0], "printf"))
        elif name == "TLLM_CHECK_WITH_INFO":
            if len(args) >= 2:
                add(line, name, "error", "tensorrt_llm::common::TllmException", self.tmpl(args[1:]),
                    self.fmt(args[1], "printf"))
        elif name == "TLLM_CHECK":
            if len(args) == 1:
                msg = cat([self.TLLM_ASSERT_PREFIX], [self.cond(args[0], in_define)])
                add(line, name, "error", "tensorrt_llm::common::TllmException", self.src(*args[0]),
                    self.own(in_define, [""], msg))
        elif name in self.CT2_THROW:
            if args:
                add(line, name, "error", self.CT2_THROW[name], self.tmpl(args), self.concat(args))
        elif name.startswith("RAY_CHECK"):
            self.ray_check(name, args, close, line, in_define)
        elif name.startswith("RAY_LOG"):
            if args and self.masked[args[0][0]:args[0][1]].strip() in self.RAY_LOG_LEVELS:
                self.log(m, name, args, close, line)
        elif name == "GGML_ASSERT":
            if args:
                msg = cat(["GGML_ASSERT("], [self.cond(args[0], in_define)], [") failed"])
                add(line, name, "error", "", self.src(*args[0]), self.own(in_define, [""], msg))
        elif name in ("GGML_ABORT", "LLAMA_LOG_ERROR", "GGML_LOG_ERROR", "LOG_ERR", "WARN",
                      "LLAMA_LOG_WARN", "GGML_LOG_WARN", "LOG_WRN"):
            if not args or not self.has_literal(*args[0]):
                return
            level = "hint" if name.endswith(("_WARN", "WRN")) else "error"
            add(line, name, level, "", self.tmpl(args), self.fmt(args[0], "printf"))
        elif name == "fprintf":
            if len(args) < 2 or self.masked[args[0][0]:args[0][1]].strip() not in ("stderr", "::stderr"):
                return
            lit = self.literal(*args[1])
            if lit is None or "error" not in lit.lower():
                return
            add(line, "fprintf(stderr)", "error", "", self.tmpl(args[1:]), [printf_ph(lit)])
        elif "LOG" in name:
            self.log(m, name, args, close, line)
        elif "CHECK" in name:
            self.check(name, args, close, line, in_define)

    def log(self, m, name, args, close, line):
        if not args:
            return
        sev = self.masked[args[0][0]:args[0][1]].strip()
        sev = sev.split("::")[-1]
        if sev.startswith("k"):
            sev = sev[1:].upper()
        level = self.SEVERITY.get(sev)
        if level is None:
            return
        st = self.stream(close)
        if st is None:
            return
        site = "%s(%s)" % (name, sev)
        self.ctx.add(line, site, level, "", st[1], st[0])

    def check(self, name, args, close, line, in_define):
        st = self.stream(close)
        if st is None and not self.glogish:
            return  # a project's own CHECK macro, not glog's or absl's
        base = name[5:] if name.startswith("ABSL_") else name
        op = base.rsplit("_", 1)[-1] if "_" in base else ""
        if op in self.OPS:
            if len(args) < 2:
                return
            self.check_op(line, name, self.OPS[op], args, close, in_define)
            return
        if not args:
            return
        own = st[0] if st else [""]
        msg = cat(["Check failed: "], [self.cond(args[0], in_define)], [" "], own)
        self.ctx.add(line, name, "error", "", st[1] if st else self.src(*args[0]), self.own(in_define, own, msg))

    def ray_check(self, name, args, close, line, in_define):
        """RAY_CHECK(cond) << m, RAY_CHECK_OK(status) << m and RAY_CHECK_EQ(a, b) << m, as Ray's
        logging.h and status.h print them. RAY_CHECK_<op> shows "RAY_PREDICT_TRUE(_left_ op _right_)"
        and the two values, none of which names the site: without a message of its own it is
        dropped, like a condition inside a #define."""
        st = self.stream(close)
        own = st[0] if st else [""]
        template = st[1] if st else self.tmpl(args)
        op = name.rsplit("_", 1)[-1]
        if name == "RAY_CHECK_OK":
            if len(args) != 1:
                return
            msg = cat([self.RAY_CHECK_PREFIX], [self.cond(args[0], in_define)],
                      [" Status not OK: " + PH + " "], own)
            self.ctx.add(line, name, "error", "", template, self.own(in_define, own, msg))
        elif op in self.OPS:
            if len(args) != 2:
                return
            msg = cat([self.RAY_CHECK_PREFIX + "RAY_PREDICT_TRUE(_left_ %s _right_) " % self.OPS[op]
                       + PH + " vs " + PH], own)
            self.ctx.add(line, name, "error", "", template, self.own(True, own, msg))
        else:
            if len(args) != 1:
                return
            msg = cat([self.RAY_CHECK_PREFIX], [self.cond(args[0], in_define)], [" "], own)
            self.ctx.add(line, name, "error", "", template, self.own(in_define, own, msg))

    def check_op(self, line, name, op, args, close, in_define):
        st = self.stream(close)
        a = self.cond(args[0], in_define)
        b = self.cond(args[1], in_define)
        own = st[0] if st else [""]
        msg = cat(["Check failed: %s %s %s " % (a, op, b) + PH + " "], own)
        self.ctx.add(line, name, "error", "", st[1] if st else self.tmpl(args), self.own(in_define, own, msg))

    def throw(self, m):
        tname = re.sub(r"\s+", "", m.group("tname"))
        if not (self.EXC_NAME.search(tname.split("::")[-1]) or tname.lstrip(":").startswith("std::")):
            return
        call = self.macro_call(m)
        if call is None:
            return
        args, line, close = call
        site = "throw " + tname
        pick = next((a for a in args if self.has_literal(*a)), args[0] if args else None)
        if pick is None:
            self.ctx.add(line, site, "error", tname, "", None)
            return
        self.ctx.add(line, site, "error", tname, self.src(*pick), self.expr(*pick))

    def status(self, m, ns):
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return
        args = self.args(open_pos, close)
        if not args or not any(self.has_literal(*a) for a in args):
            return  # a function of the same name, or a message passed through
        code = m.group("code")
        site = ns + code + (m.group("err") or "")
        line = self.line_of(m.start())
        first = self.literal(*args[0])
        if first is not None and len(args) > 1 and _PRINTF.search(first):
            msg = [printf_ph(first)]
        else:
            msg = self.concat(args)
        self.ctx.add(line, site, "error", code, self.tmpl(args), msg)


class GoFile(Scanner):
    OPENERS = re.compile(r"[/\"'`]")
    STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
    BACKQUOTED = re.compile(r"`[^`]*`")
    KEYWORDS = ("fmt.Errorf", "errors.New", "panic", "status.Error", "Error", "Fatal", "Panic", "Warn",
                "Critical")
    FN_AT = re.compile(r"(?P<fn>fmt\.Errorf|errors\.New|panic|status\.Errorf|status\.Error)\s*\(")
    METH_AT = re.compile(r"(?P<meth>Errorf|Errorln|ErrorContext|Error|Fatalf|Fatalln|Fatal|Panicf|Panicln|Panic"
                         r"|Warnf|Warnln|WarnContext|Warningf|Warning|Warn|Criticalf|Critical)\s*\(")
    RECEIVER = re.compile(r"(?:(\w+)|\))\s*\.\s*$")
    PREFILTER = re.compile("|".join(re.escape(k) for k in KEYWORDS))

    def token_at(self, text, p):
        if text[p] == "`":
            m = self.BACKQUOTED.match(text, p)
            return ("raw", p, m.end()) if m else None
        return Scanner.token_at(self, text, p)

    @staticmethod
    def decode(chunk, kind):
        if kind == "raw":
            return chunk[1:-1].replace("\r", "")
        return _GO_UNESCAPE(chunk[1:-1])

    def call_kind(self, name):
        if name in ("fmt.Sprintf", "fmt.Errorf"):
            return "printf"
        if name in ("fmt.Sprint", "fmt.Sprintln", "errors.New"):
            return "concat"  # Sprint's blanks between operands are not text a form needs
        if name == "errors.Errorf":
            return "printf"
        if name == "status.Errorf":
            return "printf2"
        return None

    def run(self):
        masked = self.masked
        for start in self.hits():
            if start and (masked[start - 1].isalnum() or masked[start - 1] == "_"):
                continue
            try:
                m = self.FN_AT.match(masked, start)
                if m:
                    if self.word_start(start):
                        self.fn_site(m)
                    continue
                m = self.METH_AT.match(masked, start)
                if m:
                    r = self.RECEIVER.search(masked, max(0, start - 200), start)
                    if r:
                        recv, head = r.group(1), r.start()
                        if recv is None:
                            recv, head = self.chain_head(r.start())
                        self.method_site(m, recv, head)
            except (ValueError, IndexError):
                continue

    def fn_site(self, m):
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return
        args = self.args(open_pos, close)
        line = self.line_of(m.start())
        fn = m.group("fn")
        if not args:
            return
        if fn == "fmt.Errorf":
            self.ctx.add(line, fn, "error", "", self.tmpl(args), self.fmt(args[0], "printf"))
        elif fn in ("status.Errorf", "status.Error"):
            if len(args) < 2:
                return
            style = "printf" if fn.endswith("f") else None
            self.ctx.add(line, fn, "error", self.code(*args[0]), self.tmpl(args[1:]), self.fmt(args[1], style))
        else:  # errors.New, panic
            self.ctx.add(line, fn, "error", "", self.tmpl(args), self.expr(*args[0]))

    def chain_head(self, close):
        """For x.WithError(e).Error(...): the first name of the chain whose last link before the
        method closes at close, and where that name starts."""
        m = self.masked
        p, head, start = close, "", close

        def back_over_blanks(q):
            while q >= 0 and m[q].isspace():
                q -= 1
            return q

        for _ in range(20):  # links of the chain
            if m[p] == ")":
                depth, lo = 0, max(0, p - 2000)
                while p >= lo:
                    depth += m[p] in ")]}"
                    depth -= m[p] in "([{"
                    if depth == 0:
                        break
                    p -= 1
                if depth:
                    break
                p = back_over_blanks(p - 1)
            end = p + 1
            while p >= 0 and (m[p].isalnum() or m[p] == "_"):
                p -= 1
            if end == p + 1:
                break
            head, start = m[p + 1:end], p + 1
            p = back_over_blanks(p)
            if p < 0 or m[p] != ".":
                break
            p = back_over_blanks(p - 1)
            if p < 0:
                break
        return head, start

    def method_site(self, m, recv, head):
        """A logger's method: log.Fatalf, logrus' Errorf, slog.Error, l.Warn, x.WithError(e).Error."""
        meth = m.group("meth")
        if recv in ("status", "errors", "fmt"):
            return
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return
        args = self.args(open_pos, close)
        msg_arg = 1 if meth.endswith("Context") else 0
        if len(args) <= msg_arg:
            return
        a = self.trim(*args[msg_arg])
        call = self.call_at(*a)
        if self.literal(*a) is None and not (call and self.call_kind(call[0])):
            return  # not a message: an error value, or not a logger at all
        level = "hint" if meth.startswith("Warn") else "error"
        style = "printf" if meth.endswith("f") else None
        site = "%s.%s" % (recv, meth) if recv else "." + meth
        self.ctx.add(self.line_of(head), site, level, "", self.tmpl(args[msg_arg:]),
                     self.fmt(args[msg_arg], style))


class RustFile(Scanner):
    STRING = re.compile(r'"(?:[^"\\]|\\[\s\S])*"')
    CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:u\{[0-9a-fA-F_]{1,8}\}|x[0-9a-fA-F]{2}|[^\n]))'")
    RAW = re.compile(r'r(#*)"[\s\S]*?"\1')
    CALL = re.compile(r"(?:::)?[A-Za-z_]\w*(?:\s*(?:::|\.)\s*[A-Za-z_]\w*)*\s*!?\s*[(\[{]")
    SUFFIX = re.compile(r"\s*(?:\.\s*(?:to_string|to_owned|into|as_str|as_ref)\s*\(\s*\)\s*)+")
    CONCAT_OPS = ()
    KEYWORDS = ("panic", "anyhow", "bail", "ensure", "error", "warn", "#[", "expect")
    MAC_AT = re.compile(r"(?P<base>panic|anyhow|bail|ensure|error|warn|unreachable|todo|unimplemented)"
                        r"\s*!\s*[(\[{]")
    PATH_BEFORE = re.compile(r"(?:\w+\s*::\s*)+$")
    ATTR_AT = re.compile(r"#\[\s*error\s*\(")
    EXPECT_AT = re.compile(r"expect\s*\(")
    DOT_BEFORE = re.compile(r"\.\s*$")
    PREFILTER = re.compile(r"panic|anyhow|bail|ensure|error|warn|expect")
    CFG_TEST = re.compile(r"#\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")
    FIELD_ARG = re.compile(r"\s*(?:[%?]|\w+(?:\.\w+)*\s*=|target\s*:|parent\s*:|name\s*:)")

    def raw_at(self, text, p):
        """A raw string r"..." or r#"..."# (b-prefixed too) whose quote is at p."""
        s = p
        while s > 0 and text[s - 1] == "#":
            s -= 1
        if s == 0 or text[s - 1] != "r":
            return None
        s -= 1
        start = s - 1 if s > 0 and text[s - 1] == "b" else s
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return None
        m = self.RAW.match(text, s)
        return ("raw", start, m.end()) if m else None

    @staticmethod
    def decode(chunk, kind):
        body = chunk[1:] if chunk.startswith("b") else chunk
        if kind == "raw":
            body = body[1:]  # the r
            h = len(body) - len(body.lstrip("#"))
            return body[h + 1:len(body) - h - 1]
        return _RS_UNESCAPE(body[1:-1])

    def call_kind(self, name):
        if name in ("format!", "format_args!", "anyhow!", "anyhow::anyhow!"):
            return "brace"
        if name == "concat!":
            return "concat"
        return None

    def test_blocks(self):
        """The spans of `#[cfg(test)] mod name { ... }`: unit tests, skipped like test files."""
        spans = []
        for m in self.CFG_TEST.finditer(self.masked):
            close = self.close_of(m.end() - 1)
            spans.append((m.start(), close if close > 0 else len(self.masked)))
        return spans

    def run(self):
        masked = self.masked
        tests = self.test_blocks()
        for start in self.hits():
            if any(a <= start < b for a, b in tests):
                continue
            try:
                if masked.startswith("#[", start):
                    m = self.ATTR_AT.match(masked, start)
                    if m:
                        self.attr_site(m)
                    continue
                if not self.word_start(start):
                    continue
                m = self.MAC_AT.match(masked, start)
                if m:
                    path = self.PATH_BEFORE.search(masked, max(0, start - 120), start)
                    self.macro_site(m, re.sub(r"\s+", "", path.group()) if path else "")
                    continue
                m = self.EXPECT_AT.match(masked, start)
                if m and self.DOT_BEFORE.search(masked, max(0, start - 100), start):
                    self.expect_site(m)
            except (ValueError, IndexError):
                continue

    def word_start(self, p):
        return p == 0 or not (self.masked[p - 1].isalnum() or self.masked[p - 1] == "_")

    def first_message(self, args):
        for a in args:
            if self.literal(*a) is not None:
                return a
            if self.FIELD_ARG.match(self.masked, a[0]):
                continue
            return None
        return None

    def call_args(self, m):
        open_pos = m.end() - 1
        close = self.close_of(open_pos)
        if close < 0:
            return None, None
        return self.args(open_pos, close), close

    def attr_site(self, m):
        args, close = self.call_args(m)
        if not args or self.literal(*args[0]) is None:
            return  # #[error(transparent)]
        self.ctx.add(self.line_of(m.start()), "#[error]", "error", self.variant_after(close),
                     self.src(*args[0]), self.fmt(args[0], "brace"))

    def expect_site(self, m):
        args, _ = self.call_args(m)
        if not args:
            return
        self.ctx.add(self.line_of(m.start()), ".expect", "error", "", self.src(*args[0]), self.expr(*args[0]))

    def macro_site(self, m, path):
        base = m.group("base")
        if base in ("unreachable", "todo", "unimplemented"):
            return
        args, _ = self.call_args(m)
        if args is None:
            return
        line = self.line_of(m.start())
        site = path + base + "!"
        add = self.ctx.add
        if base in ("error", "warn"):
            a = self.first_message(args)
            level = "hint" if base == "warn" else "error"
            if a is None:
                add(line, site, level, "", self.tmpl(args), None)
            else:
                add(line, site, level, "", self.tmpl(args[args.index(a):]), self.fmt(a, "brace"))
            return
        if base == "ensure":
            if not args:
                return
            if len(args) == 1:
                add(line, site, "error", "", self.src(*args[0]), None)  # anyhow's own text only
            else:
                add(line, site, "error", "", self.tmpl(args[1:]), self.fmt(args[1], "brace"))
            return
        if not args:
            add(line, site, "error", "", "", None)
            return
        style = "brace" if self.literal(*args[0]) is not None else None
        add(line, site, "error", "", self.tmpl(args), self.fmt(args[0], style))

    def variant_after(self, close):
        """The name of the enum variant or struct an #[error] attribute stands on."""
        m = self.masked
        p = m.find("]", close)
        if p < 0:
            return ""
        p += 1
        while True:
            while p < len(m) and m[p].isspace():
                p += 1
            if m.startswith("#[", p):
                c = self.close_of(p + 1)
                if c < 0:
                    return ""
                p = c + 1
                continue
            break
        words = re.match(r"(?:pub(?:\s*\([^)]*\))?\s+)?(?:(struct|enum)\s+)?(\w+)", m[p:p + 200])
        if not words:
            return ""
        if words.group(1):
            return words.group(2)
        variant = words.group(2)
        for e in reversed(list(re.finditer(r"\benum\s+(\w+)[^{;]*\{", m[max(0, close - 20000):close]))):
            start = max(0, close - 20000) + e.end() - 1
            end = self.close_of(start)
            if end < 0 or end > close:
                return e.group(1) + "::" + variant
        return variant


SCANNERS = {"cpp": CppFile, "go": GoFile, "rust": RustFile}

# ---------------------------------------------------------------------------------------------
# The tree.


def excluded(rel, patterns, is_dir=False):
    path = "/" + rel + ("/" if is_dir else "")
    name = os.path.basename(rel)
    for pat in patterns:
        if fnmatch.fnmatchcase(path, pat) or (not is_dir and fnmatch.fnmatchcase(name, pat)):
            return True
    return False


def iter_files(root, langs, patterns):
    exts = {e for l in langs for e in LANG_EXTS[l]}
    for dirpath, dirnames, filenames in os.walk(root):
        reldir = os.path.relpath(dirpath, root)
        reldir = "" if reldir == "." else reldir.replace(os.sep, "/")
        keep = []
        for d in sorted(dirnames):
            rel = (reldir + "/" + d) if reldir else d
            if d.startswith(".") or d in ("node_modules", "__pycache__"):
                continue
            if excluded(rel, patterns, is_dir=True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            ext = os.path.splitext(f)[1].lower() if not f.endswith(".c++") else ".c++"
            if ext not in exts:
                continue
            rel = (reldir + "/" + f) if reldir else f
            if excluded(rel, patterns):
                continue
            yield rel, EXT_LANG[ext]


def extract_file(root, rel, lang, stats):
    path = os.path.join(root, rel)
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            stats["files_too_large"] += 1
            return []
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        stats["files_unreadable"] += 1
        return []
    stats["files_" + lang] += 1
    ctx = FileContext(rel, lang, stats)
    if lang == "python":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pf = PyFile(data, ctx)
                pf.run()
        except (SyntaxError, ValueError, RecursionError):
            stats["python_parse_errors"] += 1
            return []
        return ctx.finish()
    text = data.decode("utf-8", "replace")
    cls = SCANNERS[lang]
    if not cls.PREFILTER.search(text):
        return []
    cls(text, ctx).run()
    return ctx.finish()


def _work(job):
    root, rel, lang = job
    counts = collections.Counter()
    return extract_file(root, rel, lang, counts), counts


def extract_tree(root, langs=None, excludes=(), default_excludes=True, stats=None, jobs=1):
    """Every error site under root, as a list of row dicts (see the module's doc)."""
    langs = list(langs) if langs else list(LANG_EXTS)
    for l in langs:
        if l not in LANG_EXTS:
            raise ValueError("unknown language %r (known: %s)" % (l, ", ".join(LANG_EXTS)))
    patterns = list(excludes) + (list(DEFAULT_EXCLUDES) if default_excludes else [])
    if stats is None:
        stats = {}
    counts = collections.Counter()
    rows = []
    files = [(root, rel, lang) for rel, lang in iter_files(root, langs, patterns)]
    gc_was_on = gc.isenabled()
    gc.disable()  # ast trees hold no cycles; collecting while building them costs a third
    try:
        if jobs and jobs > 1 and len(files) > jobs:
            methods = multiprocessing.get_all_start_methods()
            mp = multiprocessing.get_context("fork" if "fork" in methods else None)
            with mp.Pool(jobs, initializer=gc.disable) as pool:
                for got, c in pool.imap(_work, files, chunksize=4):
                    rows.extend(got)
                    counts.update(c)
        else:
            for root_, rel, lang in files:
                rows.extend(extract_file(root_, rel, lang, counts))
    finally:
        if gc_was_on:
            gc.enable()
    for k in ("sites", "dropped_no_text", "dropped_weak", "dropped_duplicate", "python_parse_errors"):
        counts.setdefault(k, 0)
    stats.update(counts)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout", help="the source tree to read")
    ap.add_argument("--lang", default=",".join(LANG_EXTS),
                    help="languages to read, comma-separated (default: all of %(default)s)")
    ap.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="also skip paths matching GLOB (matched against /relative/path and the file name)")
    ap.add_argument("--no-default-excludes", action="store_true",
                    help="read tests, examples, docs, benchmarks and vendored folders too")
    ap.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 16),
                    help="processes reading files (default: the CPUs, %(default)s)")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.checkout):
        ap.error("%s is not a folder" % a.checkout)
    langs = [l.strip() for l in a.lang.split(",") if l.strip()]
    stats = {}
    try:
        rows = extract_tree(a.checkout, langs, a.exclude, not a.no_default_excludes, stats, a.jobs)
    except ValueError as e:
        ap.error(str(e))
    out = sys.stdout
    out.reconfigure(encoding="utf-8")
    try:
        for r in rows:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
        out.flush()
    except BrokenPipeError:  # the reader stopped early (| head)
        sys.stdout = None
    files = ", ".join("%s %d" % (l, stats.get("files_" + l, 0)) for l in langs)
    print("extract: %d sites from %s files; dropped %d without message text, %d with too weak a form, "
          "%d repeating a form of their file; %d Python files did not parse" % (
              stats["sites"], files, stats["dropped_no_text"], stats["dropped_weak"],
              stats["dropped_duplicate"], stats["python_parse_errors"]) +
          ("; %d files over 2 MiB skipped" % stats["files_too_large"] if stats.get("files_too_large") else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
