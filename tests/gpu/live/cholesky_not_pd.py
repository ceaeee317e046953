# A covariance estimate that is not positive-definite (too few samples for its dimension, so it is
# singular), factorised on the GPU: torch.linalg.cholesky refuses ("linalg.cholesky: The
# factorization could not be completed because the input is not positive-definite (the leading
# minor of order N is not positive-definite)"). The data, not the stack: unclassified, with the
# program's own words.
import torch
samples = torch.randn(8, 64, device="cuda", dtype=torch.float64)
cov = samples.T @ samples / 8
print("covariance", tuple(cov.shape), "rank", int(torch.linalg.matrix_rank(cov)), flush=True)
L = torch.linalg.cholesky(cov)
print("factor", L.shape)
