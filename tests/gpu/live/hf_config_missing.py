# A service loads its model from a local folder that holds no config.json (a download that never
# finished), offline (HF_HUB_OFFLINE=1). transformers 5 says "Unrecognized model in DIR. Should
# have a `model_type` key in its config.json" (ValueError; older releases: OSError "... does not
# appear to have a file named config.json"). model.load_failed: the model's config cannot be
# found; no architecture is unknown to the engine (not engine.model_unsupported), there is no
# config to name one. Without transformers in the interpreter the case cannot be provoked: the
# program says SKIP on its first line and exits 0 (run.sh skips it).
import importlib.util, os, sys, tempfile
if importlib.util.find_spec("transformers") is None:
    print("SKIP: transformers is not installed in %s" % sys.executable)
    sys.exit(0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from transformers import AutoConfig
model_dir = tempfile.mkdtemp(prefix="model-")
config = AutoConfig.from_pretrained(model_dir)
print(config)
