# A fast tokenizer used in the main process, then a DataLoader forks its workers: the tokenizers
# library warns that it disables its parallelism "to avoid deadlocks", and the epoch completes.
# Benign: expected none. SKIP without the tokenizers package.
import importlib.util, sys
if importlib.util.find_spec("tokenizers") is None:
    print("SKIP: tokenizers is not installed in %s" % sys.executable)
    sys.exit(0)
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
import torch
from torch.utils.data import DataLoader

text = ["the quick brown fox jumps over the lazy dog"] * 200
tok = Tokenizer(models.BPE(unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=100, special_tokens=["[UNK]"]))
print("encoded", len(tok.encode_batch(text)), "lines", flush=True)

class Lines(torch.utils.data.Dataset):
    def __len__(self):
        return len(text)
    def __getitem__(self, i):
        return torch.tensor(tok.encode(text[i]).ids[:4] + [0] * (4 - len(tok.encode(text[i]).ids[:4])))

if __name__ == "__main__":
    total = 0
    for batch in DataLoader(Lines(), batch_size=32, num_workers=2):
        total += batch.shape[0]
    print("epoch done,", total, "samples")
