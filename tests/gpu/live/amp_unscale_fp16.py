# Mixed-precision training whose model was cast to float16 before GradScaler: its gradients are
# float16 and the scaler refuses to unscale them ("ValueError: Attempting to unscale FP16
# gradients."). unclassified: the program's own mistake (the master weights must stay float32).
import torch
model = torch.nn.Linear(256, 256).cuda().half()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
x = torch.randn(32, 256, device="cuda", dtype=torch.float16)
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(x).float().pow(2).mean()
scaler.scale(loss).backward()
print("backward done, stepping", flush=True)
scaler.step(opt)
scaler.update()
