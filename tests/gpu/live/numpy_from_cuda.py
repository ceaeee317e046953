# An evaluation step that hands a GPU tensor straight to NumPy: PyTorch refuses to convert a CUDA
# tensor. A mistake in the program's own code: unclassified, with the program's message.
import torch
print("evaluating batch 0", flush=True)
logits = torch.randn(8, 10, device="cuda")
preds = logits.argmax(dim=-1)
import numpy as np
accuracy = np.mean(preds.numpy() == np.arange(8))
print("accuracy", accuracy)
