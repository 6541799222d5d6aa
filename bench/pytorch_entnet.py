#!/usr/bin/env python3
"""PyTorch side-by-side benchmark of memgrad's entnet on bAbI (OPTIONAL; see README.md).

The model computes the same function, at the same dims and with the same parameter count, as
memgrad's "entnet" (models/qa/entnet.hpp): embedding E [V + K, d] whose last K rows are the slots'
keys, multiplicative position masks for story and question (the story's drawn, the question's
ones), gate sigmoid(s.h + s.w + b), PReLU candidate (h U + b_U + s V + w W), per-slot
normalisation, padding sentences leaving h unchanged, output PReLU(q + u H) R with the candidate's
slopes (one set, as memgrad's default and the official code) and softmax attention of q over the
slots, cross-entropy summed over the batch. Training step as memgrad's trainer with the entnet
recipe: Adam (lr 0.01, betas 0.9/0.999, eps 1e-8), gradients clipped to global norm 40, nil row of
E and nil column of R re-zeroed.

Batches are drawn from the real bAbI training file, as memgrad's babi task draws them: 32
questions sampled with replacement from the first 90 % of the file, each with the last 70
statements of its story before it, padded to the batch's longest window.

Written the plain PyTorch way: nn.Module, autograd, torch.optim.Adam, batched over B and the K
slots, a Python loop over sentences. float32, CPU.

Run with the system interpreter that has python3-torch: /usr/bin/python3 bench/pytorch_entnet.py
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ----------------------------------------------------------------------------------------- data

def tokens(text):
    return text.lower().replace(".", " ").replace("?", " ").split()


def load(data_dir, babi_set, task, memory):
    """Questions of the training and test files of one task: (window of statements, question,
    answer) as word ids, with memgrad's vocabulary order (train file, then test)."""
    vocab = {"<nil>": 0}
    def ids(words):
        return [vocab.setdefault(w, len(vocab)) for w in words]
    files = [glob.glob(os.path.join(data_dir, "tasks_1-20_v1-2", babi_set,
                                    f"qa{task}_*_{split}.txt"))[0] for split in ("train", "test")]
    questions = []
    for path in files:
        story = []
        for line in open(path):
            num, text = line.rstrip("\n").split(" ", 1)
            if num == "1":
                story = []
            if "\t" in text:
                q, a, _ = text.split("\t")
                questions.append((list(story[-memory:]), ids(tokens(q)), ids([a.lower()])[0]))
            else:
                story.append(ids(tokens(text)))
        if path == files[0]:
            train = questions[: len(questions) - len(questions) // 10]  # 10 % held out
    longest = max(len(s) for q in questions for s in q[0] + [q[1]])
    return train, len(vocab), longest


def make_batch(rng, data, size, sentence_len):
    pick = [data[i] for i in rng.integers(0, len(data), size=size)]
    steps = max(1, max(len(p[0]) for p in pick))
    story = np.zeros((size, steps, sentence_len), np.int64)
    mask = np.zeros((size, steps), np.float32)
    query = np.zeros((size, sentence_len), np.int64)
    answer = np.zeros(size, np.int64)
    for b, (window, q, a) in enumerate(pick):
        for t, s in enumerate(window):
            story[b, t, : len(s)] = s
            mask[b, t] = 1
        query[b, : len(q)] = q
        answer[b] = a
    return (torch.from_numpy(story), torch.from_numpy(mask), torch.from_numpy(query),
            torch.from_numpy(answer))


# ---------------------------------------------------------------------------------------- model

def prelu(x, slope):
    """PReLU with one slope per feature of the last axis (F.prelu's channels are axis 1)."""
    return torch.where(x > 0, x, x * slope)


class EntNet(nn.Module):
    def __init__(self, vocab, sentence_len, dim=100, slots=20, std=0.1):
        super().__init__()
        self.vocab, self.slots = vocab, slots
        def normal(*shape):
            return nn.Parameter(torch.randn(*shape) * std)
        self.E = normal(vocab + slots, dim)
        self.story_mask = normal(sentence_len, dim)
        self.query_mask = nn.Parameter(torch.ones(sentence_len, dim))
        self.gate_bias = normal(slots)
        self.U, self.U_b = normal(dim, dim), normal(dim)
        self.V, self.W = normal(dim, dim), normal(dim, dim)
        self.prelu = nn.Parameter(torch.ones(dim))
        self.H = normal(dim, dim)
        self.R = normal(dim, vocab)
        self.zero_nil()

    @torch.no_grad()
    def zero_nil(self):
        self.E[0].zero_()
        self.R[:, 0].zero_()

    def forward(self, story, mask, query, answer):
        B, T, _ = story.shape
        keys = self.E[self.vocab:]                                        # [K, d]
        sent = (self.E[story] * self.story_mask).sum(2)                   # [B, T, d]
        q = (self.E[query] * self.query_mask).sum(1)                      # [B, d]
        sw = sent @ keys.t() + self.gate_bias                             # [B, T, K]
        sv = sent @ self.V                                                # [B, T, d]
        kw = keys @ self.W + self.U_b                                     # [K, d]
        h = keys.expand(B, -1, -1)
        for t in range(T):
            s_t = sent[:, t]
            g = torch.sigmoid(torch.bmm(h, s_t.unsqueeze(2)) + sw[:, t].unsqueeze(2))
            cand = prelu(h @ self.U + kw + sv[:, t].unsqueeze(1), self.prelu)
            fresh = F.normalize(h + g * cand, dim=2, eps=1e-12)
            h = torch.where(mask[:, t].view(B, 1, 1) > 0, fresh, h)
        p = torch.softmax(torch.bmm(h, q.unsqueeze(2)).squeeze(2), dim=1)
        u = torch.bmm(p.unsqueeze(1), h).squeeze(1)
        y = prelu(q + u @ self.H, self.prelu)
        return F.cross_entropy(y @ self.R, answer, reduction="sum")


def train_step(model, opt, rng, data, args, sentence_len):
    t0 = time.perf_counter()
    batch = make_batch(rng, data, args.batch, sentence_len)
    loss = model(*batch)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 40.0)
    opt.step()
    opt.zero_grad(set_to_none=False)
    model.zero_nil()
    t3 = time.perf_counter()
    return loss.item(), float(gn), (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30, help="measured steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--data", default="../shared/data/babi")
    ap.add_argument("--babi-set", default="en")
    ap.add_argument("--babi-task", type=int, default=1)
    ap.add_argument("--memory-size", type=int, default=70)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--train-steps", type=int, default=0,
                    help="sanity mode: train K steps, print the loss every --log-every steps")
    ap.add_argument("--log-every", type=int, default=100)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    data, vocab, sentence_len = load(args.data, args.babi_set, args.babi_task, args.memory_size)
    model = EntNet(vocab, sentence_len)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    n_params = sum(p.numel() for p in model.parameters())

    if args.train_steps > 0:
        window, t_start = [], time.perf_counter()
        for step in range(1, args.train_steps + 1):
            loss, gn, *_ = train_step(model, opt, rng, data, args, sentence_len)
            window.append(loss)
            if step % args.log_every == 0 or step == 1 or step == args.train_steps:
                print(f"step {step:6d}  loss {loss:.4f}  mean(last {len(window)}) "
                      f"{sum(window) / len(window):.4f}  grad_norm {gn:.3f}  "
                      f"{time.perf_counter() - t_start:.1f}s", flush=True)
                window = []
        return 0

    fwd, bwd, opt_ms, total = [], [], [], []
    for step in range(args.warmup + args.steps):
        _, _, f, b, o = train_step(model, opt, rng, data, args, sentence_len)
        if step < args.warmup:
            continue
        fwd.append(f), bwd.append(b), opt_ms.append(o), total.append(f + b + o)
    med = statistics.median(total)
    out = {"framework": f"pytorch {torch.__version__}", "model": "entnet", "task": "babi",
           "babi_set": args.babi_set, "babi_task": args.babi_task, "batch": args.batch,
           "threads": torch.get_num_threads(), "parameters": n_params,
           "steps_measured": args.steps, "ms_per_step": med, "ms_per_step_min": min(total),
           "ms_per_step_max": max(total), "forward_ms": statistics.median(fwd),
           "backward_ms": statistics.median(bwd), "optimizer_ms": statistics.median(opt_ms),
           "steps_per_s": 1000.0 / med}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"entnet on babi {args.babi_set} task {args.babi_task} "
              f"(pytorch {torch.__version__}), batch {args.batch}, {out['threads']} threads, "
              f"{n_params} parameters")
        print(f"  ms per step   {med:8.2f}  [{min(total):.2f}, {max(total):.2f}]  "
              f"({1000.0 / med:.1f} steps/s)")
        print(f"  forward       {out['forward_ms']:8.2f}\n"
              f"  backward      {out['backward_ms']:8.2f}\n"
              f"  optimizer     {out['optimizer_ms']:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
