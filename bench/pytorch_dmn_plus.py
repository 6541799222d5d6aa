#!/usr/bin/env python3
"""PyTorch side-by-side benchmark of memgrad's dmn-plus on bAbI (OPTIONAL; see README.md).

The model computes the same function, at the same dims and with the same parameter count, as
memgrad's "dmn-plus" (models/qa/dmn_plus.hpp, dmn_gru.hpp): facts f_i = sum_j l_j o E[w_ij]
(the DMN+ paper's position encoding), dropout, input fusion (bidirectional GRU, directions
summed, padding facts keep the state), question GRU (last state over the real words), T = 3
episodic passes (z = [f o q; f o m; |f - q|; |f - m|], two-layer scoring, softmax over the real
facts, attention GRU, untied ReLU memory update), the one-step answer GRU from dropout(m^T) over
q, softmax cross-entropy summed over the batch plus (l2 / 2) |W|^2 over every weight but biases.
The GRUs are the paper's (reset gate after the recurrent product, one bias per gate), written as
matrix products; --gru native uses torch.nn.GRU / GRUCell instead (PyTorch's fused kernels,
packed sequences for the fusion layer; one more bias per gate, so 3H more parameters per GRU).

Training step as memgrad's trainer with the dmn-plus recipe: Adam (lr 1e-3, betas 0.9/0.999,
eps 1e-8), no clipping, the global gradient norm computed each step (memgrad logs it).

Batches: questions drawn with replacement from the training file of one bAbI task (the first
90 % of the file, as memgrad's babi task), each with the last --memory-size statements of its
story before it; padded to the batch's most facts and to the dataset's longest sentence.

Run with the system interpreter that has python3-torch:
    /usr/bin/python3 bench/pytorch_dmn_plus.py --threads 1 --json
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

def tokenize(text):
    return text.lower().replace(".", " ").replace("?", " ").split()


def load_task(data_dir, babi_set, task, memory_size):
    """Examples (statement token lists, question tokens, answer) of the train file's first 90 %,
    the vocabulary over train and test (nil = 0), and the longest sentence J."""
    folder = os.path.join(data_dir, "tasks_1-20_v1-2", babi_set)
    files = {s: glob.glob(os.path.join(folder, f"qa{task}_*_{s}.txt")) for s in ("train", "test")}
    if not files["train"] or not files["test"]:
        sys.exit(f"no qa{task} train/test files in {folder}")
    vocab = {"<nil>": 0}
    parsed = {}
    for split in ("train", "test"):
        examples, story = [], []
        with open(files[split][0]) as fh:
            for line in fh:
                ident, text = line.rstrip("\n").split(" ", 1)
                if ident == "1":
                    story = []
                if "\t" in text:
                    question, answer = text.split("\t")[:2]
                    q = tokenize(question)
                    for w in q + [answer.lower()]:
                        vocab.setdefault(w, len(vocab))
                    examples.append((list(story[-memory_size:]), q, answer.lower()))
                else:
                    s = tokenize(text)
                    for w in s:
                        vocab.setdefault(w, len(vocab))
                    story.append(s)
        parsed[split] = examples
    train = parsed["train"][: int(0.9 * len(parsed["train"]))]
    J = max(max((len(s) for e in parsed[k] for s in e[0]), default=1) for k in parsed)
    J = max(J, max(len(e[1]) for k in parsed for e in parsed[k]))
    return train, vocab, J


def make_batch(rng, train, vocab, J, size):
    """story [B, M, J], memory_mask [B, M], query [B, J], answer [B] (memgrad's babi batch)."""
    picks = [train[i] for i in rng.integers(0, len(train), size=size)]
    M = max(1, max(len(e[0]) for e in picks))
    story = np.zeros((size, M, J), np.int64)
    mask = np.zeros((size, M), np.float32)
    query = np.zeros((size, J), np.int64)
    answer = np.zeros(size, np.int64)
    for b, (facts, q, a) in enumerate(picks):
        for i, s in enumerate(facts):
            story[b, i, : len(s)] = [vocab[w] for w in s]
            mask[b, i] = 1
        query[b, : len(q)] = [vocab[w] for w in q]
        answer[b] = vocab[a]
    return {k: torch.from_numpy(v) for k, v in
            (("story", story), ("mask", mask), ("query", query), ("answer", answer))}


# ------------------------------------------------------------------------------------- layers

class PaperGru(nn.Module):
    """dmn_gru.hpp: W [in, G*H], U [H, G*H], b [G*H]; GRU (G = 3: u, r, candidate) or attention
    GRU (G = 2: r, candidate; the gate g replaces u). Xavier per block, zero bias."""

    def __init__(self, n_in, hidden, attention=False):
        super().__init__()
        self.H, self.attention = hidden, attention
        g = (2 if attention else 3) * hidden
        lw, lu = (6.0 / (n_in + hidden)) ** 0.5, (6.0 / (2 * hidden)) ** 0.5
        self.W = nn.Parameter(torch.empty(n_in, g).uniform_(-lw, lw))
        self.U = nn.Parameter(torch.empty(hidden, g).uniform_(-lu, lu))
        self.b = nn.Parameter(torch.zeros(g))

    def project(self, x):
        return torch.addmm(self.b, x.reshape(-1, x.shape[-1]), self.W).reshape(
            *x.shape[:-1], self.W.shape[1])

    def step(self, xw, h, gate=None):
        H = self.H
        hu = h @ self.U
        k = H if self.attention else 2 * H
        sig = torch.sigmoid(xw[:, :k] + hu[:, :k])
        r = sig if self.attention else sig[:, H:]
        cand = torch.tanh(xw[:, k:] + r * hu[:, k:])
        u = gate if self.attention else sig[:, :H]
        return h + u * (cand - h)


def xavier_linear(n_in, n_out):
    lin = nn.Linear(n_in, n_out)
    nn.init.xavier_uniform_(lin.weight)
    nn.init.zeros_(lin.bias)
    return lin


class DmnPlus(nn.Module):
    def __init__(self, V, J, d=80, H=80, passes=3, dropout=0.1, l2=0.001, native=False):
        super().__init__()
        self.V, self.J, self.d, self.H, self.T = V, J, d, H, passes
        self.p, self.l2, self.native = dropout, l2, native
        a = 3 ** 0.5
        self.E = nn.Parameter(torch.empty(V, d).uniform_(-a, a))
        with torch.no_grad():
            self.E[0].zero_()
        if native:
            self.fusion = nn.GRU(d, H, batch_first=True, bidirectional=True)
            self.question = nn.GRU(d, H, batch_first=True)
            self.answer_gru = nn.GRUCell(H, H)
        else:
            self.fwd, self.bwd = PaperGru(d, H), PaperGru(d, H)
            self.question = PaperGru(d, H)
            self.answer_gru = PaperGru(H, H)
        l1 = (6.0 / (5 * H)) ** 0.5
        self.W1_q = nn.Parameter(torch.empty(2 * H, H).uniform_(-l1, l1))
        self.W1_m = nn.Parameter(torch.empty(2 * H, H).uniform_(-l1, l1))
        self.b1 = nn.Parameter(torch.zeros(H))
        self.score = nn.Linear(H, 1, bias=False)   # b^(2) cancels in the softmax
        nn.init.xavier_uniform_(self.score.weight)
        self.episode = PaperGru(H, H, attention=True)
        self.update = nn.ModuleList([xavier_linear(3 * H, H) for _ in range(passes)])
        self.out = xavier_linear(H, V)
        # The DMN+ paper's position encoding l_jd = (1 - j/J) - (d/D)(1 - 2j/J).
        j = torch.arange(1, J + 1, dtype=torch.float32)[:, None] / J
        k = torch.arange(1, d + 1, dtype=torch.float32)[None, :] / d
        self.register_buffer("pe", (1 - j) - k * (1 - 2 * j))

    def forward(self, batch):
        story, mask, query, answer = batch["story"], batch["mask"], batch["query"], batch["answer"]
        B, M, J = story.shape
        H = self.H
        f = (self.E[story] * self.pe).sum(2)                      # [B, M, d]
        f = F.dropout(f, self.p, self.training)
        n_facts = mask.sum(1).long()
        q_len = (query != 0).sum(1)
        if self.native:
            packed = nn.utils.rnn.pack_padded_sequence(f, n_facts.clamp(min=1), batch_first=True,
                                                       enforce_sorted=False)
            out, _ = self.fusion(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=M)
            facts = out[..., :H] + out[..., H:]
            qp = nn.utils.rnn.pack_padded_sequence(self.E[query], q_len.clamp(min=1),
                                                   batch_first=True, enforce_sorted=False)
            q = self.question(qp)[1][0]
        else:
            outs = [[None] * M, [None] * M]
            for k, cell in enumerate((self.fwd, self.bwd)):
                xw = cell.project(f)
                h = f.new_zeros(B, H)
                for s in range(M):
                    i = s if k == 0 else M - 1 - s
                    new = cell.step(xw[:, i], h)
                    col = mask[:, i:i + 1]
                    h = new if bool(col.all()) else torch.where(col != 0, new, h)
                    outs[k][i] = h
            facts = torch.stack(outs[0], 1) + torch.stack(outs[1], 1)
            L = int(q_len.max())
            xw = self.question.project(self.E[query[:, :L]])
            h = f.new_zeros(B, H)
            for t in range(L):
                new = self.question.step(xw[:, t], h)
                col = (query[:, t:t + 1] != 0)
                h = new if bool(col.all()) else torch.where(col, new, h)
            q = h

        def features(v):
            v = v[:, None, :]
            return torch.cat([facts * v, (facts - v).abs()], 2)

        att_q = features(q) @ self.W1_q + self.b1
        xw_ep = self.episode.project(facts)
        all_facts = bool(mask.all())
        m = q
        for t in range(self.T):
            scores = self.score(torch.tanh(att_q + features(m) @ self.W1_m)).squeeze(2)
            if all_facts:
                g = torch.softmax(scores, 1)
            else:
                g = torch.softmax(scores.masked_fill(mask == 0, -1e30), 1) * mask
            h = f.new_zeros(B, H)
            for i in range(M):
                h = self.episode.step(xw_ep[:, i], h, g[:, i:i + 1])
            m = torch.relu(self.update[t](torch.cat([m, h, q], 1)))
        m = F.dropout(m, self.p, self.training)
        if self.native:
            a = self.answer_gru(q, m)
        else:
            a = self.answer_gru.step(self.answer_gru.project(q), m)
        logits = self.out(a)
        loss = F.cross_entropy(logits, answer, reduction="sum")
        penalty = sum((p * p).sum() for p in self.parameters() if p.dim() == 2)
        return loss + 0.5 * self.l2 * penalty, logits


# ------------------------------------------------------------------------------------- training

def train_step(model, opt, rng, data, args):
    """One step timed as memgrad's Trainer::train_step: forward (incl. the batch), backward,
    optimizer (global gradient norm, Adam, zero grad)."""
    t0 = time.perf_counter()
    batch = make_batch(rng, *data, args.batch)
    loss, _ = model(batch)
    loss_value = loss.item()
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in params])).item()
    opt.step()
    opt.zero_grad(set_to_none=True)
    t3 = time.perf_counter()
    return loss_value, grad_norm, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data/babi")
    ap.add_argument("--babi-set", default="en-10k")
    ap.add_argument("--babi-task", type=int, default=1)
    ap.add_argument("--memory-size", type=int, default=100)   # dmn-plus sets babi's to 100
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30, help="measured steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--hidden", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gru", choices=("paper", "native"), default="paper")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--train-steps", type=int, default=0,
                    help="sanity mode: train K steps, print the loss every --log-every steps")
    ap.add_argument("--log-every", type=int, default=100)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train, vocab, J = load_task(args.data, args.babi_set, args.babi_task, args.memory_size)
    data = (train, vocab, J)
    model = DmnPlus(len(vocab), J, d=args.hidden, H=args.hidden, native=args.gru == "native")
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    n_params = sum(p.numel() for p in model.parameters())

    if args.train_steps > 0:
        window, t_start = [], time.perf_counter()
        for step in range(1, args.train_steps + 1):
            loss, gn, *_ = train_step(model, opt, rng, data, args)
            window.append(loss)
            if step % args.log_every == 0 or step == 1 or step == args.train_steps:
                print(f"step {step:6d}  loss {loss:.4f}  mean(last {len(window)}) "
                      f"{sum(window) / len(window):.4f}  grad_norm {gn:.3f}  "
                      f"{time.perf_counter() - t_start:.1f}s", flush=True)
                window = []
        return 0

    fwd, bwd, opt_ms, total, cpu = [], [], [], [], []
    for step in range(args.warmup + args.steps):
        c0 = time.process_time()
        _, _, f, b, o = train_step(model, opt, rng, data, args)
        if step < args.warmup:
            continue
        cpu.append((time.process_time() - c0) * 1e3)
        fwd.append(f), bwd.append(b), opt_ms.append(o), total.append(f + b + o)
    med = statistics.median(total)
    out = {"framework": f"pytorch {torch.__version__}", "model": "dmn-plus", "task": "babi",
           "babi_set": args.babi_set, "babi_task": args.babi_task, "gru": args.gru,
           "batch": args.batch, "threads": torch.get_num_threads(), "parameters": n_params,
           "steps_measured": args.steps, "ms_per_step": med, "ms_per_step_min": min(total),
           "ms_per_step_max": max(total), "forward_ms": statistics.median(fwd),
           "backward_ms": statistics.median(bwd), "optimizer_ms": statistics.median(opt_ms),
           "steps_per_s": 1000.0 / med,
           # CPU time of the process per step (all its threads): robust to a loaded machine.
           "cpu_ms_per_step": statistics.median(cpu)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"dmn-plus on babi qa{args.babi_task} {args.babi_set} (pytorch {torch.__version__},"
              f" {args.gru} GRUs), batch {args.batch}, {out['threads']} threads, "
              f"{n_params} parameters")
        print(f"  ms per step   {med:8.2f}  [{min(total):.2f}, {max(total):.2f}]  "
              f"({1000.0 / med:.1f} steps/s)")
        print(f"  cpu ms/step   {out['cpu_ms_per_step']:8.2f}")
        print(f"  forward       {out['forward_ms']:8.2f}\n  backward      {out['backward_ms']:8.2f}\n"
              f"  optimizer     {out['optimizer_ms']:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
