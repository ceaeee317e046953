# What the transformers cases that load real weights share: a tiny Llama saved to a local folder
# (random weights, two layers), offline. Not a case itself.
import importlib.util, sys, tempfile
from hf_local import model_folder


def tiny_llama():
    """The folder of a tiny Llama model with its weights; exits with SKIP without transformers."""
    folder = model_folder()
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def skip_if_installed(module):
    """Exits with SKIP where `module` is installed (the case provokes its absence)."""
    if importlib.util.find_spec(module) is not None:
        print("SKIP: %s is installed in %s; the case needs it absent" % (module, sys.executable))
        sys.exit(0)
