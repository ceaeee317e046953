# A service loads a local checkpoint whose config.json maps its classes to custom code
# (auto_map), without trust_remote_code: transformers refuses to run the repository's code
# ("... contains custom code which must be executed to correctly load the model ...
# trust_remote_code=True"). config.invalid: the service's loading option must change. Offline;
# SKIP without transformers.
from hf_local import model_folder
model_dir = model_folder(
    {"model_type": "custom_lm", "architectures": ["CustomLM"],
     "auto_map": {"AutoConfig": "configuration_custom.CustomConfig",
                  "AutoModelForCausalLM": "modeling_custom.CustomLM"}},
    {"configuration_custom.py": "from transformers import PretrainedConfig\n"
                                "class CustomConfig(PretrainedConfig):\n    model_type = 'custom_lm'\n"})
print("loading model from", model_dir, flush=True)
from transformers import AutoConfig
config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
print(config)
