# transformers is given a model folder that does not exist (a path mistyped in the service's
# configuration): it is no local folder, and as a Hub repo id it is not valid either, so
# from_pretrained raises OSError ("Repo id must be in the form 'repo_name' or
# 'namespace/repo_name'"). model.load_failed: the model's weights and config cannot be found.
import os, tempfile
os.environ.setdefault("HF_HOME", tempfile.mkdtemp())
from transformers import AutoModelForCausalLM
path = "/models/llama-3.1-8b-instruct/final"
print("loading model from %s" % path, flush=True)
model = AutoModelForCausalLM.from_pretrained(path, dtype="bfloat16", device_map="cuda")
print(model.config)
