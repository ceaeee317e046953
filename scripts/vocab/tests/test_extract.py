"""Tests of scripts/vocab/extract.py on the fixture tree next to this file.

    python3 -m unittest discover -s scripts/vocab/tests -t scripts/vocab   (from the repository root)
"""
import json
import os
import re
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import extract  # noqa: E402

FIXTURE = os.path.join(HERE, "fixture")
SCRIPT = os.path.join(os.path.dirname(HERE), "extract.py")

# (origin, site, level, exc, forms) of every site the fixture holds, in output order.
EXPECTED = [
    ("csrc/attention.cpp:6", "TORCH_CHECK", "error", "c10::Error", ["must be a CUDA tensor"]),
    ("csrc/attention.cpp:13", "TORCH_CHECK", "error", "c10::Error",
     ["query and key must have the same dtype, got {*} and"]),
    ("csrc/attention.cpp:16", "TORCH_CHECK", "error", "c10::Error",
     ["Expected head_size % 8 == 0 to be true, but got false."]),
    ("csrc/attention.cpp:17", "TORCH_CHECK_VALUE", "error", "c10::ValueError", ["num_splits must be positive, got"]),
    ("csrc/attention.cpp:18", "TORCH_CHECK_EQ", "error", "",
     ["Check failed: q.dim() == 4 {*} query must be 4-dimensional"]),
    ("csrc/attention.cpp:19", "TORCH_INTERNAL_ASSERT", "error", "c10::Error",
     ["q.is_contiguous() INTERNAL ASSERT FAILED at {*}, please report a bug to PyTorch. "
      "expected a contiguous query after the copy"]),
    ("csrc/attention.cpp:21", "AT_ERROR", "error", "c10::Error",
     ["FlashAttention forward only supports head dimension at most 256, got"]),
    ("csrc/attention.cpp:24", "C10_THROW_ERROR", "error", "c10::ValueError", ["num_splits must be at most 128"]),
    ("csrc/attention.cpp:26", "TORCH_WARN", "hint", "c10::UserWarning", ["Dropout is ignored by the paged KV path"]),
    ("csrc/attention.cpp:31", "throw std::invalid_argument", "error", "std::invalid_argument",
     ["checkpoint path is empty"]),
    ("csrc/attention.cpp:34", "throw std::runtime_error", "error", "std::runtime_error",
     ["invalid device ordinal {*}: ordinals start at 0"]),
    ("csrc/attention.cpp:37", "throw std::runtime_error", "error", "std::runtime_error",
     ["cannot load kernel image {*} on device"]),
    ("csrc/ggml_nccl.c:8", "GGML_ASSERT", "error", "", ["GGML_ASSERT(t->ne[0] % 32 == 0) failed"]),
    ("csrc/ggml_nccl.c:11", "GGML_ABORT", "error", "", ["fatal error: unsupported tensor type {*} (n = {*})"]),
    ("csrc/ggml_nccl.c:13", "LLAMA_LOG_ERROR", "error", "", [": failed to load model from"]),
    ("csrc/ggml_nccl.c:17", "WARN", "error", "", ["Cuda failure {*} '{*}'"]),
    ("csrc/ggml_nccl.c:18", "fprintf(stderr)", "error", "", ["CUDA error: {*} at {*}:"]),
    ("csrc/raylet.cc:8", "RAY_CHECK", "error", "", ["Check failed: port > 0 Invalid port {*} for the node manager"]),
    ("csrc/raylet.cc:9", "RAY_CHECK", "error", "", ["Check failed: !node_id.empty()"]),
    ("csrc/raylet.cc:10", "RAY_CHECK_OK", "error", "",
     ["Check failed: gcs_client_->Connect(io_service_) Status not OK: {*} Failed to connect to the GCS at"]),
    ("csrc/raylet.cc:12", "RAY_CHECK_OK", "error", "", ["Check failed: status Status not OK:"]),
    ("csrc/raylet.cc:13", "RAY_CHECK_EQ", "error", "",
     ["Check failed: RAY_PREDICT_TRUE(_left_ == _right_) {*} vs {*}Worker pool has {*} workers"]),
    ("csrc/raylet.cc:17", "RAY_LOG(FATAL)", "error", "", ["Port {*} is out of the range of TCP ports"]),
    ("csrc/raylet.cc:19", "RAY_LOG(ERROR)", "error", "", ["Failed to register node {*} with the GCS"]),
    ("csrc/runtime.cu:6", "ORT_ENFORCE", "error", "onnxruntime::OnnxRuntimeException",
     ["opset >= 7 was false. Opset {*} is not supported"]),
    ("csrc/runtime.cu:7", "ORT_THROW", "error", "onnxruntime::OnnxRuntimeException", ["Tensor {*} has no elements"]),
    ("csrc/runtime.cu:9", "ORT_MAKE_STATUS", "error", "INVALID_ARGUMENT", ["Invalid tensor size {*} for"]),
    ("csrc/runtime.cu:11", "TLLM_CHECK_WITH_INFO", "error", "tensorrt_llm::common::TllmException",
     ["Size {*} must be a multiple of 16 for"]),
    ("csrc/runtime.cu:13", "TLLM_THROW", "error", "tensorrt_llm::common::TllmException",
     ["Unsupported opset {*} for the XQA kernel"]),
    ("csrc/runtime.cu:16", "TLLM_CHECK", "error", "tensorrt_llm::common::TllmException",
     ["[TensorRT-LLM][ERROR] Assertion failed: name != nullptr"]),
    ("csrc/status.cc:9", "CHECK", "error", "", ["Check failed: world_size > 0 world size must be positive"]),
    ("csrc/status.cc:10", "CHECK_LT", "error", "", ["Check failed: rank < world_size {*} rank out of range for"]),
    ("csrc/status.cc:13", "LOG(ERROR)", "error", "", ["Failed to initialize communicator {*} on rank"]),
    ("csrc/status.cc:15", "LOG(WARNING)", "hint", "", ["NCCL_P2P_DISABLE is set; peer-to-peer transfers are off"]),
    ("csrc/status.cc:18", "absl::InvalidArgumentError", "error", "InvalidArgument",
     ["Communicator name is empty for rank"]),
    ("csrc/status.cc:21", "absl::NotFoundError", "error", "NotFound", ["No device found for rank {*} of"]),
    ("csrc/status.cc:27", "errors::Internal", "error", "Internal", ["Negative allocation request: {*} bytes"]),
    ("csrc/status.cc:28", "InvalidArgument", "error", "InvalidArgument",
     ["Allocation of {*} bytes exceeds the {*} pool limit"]),
    ("csrc/storage_view.cc:8", "THROW_RUNTIME_ERROR", "error", "std::runtime_error", ["CUDA failed with error"]),
    ("csrc/storage_view.cc:14", "THROW_INVALID_ARGUMENT", "error", "std::invalid_argument",
     ["current size ({*}) is not divisible by the known size ({*})"]),
    ("csrc/storage_view.cc:18", "THROW_RUNTIME_ERROR", "error", "std::runtime_error", ["failed to allocated memory"]),
    ("pkg/quant.py:12", "raise ValueError", "error", "ValueError", ["Unknown quantization method: {*}. Choose one of"]),
    ("pkg/quant.py:18", "raise ValueError", "error", "ValueError",
     ["group_size must be a multiple of 32, got {*} for {*}-bit weights"]),
    ("pkg/quant.py:21", "raise NotImplementedError", "error", "NotImplementedError",
     ["Only {*}-bit and {*}-bit weights are supported, not"]),
    ("pkg/quant.py:30", "raise RuntimeError", "error", "RuntimeError",
     ["Checkpoint {*} does not name a dtype; pass --dtype explicitly"]),
    ("pkg/quant.py:32", "raise TypeError", "error", "TypeError", ["Supported dtypes are float16 and bfloat16"]),
    ("pkg/quant.py:36", "logger.error", "error", "", ["Failed to open checkpoint {*}:"]),
    ("pkg/quant.py:37", "logging.error", "error", "", ["Checkpoint loading failed for"]),
    ("pkg/quant.py:42", "assert", "error", "AssertionError", ["world_size must be positive"]),
    ("pkg/quant.py:45", "raise RuntimeError", "error", "RuntimeError", ["Cannot shard tensor of shape {*} across {*} ranks"]),
    ("pkg/quant.py:52", "warnings.warn", "hint", "RuntimeWarning",
     ["FP8 kernels need compute capability 8.9 or newer; falling back to FP16"]),
    ("pkg/quant.py:54", "logger.warning", "hint", "", ["Kernel fallback for {*}: using"]),
    ("pkg/quant.py:56", "warn_user", "hint", "UserWarning", ["Device sm_{*} is newer than this build knows"]),
    ("pkg/quant.py:57", "raise RuntimeError", "error", "RuntimeError",
     ["No kernel for this device", "No fallback kernel was configured"]),
    ("pkg/quant.py:68", "logger.exception", "error", "", ["Worker crashed while loading shard"]),
    ("pkg/quant.py:70", "raise KeyError", "error", "KeyError", ["layers.{*}.weight is missing"]),
    ("server/sched.go:15", "errors.New", "error", "", ["no runner is available for this model"]),
    ("server/sched.go:19", "fmt.Errorf", "error", "", ["model {*} requires at least one GPU, found {*}:"]),
    ("server/sched.go:22", "slog.Error", "error", "", ["failed to load model"]),
    ("server/sched.go:25", "slog.Warn", "hint", "", ["GPU memory is low, offloading layers to the CPU"]),
    ("server/sched.go:26", "logrus.Errorf", "error", "", ["scheduler could not place model {*} on {*} GPUs"]),
    ("server/sched.go:29", "log.Fatalf", "error", "", ["invalid model name"]),
    ("server/sched.go:32", "panic", "error", "", ["negative GPU count {*} for"]),
    ("server/sched.go:34", "status.Errorf", "error", "codes.NotFound", ["model {*} not found in the registry"]),
    ("server/sched.go:38", "errors.New", "error", "", ['model manifest is missing a "layers" field']),
    ("src/error.rs:7", "#[error]", "error", "BackendError::OutOfMemory",
     ["not enough GPU memory to load {*}: {*} bytes needed"]),
    ("src/error.rs:9", "#[error]", "error", "BackendError::UnsupportedDType", ["unsupported dtype {*} for op"]),
    ("src/error.rs:16", "#[error]", "error", "TokenizerError", ["tokenizer file {*} could not be read"]),
    ("src/lib.rs:5", "ensure!", "error", "", ["batch size must be positive, got"]),
    ("src/lib.rs:8", "bail!", "error", "", ["warmup failed for shard {*}:"]),
    ("src/lib.rs:10", ".expect", "error", "", ["MODEL_PATH must be set to a model folder"]),
    ("src/lib.rs:12", "anyhow!", "error", "", ["model folder {*} is empty"]),
    ("src/lib.rs:15", "panic!", "error", "", ["batch {*} exceeds the compiled maximum of"]),
    ("src/lib.rs:20", "tracing::error!", "error", "", ["Shard {*} failed to start"]),
    ("src/lib.rs:21", "tracing::warn!", "hint", "", ["Could not find tokenizer config locally"]),
]

