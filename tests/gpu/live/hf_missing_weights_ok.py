# Benign: a classifier is loaded from a checkpoint of the bare encoder; transformers warns that the
# new head's weights were initialised fresh, as it does for every fine-tuning start.
import tempfile
import torch
from transformers import BertConfig, BertForSequenceClassification, BertModel

cfg = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                 intermediate_size=64)
folder = tempfile.mkdtemp()
BertModel(cfg).save_pretrained(folder)
model = BertForSequenceClassification.from_pretrained(folder).cuda()
print(model(torch.tensor([[1, 2, 3]], device="cuda")).logits.shape)
