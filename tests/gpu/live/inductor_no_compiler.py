# torch.compile (inductor) on a host whose PATH holds no C compiler (a slim image without gcc;
# run.sh gives the program a PATH of the interpreter's folder alone and unsets CC): Triton cannot
# build the small C module of its CUDA driver ("Failed to find C compiler"), so inductor's
# compilation fails (InductorError). jit.build_failed: a JIT build failed, and not for an
# architecture or toolkit gap; installing a compiler (or naming one in CC) fixes it.
import torch


def mlp(x, w1, w2):
    return torch.nn.functional.gelu(x @ w1) @ w2


x = torch.randn(256, 1024, device="cuda")
w1 = torch.randn(1024, 4096, device="cuda") / 32
w2 = torch.randn(4096, 1024, device="cuda") / 64
fast_mlp = torch.compile(mlp)
print("compiling the MLP block with torch.compile", flush=True)
y = fast_mlp(x, w1, w2)
torch.cuda.synchronize()
print("mean |y| = %.4f" % float(y.abs().mean()))
