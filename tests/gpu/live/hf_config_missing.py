# A service loads its model from a local folder that holds no config.json (a download that never
# finished), offline (HF_HUB_OFFLINE=1). transformers 5 says "Unrecognized model in DIR. Should
# have a `model_type` key in its config.json" (ValueError; older releases: OSError "... does not
# appear to have a file named config.json"). model.load_failed: the model's config cannot be
# found; no architecture is unknown to the engine (not engine.model_unsupported), there is no
# config to name one. Without transformers in the interpreter the case cannot be provoked: the
# program says SKIP on its first line and exits 0 (run.sh skips it).
from hf_local import model_folder
model_dir = model_folder()
from transformers import AutoConfig
config = AutoConfig.from_pretrained(model_dir)
print(config)
