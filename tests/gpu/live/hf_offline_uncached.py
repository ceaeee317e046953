# transformers is offline (no network on this host) and the model is not in the local cache.
import os, tempfile
os.environ.setdefault("HF_HOME", tempfile.mkdtemp())
from transformers import AutoConfig
cfg = AutoConfig.from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")
print(cfg)
