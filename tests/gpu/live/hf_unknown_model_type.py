# A service loads a checkpoint of an architecture newer than its transformers release: the
# folder's config.json names a model_type the installed release does not know. transformers
# refuses it ("... has model type `X` but Transformers does not recognize this architecture").
# engine.model_unsupported: a newer release of the library knows the architecture. Offline; SKIP
# without transformers.
import importlib.util, json, os, sys, tempfile
if importlib.util.find_spec("transformers") is None:
    print("SKIP: transformers is not installed in %s" % sys.executable)
    sys.exit(0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
model_dir = tempfile.mkdtemp(prefix="model-")
with open(os.path.join(model_dir, "config.json"), "w") as f:
    json.dump({"model_type": "qwen9_moe", "architectures": ["Qwen9MoeForCausalLM"],
               "hidden_size": 1024, "num_hidden_layers": 2}, f)
print("loading model from", model_dir, flush=True)
from transformers import AutoConfig
config = AutoConfig.from_pretrained(model_dir)
print(config)
