# A service loads its tokenizer from a local model folder that holds the config but no tokenizer
# files (a partial copy), offline. model.load_failed. Without transformers: SKIP.
import importlib.util, json, os, sys, tempfile
if importlib.util.find_spec("transformers") is None:
    print("SKIP: transformers is not installed in %s" % sys.executable)
    sys.exit(0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from transformers import AutoTokenizer
model_dir = tempfile.mkdtemp(prefix="model-")
with open(os.path.join(model_dir, "config.json"), "w") as f:
    json.dump({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 32000}, f)
tok = AutoTokenizer.from_pretrained(model_dir)
print(tok("hello"))
