# Training with anomaly detection on: a loss whose backward pass produces NaN (sqrt at zero gives an
# infinite gradient, times zero gives NaN). PyTorch stops at the first backward function that
# returns NaN ("Function 'SqrtBackward0' returned nan values in its 0th output."), after a warning
# with the forward pass's traceback. A numerical fault of the program: unclassified.
import torch
torch.autograd.set_detect_anomaly(True)
w = torch.zeros(16, device="cuda", requires_grad=True)
for step in range(3):
    loss = (torch.sqrt(w * w) * 0.0 + torch.sqrt(w)).sum()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
    loss.backward()
