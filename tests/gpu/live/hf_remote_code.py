# A service loads a local checkpoint whose config.json maps its classes to custom code
# (auto_map), without trust_remote_code: transformers refuses to run the repository's code
# ("... contains custom code which must be executed to correctly load the model ...
# trust_remote_code=True"). config.invalid: the service's loading option must change. Offline;
# SKIP without transformers.
import importlib.util, json, os, sys, tempfile
if importlib.util.find_spec("transformers") is None:
    print("SKIP: transformers is not installed in %s" % sys.executable)
    sys.exit(0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
model_dir = tempfile.mkdtemp(prefix="model-")
with open(os.path.join(model_dir, "config.json"), "w") as f:
    json.dump({"model_type": "custom_lm", "architectures": ["CustomLM"],
               "auto_map": {"AutoConfig": "configuration_custom.CustomConfig",
                            "AutoModelForCausalLM": "modeling_custom.CustomLM"}}, f)
with open(os.path.join(model_dir, "configuration_custom.py"), "w") as f:
    f.write("from transformers import PretrainedConfig\n"
            "class CustomConfig(PretrainedConfig):\n    model_type = 'custom_lm'\n")
print("loading model from", model_dir, flush=True)
from transformers import AutoConfig
config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
print(config)
