# A token id past the end of the model's embedding table (a tokenizer with more tokens than the
# model) reaches the GPU's embedding lookup.
import torch

emb = torch.nn.Embedding(32000, 64).cuda()
ids = torch.tensor([[1, 5, 32003]], device="cuda")
print(emb(ids).sum().item())
