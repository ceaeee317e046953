# A service loads a model in 4 bits (BitsAndBytesConfig) where bitsandbytes is not installed:
# transformers refuses and names the package to install. python.module_missing. SKIP where
# bitsandbytes is installed.
from hf_tiny import tiny_llama, skip_if_installed
skip_if_installed("bitsandbytes")
folder = tiny_llama()
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
print("loading", folder, "in 4 bits", flush=True)
model = AutoModelForCausalLM.from_pretrained(folder, quantization_config=BitsAndBytesConfig(load_in_4bit=True),
                                             device_map={"": 0})
print(model.get_memory_footprint())
