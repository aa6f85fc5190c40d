"""A tiny transformers Trainer run on CPU, for test_hf_callback.py.

The model is a 2-layer GPT-2 built from a config (no download), trained on
random token ids. Run as a script (argv: out_dir steps fail_at) it trains
with the recorder's callback and a callback that raises at step fail_at: the
exception test runs it in a process of its own, since the HF callback
rescues such a recording with an exit hook.
"""

import sys

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments


class RandomTokens(Dataset):
    def __init__(self, n, length=16, vocab=128):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class FailAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise ValueError(f"bad batch at step {self.step}")


def train(out_dir, steps, callbacks):
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=128, n_positions=16, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    args = TrainingArguments(output_dir=out_dir, max_steps=steps, per_device_train_batch_size=4,
                             report_to=[], save_strategy="no", logging_strategy="no",
                             use_cpu=True, disable_tqdm=True, dataloader_num_workers=0)
    Trainer(model=GPT2LMHeadModel(config), args=args, train_dataset=RandomTokens(4 * steps),
            callbacks=callbacks).train()


if __name__ == "__main__":
    from stepscope.integrations.hf import StepscopeCallback
    out_dir, steps, fail_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    train(out_dir, steps, [StepscopeCallback(out_dir, wait=3, warmup=1, active=4), FailAt(fail_at)])
