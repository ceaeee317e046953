# A training script passes torch.compile a mode it does not have ("max-autotune-fast"):
# PyTorch refuses it ("Unrecognized mode=..., should be one of: ..."). config.invalid: the
# program's own option is not one the library accepts.
import torch
model = torch.nn.Linear(64, 64).cuda()
print("compiling model", flush=True)
compiled = torch.compile(model, mode="max-autotune-fast")
print(compiled(torch.randn(8, 64, device="cuda")).sum().item())
