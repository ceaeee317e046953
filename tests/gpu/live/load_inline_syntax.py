# A C++ extension built at run time (torch.utils.cpp_extension.load_inline) whose source does not
# compile: the build fails and load_inline raises. jit.build_failed.
import tempfile
from torch.utils.cpp_extension import load_inline
src = """
#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x, double s) { return x * s }
"""
load_inline(name="triage_scale_ext", cpp_sources=src, functions=["scale"],
            build_directory=tempfile.mkdtemp(prefix="ext-build-"), verbose=True)
