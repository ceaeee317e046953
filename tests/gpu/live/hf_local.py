# What the transformers cases share: they need transformers (a case says SKIP on its first line and
# exits 0 without it, which run.sh counts as skipped), run offline, and load from a local model
# folder that the case fills. Not a case itself (run.sh lists its cases by name).
import importlib.util, json, os, sys, tempfile


def model_folder(config=None, files=None):
    """A new local model folder, offline, with `config` as its config.json and `files` (name ->
    text) beside it; exits with SKIP where transformers is missing."""
    if importlib.util.find_spec("transformers") is None:
        print("SKIP: transformers is not installed in %s" % sys.executable)
        sys.exit(0)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    folder = tempfile.mkdtemp(prefix="model-")
    if config is not None:
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(config, f)
    for name, text in (files or {}).items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    return folder
