#!/usr/bin/env python3
"""PyTorch side-by-side benchmark of memgrad's grnn on codiesp (OPTIONAL; see README.md).

The model computes the same function, at the same dims and with the same parameter count, as
memgrad's "grnn" (models/text/grnn.hpp, models/text/grounded_gru.hpp) at the codiesp task's
default sizes: word embeddings [V, 192] (uniform +-0.5/192), the grounded GRU cell with L = 50
grounded and 128 control dimensions and semi-diagonal updates:
    r, u = sigmoid(x W_x[r,u] + b[r,u] + c W_c + [d_r g ; g B_r ; d_u g ; g B_u])
    h~   = tanh(x W_x[n] + b[n] + (r_c c) W_cn + [d_n (r_g g) ; (r_g g) B_n])
    h    = h~ + u (h_prev - h~)
the labels' logits from the last grounded state, logit(p) + b_out with
p = ((g + 1) / 2)(1 - 2e-6) + 1e-6, and the mean binary cross-entropy. Training step as
memgrad's trainer with the recurrent models' recipe: Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8),
gradients clipped to global norm 5. The input projection x W_x is one matrix product over all
words before the loop over time, as memgrad does (project_inputs).

Batches: 32 notes of 50 words each, the shape of memgrad's codiesp batches in the curriculum's
first epoch (every training note cut to 50 words; memgrad steps only the words a row has, and the
few notes shorter than 50 words after stop-word removal make some of its batches slightly
smaller). Word ids uniform over the vocabulary (6,077: the codiesp task's default vocabulary),
labels Bernoulli(0.07) (3.4 of 50 labels per note, as LS-50 on train).

Written the plain PyTorch way: nn.Module, autograd, torch.optim.Adam, a Python loop over the
words. float32, CPU.

Run with the system interpreter that has python3-torch: /usr/bin/python3 bench/grnn_torch.py
"""
import argparse
import json
import math
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6


class GroundedGru(nn.Module):
    def __init__(self, inputs, labels, control):
        super().__init__()
        L, H = labels, control
        G = L + H
        limit = math.sqrt(6.0 / (inputs + H + 3 * G))
        self.L, self.H, self.G = L, H, G
        self.W_x = nn.Parameter(torch.empty(inputs, 3 * G).uniform_(-limit, limit))
        self.W_c = nn.Parameter(torch.empty(H, 2 * G).uniform_(-limit, limit))
        self.W_cn = nn.Parameter(torch.empty(H, G).uniform_(-limit, limit))
        self.d = nn.Parameter(torch.zeros(3 * L))
        glorot = math.sqrt(6.0 / (L + 3 * H))
        self.B = nn.Parameter(torch.empty(L, 3 * H).uniform_(-glorot, glorot))
        b = torch.zeros(3 * G)
        b[: 2 * G] = 1.0
        self.b = nn.Parameter(b)

    def step(self, xw, g, c):
        L, H, G = self.L, self.H, self.G
        g_b = g @ self.B[:, : 2 * H]
        from_g = torch.cat([g * self.d[:L], g_b[:, :H], g * self.d[L:2 * L], g_b[:, H:]], 1)
        ru = torch.sigmoid(xw[:, : 2 * G] + c @ self.W_c + from_g)
        r_g, r_c, u = ru[:, :L], ru[:, L:G], ru[:, G:]
        g_reset, c_reset = r_g * g, r_c * c
        from_g_n = torch.cat([g_reset * self.d[2 * L:], g_reset @ self.B[:, 2 * H:]], 1)
        cand = torch.tanh(xw[:, 2 * G:] + c_reset @ self.W_cn + from_g_n)
        h = cand + u * (torch.cat([g, c], 1) - cand)
        return h[:, :L], h[:, L:]


class Grnn(nn.Module):
    def __init__(self, vocab, labels, embedding, control):
        super().__init__()
        self.embed = nn.Parameter(
            torch.empty(vocab, embedding).uniform_(-0.5 / embedding, 0.5 / embedding))
        self.cell = GroundedGru(embedding, labels, control)
        self.out_b = nn.Parameter(torch.zeros(labels))

    def forward(self, ids, targets):
        B, T = ids.shape
        x = F.embedding(ids.t(), self.embed)                    # [T, B, E]
        xw = torch.addmm(self.cell.b, x.reshape(T * B, -1), self.cell.W_x).view(T, B, -1)
        g = x.new_zeros(B, self.cell.L)
        c = x.new_zeros(B, self.cell.H)
        for t in range(T):
            g, c = self.cell.step(xw[t], g, c)
        a = 0.5 * (1 - 2 * EPS)
        logits = torch.log(g * a + a + EPS) - torch.log(g * -a + (1 - a - EPS)) + self.out_b
        return F.binary_cross_entropy_with_logits(logits, targets)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--length", type=int, default=50)
    p.add_argument("--vocab", type=int, default=6077)
    p.add_argument("--labels", type=int, default=50)
    p.add_argument("--embedding", type=int, default=192)
    p.add_argument("--control", type=int, default=128)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--train-steps", type=int, default=0,
                   help="sanity: train K steps on one fixed batch and print the loss")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = Grnn(args.vocab, args.labels, args.embedding, args.control)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    params = list(model.parameters())

    def batch():
        ids = torch.from_numpy(rng.integers(2, args.vocab, size=(args.batch, args.length)))
        y = torch.from_numpy((rng.random((args.batch, args.labels)) < 0.07).astype(np.float32))
        return ids, y

    def step(data=None):
        t0 = time.perf_counter()
        ids, y = data if data is not None else batch()
        loss = model(ids, y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        opt.zero_grad(set_to_none=False)
        t3 = time.perf_counter()
        return loss.item(), 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2)

    if args.train_steps:
        fixed = batch()
        for k in range(args.train_steps):
            loss = step(fixed)[0]
            if k % 20 == 0 or k == args.train_steps - 1:
                print(f"step {k}: loss {loss:.4f}")
        return
    for _ in range(args.warmup):
        step()
    total, fwd, bwd, optim, cpu = [], [], [], [], []
    for _ in range(args.steps):
        c0 = time.process_time()
        _, f, b, o = step()
        cpu.append(1e3 * (time.process_time() - c0))
        fwd.append(f)
        bwd.append(b)
        optim.append(o)
        total.append(f + b + o)
    out = {
        "model": "grnn (PyTorch)", "torch": torch.__version__, "threads": args.threads,
        "batch": args.batch, "length": args.length,
        "parameters": sum(p.numel() for p in params), "steps_measured": args.steps,
        "ms_per_step": statistics.median(total), "ms_per_step_min": min(total),
        "ms_per_step_max": max(total), "forward_ms": statistics.median(fwd),
        "backward_ms": statistics.median(bwd), "optimizer_ms": statistics.median(optim),
        "cpu_ms_per_step": statistics.median(cpu),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>16}: {v}")


if __name__ == "__main__":
    main()
