# A service loads a checkpoint of an architecture newer than its transformers release: the
# folder's config.json names a model_type the installed release does not know. transformers
# refuses it ("... has model type `X` but Transformers does not recognize this architecture").
# engine.model_unsupported: a newer release of the library knows the architecture. Offline; SKIP
# without transformers.
from hf_local import model_folder
model_dir = model_folder({"model_type": "qwen9_moe", "architectures": ["Qwen9MoeForCausalLM"],
                          "hidden_size": 1024, "num_hidden_layers": 2})
print("loading model from", model_dir, flush=True)
from transformers import AutoConfig
config = AutoConfig.from_pretrained(model_dir)
print(config)
