# A service imports a package that is not installed in its interpreter.
import importlib.util, sys
if importlib.util.find_spec("flash_attn") is not None:
    print("SKIP: flash_attn is installed in this interpreter")
    sys.exit(0)
print("loading attention backend", flush=True)
from flash_attn import flash_attn_func
print(flash_attn_func)
