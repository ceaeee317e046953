# A service asks transformers for FlashAttention-2 (attn_implementation="flash_attention_2") where
# the flash_attn package is not installed: transformers refuses before loading ("the package
# flash_attn seems to be not installed"). python.module_missing. SKIP where flash_attn is installed.
import torch
from hf_tiny import tiny_llama, skip_if_installed
skip_if_installed("flash_attn")
folder = tiny_llama()
from transformers import AutoModelForCausalLM
print("loading", folder, "with flash_attention_2", flush=True)
model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.bfloat16,
                                             attn_implementation="flash_attention_2").to("cuda")
print(model.config.architectures)
