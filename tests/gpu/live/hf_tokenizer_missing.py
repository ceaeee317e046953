# A service loads its tokenizer from a local model folder that holds the config but no tokenizer
# files (a partial copy), offline. model.load_failed. Without transformers: SKIP.
from hf_local import model_folder
model_dir = model_folder({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 32000})
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(model_dir)
print(tok("hello"))