# Sites found and dropped: without message text (raise ValueError; a #define'd TORCH_CHECK,
# GGML_ASSERT, RAY_CHECK and TLLM_CHECK with the condition alone; RAY_CHECK_NE without a message;
# throw std::runtime_error(e.what()); fmt.Errorf("%w", err); ensure!(cond)), with too weak a form (f"Error: {value}", "Error: " + why), repeating a form of
# their file (the second "group_size must be ..." and "query and key must ...").
EXPECTED_COUNTS = {
    "sites": len(EXPECTED), "dropped_no_text": 9, "dropped_weak": 2, "dropped_duplicate": 2,
    "python_parse_errors": 1, "files_python": 2, "files_cpp": 6, "files_go": 1, "files_rust": 2,
}
SKIPPED_FILES = ("pkg/tests/test_quant.py", "pkg/test_helpers.py", "docs/conf.py", "csrc/kernels_test.cc",
                 "server/sched_test.go")


class FixtureTree(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stats = {}
        cls.rows = extract.extract_tree(FIXTURE, stats=cls.stats)

    def test_rows_are_exactly_the_sites_of_the_fixture(self):
        got = [(r["origin"], r["site"], r["level"], r["exc"], r["forms"]) for r in self.rows]
        self.assertEqual(got, EXPECTED)

    def test_dropped_sites_and_unparsable_files_are_counted(self):
        self.assertEqual({k: self.stats.get(k) for k in EXPECTED_COUNTS}, EXPECTED_COUNTS)

    def test_rows_have_the_contract_keys(self):
        for r in self.rows:
            self.assertEqual(list(r), ["origin", "lang", "site", "level", "exc", "template", "forms"])
            self.assertRegex(r["origin"], r"^[^:]+:\d+$")
            self.assertIn(r["lang"], ("python", "cpp", "go", "rust"))
            self.assertIn(r["level"], ("error", "hint"))
            self.assertTrue(r["template"])
            self.assertLessEqual(len(r["template"]), 400)
            self.assertNotRegex(r["template"], r"\s\s|\n")

    def test_templates_are_the_source_expressions(self):
        by_origin = {r["origin"]: r["template"] for r in self.rows}
        self.assertEqual(by_origin["pkg/quant.py:18"],
                         '"group_size must be a multiple of 32, " "got %d for %d-bit weights" % (group_size, bits)')
        # A message built in a variable is shown as it was built.
        self.assertEqual(by_origin["pkg/quant.py:30"],
                         'f"Checkpoint {path} does not name a dtype" + "; pass --dtype explicitly"')
        self.assertEqual(by_origin["csrc/attention.cpp:13"],
                         '"query and key must have the same dtype, got ", q.dtype(), " and ", k.dtype()')
        self.assertEqual(by_origin["csrc/status.cc:10"], '"rank out of range for " << name')
        # A RAY_LOG's template is its stream, after the calls chained to the logger.
        self.assertEqual(by_origin["csrc/raylet.cc:19"], '"Failed to register node " << node_id << " with the GCS"')
        self.assertEqual(by_origin["csrc/raylet.cc:9"], "!node_id.empty()")
        self.assertEqual(by_origin["csrc/runtime.cu:16"], "name != nullptr")
        self.assertEqual(by_origin["csrc/storage_view.cc:8"],
                         '"CUDA failed with error " + std::string(cudaGetErrorString(code))')

    def test_forms_never_start_or_end_with_a_placeholder_and_are_strong(self):
        for r in self.rows:
            for f in r["forms"]:
                self.assertFalse(f.startswith("{*}") or f.endswith("{*}"), f)
                self.assertEqual(f, f.strip(), f)
                self.assertNotIn("  ", f)
                self.assertNotRegex(f, r"\{\*\}\s*\{\*\}")
                self.assertTrue(extract.strong_form(f), f)

    def test_forms_are_unique_within_a_file(self):
        seen = set()
        for r in self.rows:
            path = r["origin"].rsplit(":", 1)[0]
            for f in r["forms"]:
                self.assertNotIn((path, f), seen)
                seen.add((path, f))

    def test_tests_docs_and_comments_are_skipped(self):
        paths = {r["origin"].rsplit(":", 1)[0] for r in self.rows}
        for p in SKIPPED_FILES:
            self.assertNotIn(p, paths)
        text = json.dumps(self.rows)
        for never in ("never listed", "a comment is not a site", "inside a string", "no site",
                      "informational", "loaded", "does not parse"):
            self.assertNotIn(never, text)

    def test_default_excludes_can_be_turned_off(self):
        stats = {}
        rows = extract.extract_tree(FIXTURE, langs=["python", "go", "cpp"], default_excludes=False, stats=stats)
        paths = {r["origin"].rsplit(":", 1)[0] for r in rows}
        self.assertTrue(set(SKIPPED_FILES) <= paths, paths)

    def test_languages_and_excludes_narrow_the_walk(self):
        rows = extract.extract_tree(FIXTURE, langs=["go"])
        self.assertEqual({r["lang"] for r in rows}, {"go"})
        rows = extract.extract_tree(FIXTURE, langs=["cpp"], excludes=["*/status.cc", "*.cu", "/csrc/raylet.cc",
                                                                        "storage_*.cc"])
        self.assertEqual({r["origin"].split(":")[0] for r in rows}, {"csrc/attention.cpp", "csrc/ggml_nccl.c"})
        with self.assertRaises(ValueError):
            extract.extract_tree(FIXTURE, langs=["java"])


class Forms(unittest.TestCase):
    def form(self, text):
        return extract.render_form(text)

    def test_printf_conversions_become_placeholders(self):
        self.assertEqual(self.form(extract.printf_ph("%s: cannot allocate %zu bytes (%.2f%% of %lld, %p, %x)")),
                         ": cannot allocate {*} bytes ({*}% of {*}, {*}, {*})")
        self.assertEqual(self.form(extract.printf_ph("rank %*d of %-5s at %" "d")), "rank {*} of {*} at")
        self.assertEqual(self.form(extract.printf_ph("layer %(name)s failed with %r")), "layer {*} failed with")

    def test_go_verbs_become_placeholders(self):
        self.assertEqual(self.form(extract.printf_ph("pull %[1]q: %+v: %#v then %w %T %d%%")),
                         "pull {*}: {*}: {*} then {*}%")

    def test_brace_fields_become_placeholders(self):
        self.assertEqual(self.form(extract.brace_ph("tensor {name!r:>10} has {{shape}} {0} and {:?} {x:#?}")),
                         "tensor {*} has {shape} {*} and")
        self.assertEqual(self.form(extract.brace_ph("{}{} got {} {}")), "got")

    def test_placeholders_and_blanks_collapse(self):
        ph = extract.PH
        self.assertEqual(self.form("a " + ph + " " + ph + ph + "  b\tc"), "a {*} b c")
        self.assertEqual(self.form(ph + " : " + ph), ":")
        self.assertEqual(self.form("  lead " + ph), "lead")

    def test_the_first_line_with_enough_text_is_the_form(self):
        self.assertEqual(self.form("Error:\nThe model failed to load\nmore"), "The model failed to load")
        self.assertEqual(self.form("CUDA out of memory. Tried\nx"), "CUDA out of memory. Tried")
        self.assertEqual(self.form(extract.PH + " x\n" + extract.PH), "x")

    def test_a_literal_star_placeholder_is_a_placeholder(self):
        self.assertEqual(self.form("value {*} is not allowed"), "value {*} is not allowed")
        self.assertEqual(self.form("{*} is not allowed"), "is not allowed")

    def test_weak_forms(self):
        for weak in ("", ":", "Error:", "Error: {*} x", "{*} = {*}", "not a u8", "12345678 {*}"):
            self.assertFalse(extract.strong_form(weak), weak)
        for strong in ("Unknown quantization method:", "CUDA error: {*} at", "invalid model name"):
            self.assertTrue(extract.strong_form(strong), strong)


class CommandLine(unittest.TestCase):
    def test_writes_json_lines_and_counts_on_stderr(self):
        out = subprocess.run([sys.executable, "-B", SCRIPT, FIXTURE, "--lang", "python,go", "--jobs", "1"],
                             capture_output=True, text=True, check=True)
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        want = [e for e in EXPECTED if e[0].startswith(("pkg/", "server/"))]
        self.assertEqual([(r["origin"], r["site"], r["level"], r["exc"], r["forms"]) for r in rows], want)
        m = re.search(r"(\d+) sites .* dropped (\d+) without message text, (\d+) with too weak a form, "
                      r"(\d+) repeating a form of their file; (\d+) Python files did not parse", out.stderr)
        self.assertIsNotNone(m, out.stderr)
        self.assertEqual([int(g) for g in m.groups()], [len(want), 2, 1, 1, 1])

    def test_parallel_reading_gives_the_same_rows(self):
        out = subprocess.run([sys.executable, "-B", SCRIPT, FIXTURE, "--jobs", "2",
                              "--exclude", "*/csrc/*", "--no-default-excludes"],
                             capture_output=True, text=True, check=True)
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        origins = {r["origin"].split(":")[0] for r in rows}
        self.assertIn("pkg/tests/test_quant.py", origins)
        self.assertFalse(any(o.startswith("csrc/") for o in origins))

    def test_rejects_a_missing_folder_and_an_unknown_language(self):
        for args in ([FIXTURE + "/nope"], [FIXTURE, "--lang", "java"]):
            p = subprocess.run([sys.executable, "-B", SCRIPT] + args, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)


class KeptRows(unittest.TestCase):
    """build_table.py --keep: a table read whole from a distribution keeps the rows an earlier
    table read from files the distribution lacks, and only those."""

    def test_rows_of_files_the_source_lacks_are_kept_as_written(self):
        import tempfile
        build = os.path.join(os.path.dirname(SCRIPT), "build_table.py")
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "src", "torch"))
            with open(os.path.join(tmp, "src", "torch", "a.py"), "w") as f:
                f.write('def f(x):\n    raise ValueError("the new wording of this refusal: %s" % x)\n')
            old = os.path.join(tmp, "old.tsv")
            with open(old, "w") as f:
                f.write("# project: demo\n# file: torch/a.py 1111\n# file: c10/b.cpp 2222\n"
                        "torch/a.py:2\traise ValueError\terror\tunclassified\tdefault\tthe old wording of this refusal\t\n"
                        "c10/b.cpp:9\tTORCH_CHECK\terror\tcuda.oom\twords: x\ttried to allocate a \\t tab {*} here\t\n")
            out = os.path.join(tmp, "new.tsv")
            subprocess.run([sys.executable, "-B", build, "demo", "o/demo", os.path.join(tmp, "src"),
                            "--under", "torch", "--release", "1.0", "--commit", "abc", "--keep", old,
                            "--out", out], capture_output=True, text=True, check=True)
            with open(out) as f:
                text = f.read()
        self.assertIn("# file: c10/b.cpp 2222\n", text)
        self.assertNotIn("# file: torch/a.py", text)
        self.assertIn("torch/a.py:2\traise ValueError\terror\tunclassified\tdefault\tthe new wording of this refusal:", text)
        self.assertNotIn("the old wording", text)
        self.assertIn("c10/b.cpp:9\tTORCH_CHECK\terror\tcuda.oom\twords: x\ttried to allocate a \\t tab {*} here", text)
        self.assertIn("# causes: cuda.oom unclassified\n", text)


if __name__ == "__main__":
    unittest.main()
