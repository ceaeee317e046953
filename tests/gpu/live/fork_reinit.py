# The parent initialises CUDA, then a multiprocessing pool forks workers that use CUDA: each
# worker raises "Cannot re-initialize CUDA in forked subprocess", and Pool.map raises it again in
# the parent. unclassified: a bug of the program's start method (spawn fixes it); no id of the
# taxonomy covers it.
import multiprocessing as mp
import torch


def embed(i):
    x = torch.full((1024,), float(i), device="cuda")
    return float(x.sum())


if __name__ == "__main__":
    warm = torch.zeros(1, device="cuda")  # CUDA is initialised in the parent
    print("parent on %s, forking 2 workers" % torch.cuda.get_device_name(0), flush=True)
    with mp.get_context("fork").Pool(2) as pool:
        print(pool.map(embed, range(8)))
