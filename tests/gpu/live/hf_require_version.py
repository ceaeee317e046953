# A service checks its pinned dependencies at start-up with transformers' own requirement check,
# and the installed torch is older than the pin: ImportError "torch>=99.0 is required for a
# normal functioning of this module, but found torch==...". python.version_conflict: two
# installed packages disagree on a declared requirement. SKIP without transformers.
import importlib.util, sys
if importlib.util.find_spec("transformers") is None:
    print("SKIP: transformers is not installed in %s" % sys.executable)
    sys.exit(0)
from transformers.utils.versions import require_version
print("checking requirements", flush=True)
require_version("torch>=99.0", "To fix: pip install -U torch")
print("requirements met")
