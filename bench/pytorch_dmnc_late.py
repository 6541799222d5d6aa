#!/usr/bin/env python3
"""PyTorch side-by-side benchmark of memgrad's dmnc-late on sum2seq (OPTIONAL; see README.md).

The model computes the same function, at the same dims and with the same parameter count, as
memgrad's "dmnc-late" (models/dnc/dmnc.*, models/dnc/dnc_memory.cpp, models/layers/):
two DNC encoders (LSTM controller over [x_t; r_{t-1}], separate memories, per-encoder read and
write functions), then a write-protected LSTM decoder (hidden 2H, h0 = [h1; h2]) that reads both
memories with one shared read function, teacher forcing, masked softmax cross-entropy.
Training step as memgrad's trainer: Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), gradients clipped
by value to [-10, 10] (optionally first by global norm, --clip-norm), global gradient norm
computed each step (memgrad logs it).

Written the plain PyTorch way: nn.Module, autograd, torch.optim.Adam, memory ops as tensor ops
batched over B, a Python loop over time steps. float32, CPU.

Run with the system interpreter that has python3-torch: /usr/bin/python3 bench/pytorch_dmnc_late.py
"""
import argparse
import json
import math
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6          # dnc::kEpsilon: cosine norms, cosine denominator, usage clamp, initial fill
MAX_TOKEN = 50      # sum2seq: tokens 1..50
END_TOKEN = MAX_TOKEN + 1       # 51, the end marker after each view (sum2seq "end_marker")
OUT_VOCAB = 2 * MAX_TOKEN + 1   # 101


def input_vocab(end_marker):
    return END_TOKEN + 1 if end_marker else MAX_TOKEN + 1   # 52 or 51 (0 = PAD)


# ----------------------------------------------------------------------------------------- data

def make_batch(rng, size, lmax, end_marker):
    """sum2seq::make_batch: L uniform in [1, lmax] per sample, tokens uniform in [1, 50],
    y_i = x1_i + x2_{L+1-i}; padded to the longest sample (0) with 0/1 masks. With the end
    marker each view is followed by one extra event, token 51 (views [B, T+1], y [B, T])."""
    lengths = rng.integers(1, lmax + 1, size=size)
    T = int(lengths.max())
    Tv = T + (1 if end_marker else 0)
    x1 = np.zeros((size, Tv), np.int64)
    x2 = np.zeros((size, Tv), np.int64)
    xm = np.zeros((size, Tv), np.float32)
    y = np.zeros((size, T), np.int64)
    ym = np.zeros((size, T), np.float32)
    for s, L in enumerate(lengths):
        a = rng.integers(1, MAX_TOKEN + 1, size=L)
        b = rng.integers(1, MAX_TOKEN + 1, size=L)
        x1[s, :L] = a
        x2[s, :L] = b
        xm[s, :L] = 1
        y[s, :L] = a + b[::-1]
        ym[s, :L] = 1
        if end_marker:
            x1[s, L] = x2[s, L] = END_TOKEN
            xm[s, L] = 1
    return {"x1": x1, "x2": x2, "x1_mask": xm, "x2_mask": xm.copy(), "y": y, "y_mask": ym}


# ------------------------------------------------------------------------------------- layers

def glorot_linear(n_in, n_out, bias=True):
    """layers::Linear: Glorot-uniform weight, zero bias."""
    lin = nn.Linear(n_in, n_out, bias=bias)
    nn.init.xavier_uniform_(lin.weight)
    if bias:
        nn.init.zeros_(lin.bias)
    return lin


def uniform_embedding(rows, dim):
    """layers::Embedding: uniform(-1, 1)."""
    emb = nn.Embedding(rows, dim)
    nn.init.uniform_(emb.weight, -1.0, 1.0)
    return emb


class LSTMCell(nn.Module):
    """models/layers/rnn_cells.cpp LstmCell: gates [i f g o] = x W_x + b + h W_h (one bias, so not nn.LSTMCell,
    which has two), Glorot over the fused [in + H, 4H] matrix, forget bias 1. The cell state is
    clamped to [-clip, clip] after the step (layers::clip_state)."""

    def __init__(self, n_in, hidden, clip):
        super().__init__()
        self.hidden, self.clip = hidden, clip
        self.x2g = nn.Linear(n_in, 4 * hidden)           # W_x, b
        self.h2g = nn.Linear(hidden, 4 * hidden, bias=False)  # W_h
        limit = math.sqrt(6.0 / (n_in + hidden + 4 * hidden))
        nn.init.uniform_(self.x2g.weight, -limit, limit)
        nn.init.uniform_(self.h2g.weight, -limit, limit)
        with torch.no_grad():
            self.x2g.bias.zero_()
            self.x2g.bias[hidden:2 * hidden] = 1.0

    def forward(self, x, state):
        h, c = state
        H = self.hidden
        gates = self.x2g(x) + self.h2g(h)
        i, f, g, o = gates.split(H, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        if self.clip > 0:
            c = c.clamp(-self.clip, self.clip)
        return h, c


def oneplus(x):
    return 1.0 + F.softplus(x)


# ------------------------------------------------------------------------------- DNC memory ops
# dnc_memory.cpp, one write head, R read heads. Shapes: memory [B,N,W], weights [B,N] / [B,R,N].

def eps_norm(x):
    return torch.sqrt((x * x).sum(-1, keepdim=True) + EPS)


def content_weighting(memory, keys, strengths):
    """keys [B,R,W], strengths [B,R] -> softmax_i(s * k.m_i / (|k|_e |m_i|_e + eps)) [B,R,N]."""
    dot = torch.bmm(keys, memory.transpose(1, 2))                       # [B,R,N]
    denom = eps_norm(keys) * eps_norm(memory).transpose(1, 2) + EPS     # [B,R,1]*[B,1,N]
    return torch.softmax(dot / denom * strengths.unsqueeze(-1), dim=-1)


def allocation(usage):
    """uc = eps + (1-eps) u sorted ascending (stable: ties to the lower slot);
    a[phi_j] = (1 - uc[phi_j]) prod_{i<j} uc[phi_i]; the permutation is a constant."""
    clamped = EPS + (1.0 - EPS) * usage
    sorted_u, order = torch.sort(clamped, dim=-1, stable=True)
    excl = torch.cumprod(torch.cat([torch.ones_like(sorted_u[:, :1]), sorted_u[:, :-1]], 1), 1)
    sorted_alloc = (1.0 - sorted_u) * excl
    return torch.zeros_like(sorted_alloc).scatter(1, order, sorted_alloc)


def dnc_write_read(mem, itf):
    """One dnc::step (write then read) in DeepMind's order, with the paper's usage gradient
    (layers::fold_write_into_usage: no stop-gradient on the previous write weights)."""
    memory, usage, link, prec, ww, rw = (mem["memory"], mem["usage"], mem["link"],
                                          mem["precedence"], mem["write_weights"],
                                          mem["read_weights"])
    B, N, W = memory.shape
    # usage: (u + (1 - u) w_{t-1}) * prod_r (1 - f_r rw_r)
    psi = torch.prod(1.0 - itf["free_gates"].unsqueeze(-1) * rw, dim=1)    # [B,N]
    usage = (usage + ww - usage * ww) * psi
    alloc = allocation(usage)
    wcw = content_weighting(memory, itf["write_key"].unsqueeze(1),
                            itf["write_strength"].unsqueeze(1)).squeeze(1)  # [B,N]
    ga, gw = itf["alloc_gate"].unsqueeze(1), itf["write_gate"].unsqueeze(1)
    ww = gw * (ga * alloc + (1.0 - ga) * wcw)                               # [B,N]
    # erase and write: M (1 - w e^T) + w v^T
    memory = memory * (1.0 - ww.unsqueeze(2) * itf["erase"].unsqueeze(1)) \
        + ww.unsqueeze(2) * itf["write_vector"].unsqueeze(1)
    # link and precedence (zero diagonal)
    wi, wj = ww.unsqueeze(2), ww.unsqueeze(1)
    link = ((1.0 - wi - wj) * link + wi * prec.unsqueeze(1)) * offdiag(N, ww)
    prec = (1.0 - ww.sum(-1, keepdim=True)) * prec + ww
    rw_new, rv = dnc_read(memory, link, rw, itf["read_keys"], itf["read_strengths"],
                          itf["read_modes"])
    return {"memory": memory, "usage": usage, "link": link, "precedence": prec,
            "write_weights": ww, "read_weights": rw_new, "read_vectors": rv}


_offdiag_cache = {}


def offdiag(n, like):
    key = (n, like.dtype)
    if key not in _offdiag_cache:
        _offdiag_cache[key] = 1.0 - torch.eye(n, dtype=like.dtype)
    return _offdiag_cache[key]


def dnc_read(memory, link, prev_rw, keys, strengths, modes):
    """Read modes (backward, content, forward): forward = L w, backward = L^T w."""
    content = content_weighting(memory, keys, strengths)                   # [B,R,N]
    forward = torch.bmm(prev_rw, link.transpose(1, 2))
    backward = torch.bmm(prev_rw, link)
    rw = modes[..., 0:1] * backward + modes[..., 1:2] * content + modes[..., 2:3] * forward
    return rw, torch.bmm(rw, memory)                                        # [B,R,N], [B,R,W]


def parse_read(raw, R, W):
    """layers::parse_read_interface: keys R*W | strengths R (oneplus) | modes 3R (softmax)."""
    M = raw.shape[0]
    return (raw[:, :R * W].reshape(M, R, W),
            oneplus(raw[:, R * W:R * W + R]),
            torch.softmax(raw[:, R * W + R:].reshape(M, R, 3), dim=-1))


def parse_write(raw, R, W):
    """The write function's block of dnc::parse_interface: write key W | strength 1 (oneplus) |
    erase W (sigmoid) | write vector W | free gates R (sigmoid) | alloc gate 1 | write gate 1."""
    o = 0
    def take(n):
        nonlocal o
        v = raw[:, o:o + n]
        o += n
        return v
    key = take(W)
    strength = oneplus(take(1)).squeeze(1)             # [B]
    erase = torch.sigmoid(take(W))
    vector = take(W)
    free = torch.sigmoid(take(R))
    alloc = torch.sigmoid(take(1))
    gate = torch.sigmoid(take(1))
    return {"write_key": key, "write_strength": strength, "erase": erase, "write_vector": vector,
            "free_gates": free, "alloc_gate": alloc.squeeze(1), "write_gate": gate.squeeze(1)}


def initial_memory(B, N, W, R, dtype):
    """dnc::initial_state: memory, write/read weights and read vectors 1e-6; usage, link,
    precedence 0."""
    zeros = torch.zeros(B, N, dtype=dtype)
    return {"memory": torch.full((B, N, W), EPS, dtype=dtype), "usage": zeros,
            "link": torch.zeros(B, N, N, dtype=dtype), "precedence": zeros,
            "write_weights": torch.full((B, N), EPS, dtype=dtype),
            "read_weights": torch.full((B, R, N), EPS, dtype=dtype),
            "read_vectors": torch.full((B, R, W), EPS, dtype=dtype)}


# ---------------------------------------------------------------------------------------- model

class DmncLate(nn.Module):
    def __init__(self, embedding=64, hidden=128, word=64, slots=16, read_heads=1,
                 in_vocab=input_vocab(True), out_vocab=OUT_VOCAB, clip=20.0):
        super().__init__()
        E, H, W, R = embedding, hidden, word, read_heads
        self.E, self.H, self.W, self.N, self.R, self.V, self.clip = E, H, W, slots, R, out_vocab, clip
        write_size = 3 * W + R + 3
        read_size = R * W + 4 * R
        # Same construction order as memgrad (parameter order, not values: RNGs differ).
        self.enc_embed = nn.ModuleList()
        self.enc_lstm = nn.ModuleList()
        self.enc_write = nn.ModuleList()
        self.enc_read = nn.ModuleList()
        for _ in range(2):
            self.enc_embed.append(uniform_embedding(in_vocab, E))
            self.enc_lstm.append(LSTMCell(E + R * W, H, clip))
            self.enc_write.append(glorot_linear(H, write_size))
            self.enc_read.append(glorot_linear(H, read_size))
        self.dec_read = glorot_linear(H, read_size)
        self.dec_embed = uniform_embedding(out_vocab + 1, E)    # row V is GO
        self.dec_lstm = LSTMCell(E + 2 * R * W, 2 * H, clip)
        self.dec_out = glorot_linear(2 * H + 2 * R * W, out_vocab)

    def encoder_step(self, i, x, ctrl, mem):
        B, R, W = x.shape[0], self.R, self.W
        h, c = self.enc_lstm[i](torch.cat([x, mem["read_vectors"].reshape(B, R * W)], 1), ctrl)
        keys, strengths, modes = parse_read(self.enc_read[i](h), R, W)
        itf = parse_write(self.enc_write[i](h), R, W)
        itf.update(read_keys=keys, read_strengths=strengths, read_modes=modes)
        return (h, c), dnc_write_read(mem, itf)

    def forward(self, batch):
        x = [batch["x1"], batch["x2"]]
        masks = [batch["x1_mask"], batch["x2_mask"]]   # torch float [B,T]
        masks_np = [batch["x1_mask_np"], batch["x2_mask_np"]]
        y, y_mask = batch["y"], batch["y_mask"]
        B, dtype = x[0].shape[0], self.dec_out.weight.dtype
        H, N, W, R = self.H, self.N, self.W, self.R
        zeros = torch.zeros(B, H, dtype=dtype)
        ctrl = [(zeros, zeros), (zeros, zeros)]
        mem = [initial_memory(B, N, W, R, dtype) for _ in range(2)]
        emb = [self.enc_embed[i](x[i]) for i in range(2)]       # [B,T,E]
        T = max(x[0].shape[1], x[1].shape[1])
        for t in range(T):
            for i in range(2):      # Algorithm 1: encoder 1's step, then encoder 2's
                if t >= x[i].shape[1]:
                    continue
                col = masks_np[i][:, t]
                if not col.any():
                    continue
                new_ctrl, new_mem = self.encoder_step(i, emb[i][:, t], ctrl[i], mem[i])
                if col.all():
                    ctrl[i], mem[i] = new_ctrl, new_mem
                else:   # samples whose view has ended keep their state (StepMask::blend)
                    m = masks[i][:, t] != 0
                    def blend(new, old):
                        return torch.where(m.view(-1, *([1] * (new.dim() - 1))), new, old)
                    ctrl[i] = tuple(blend(a, b) for a, b in zip(new_ctrl, ctrl[i]))
                    mem[i] = {k: blend(new_mem[k], mem[i][k]) for k in new_mem}

        # Write-protected decoder (MemoryReader with K = 2: rows b*2 + k, one batched read).
        memory = torch.stack([mem[0]["memory"], mem[1]["memory"]], 1).reshape(2 * B, N, W)
        link = torch.stack([mem[0]["link"], mem[1]["link"]], 1).reshape(2 * B, N, N)
        rw = torch.stack([mem[0]["read_weights"], mem[1]["read_weights"]], 1).reshape(2 * B, R, N)
        h = torch.cat([ctrl[0][0], ctrl[1][0]], 1)
        c = torch.cat([ctrl[0][1], ctrl[1][1]], 1)
        context = torch.cat([mem[0]["read_vectors"].reshape(B, R * W),
                             mem[1]["read_vectors"].reshape(B, R * W)], 1)
        L = y.shape[1]
        go = torch.full((B, 1), self.V, dtype=torch.long)
        ids = torch.cat([go, (y * y_mask.long())[:, :L - 1]], 1)     # teacher forcing
        demb = self.dec_embed(ids)                                      # [B,L,E]
        hs, cs = [], []
        for t in range(L):
            h, c = self.dec_lstm(torch.cat([demb[:, t], context], 1), (h, c))
            keys, strengths, modes = parse_read(self.dec_read(h.reshape(2 * B, H)), R, W)
            rw, rv = dnc_read(memory, link, rw, keys, strengths, modes)
            context = rv.reshape(B, 2 * R * W)
            hs.append(h)
            cs.append(context)
        logits = self.dec_out(torch.cat([torch.stack(hs, 1), torch.stack(cs, 1)], -1))  # [B,L,V]
        nll = F.cross_entropy(logits.reshape(B * L, self.V), y.reshape(B * L), reduction="none")
        ym = y_mask.reshape(B * L).to(dtype)
        return (nll * ym).sum() / ym.sum(), logits


def to_torch(b):
    return {"x1": torch.from_numpy(b["x1"]), "x2": torch.from_numpy(b["x2"]),
            "x1_mask": torch.from_numpy(b["x1_mask"]), "x2_mask": torch.from_numpy(b["x2_mask"]),
            "x1_mask_np": b["x1_mask"], "x2_mask_np": b["x2_mask"],
            "y": torch.from_numpy(b["y"]), "y_mask": torch.from_numpy(b["y_mask"])}


# ------------------------------------------------------------------------------------- training

def train_step(model, opt, rng, args):
    """One step timed as memgrad's Trainer::train_step: forward (incl. batch generation),
    backward, optimizer (grad norm, clip by value, Adam, zero grad)."""
    t0 = time.perf_counter()
    batch = to_torch(make_batch(rng, args.batch, args.lmax, args.end_marker))
    loss, _ = model(batch)
    loss_value = loss.item()
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in params])).item()
    if args.clip_norm > 0:   # memgrad: clip_norm (global) before clip_value
        torch.nn.utils.clip_grad_norm_(params, args.clip_norm)
    torch.nn.utils.clip_grad_value_(params, 10.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    t3 = time.perf_counter()
    return loss_value, grad_norm, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30, help="measured steps")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--lmax", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--end-marker", action=argparse.BooleanOptionalAction, default=True,
                    help="views followed by token 51, input vocab 52 (memgrad's sum2seq setting "
                         "end_marker; default on as in the current memgrad; --no-end-marker "
                         "matches `memgrad bench ... --end-marker false`)")
    ap.add_argument("--clip-norm", type=float, default=5.0,
                    help="also clip the global gradient norm (memgrad --clip-norm, 5 in the "
                         "dmnc-late recipe; 0 = off)")
    ap.add_argument("--train-steps", type=int, default=0,
                    help="sanity mode: train K steps, print the loss every --log-every steps")
    ap.add_argument("--log-every", type=int, default=100)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = DmncLate(in_vocab=input_vocab(args.end_marker))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    n_params = sum(p.numel() for p in model.parameters())

    if args.train_steps > 0:
        window, t_start = [], time.perf_counter()
        for step in range(1, args.train_steps + 1):
            loss, gn, *_ = train_step(model, opt, rng, args)
            window.append(loss)
            if step % args.log_every == 0 or step == 1 or step == args.train_steps:
                print(f"step {step:6d}  loss {loss:.4f}  mean(last {len(window)}) "
                      f"{sum(window) / len(window):.4f}  grad_norm {gn:.3f}  "
                      f"{time.perf_counter() - t_start:.1f}s", flush=True)
                window = []
        return 0

    fwd, bwd, opt_ms, total, cpu = [], [], [], [], []
    for step in range(args.warmup + args.steps):
        c0 = time.process_time()  # the process's CPU time: robust on a loaded machine
        _, _, f, b, o = train_step(model, opt, rng, args)
        c1 = time.process_time()
        if step < args.warmup:
            continue
        fwd.append(f), bwd.append(b), opt_ms.append(o), total.append(f + b + o)
        cpu.append((c1 - c0) * 1e3)
    med = statistics.median(total)
    out = {"framework": f"pytorch {torch.__version__}", "model": "dmnc-late", "task": "sum2seq",
           "end_marker": args.end_marker, "batch": args.batch, "threads": torch.get_num_threads(), "parameters": n_params,
           "steps_measured": args.steps, "ms_per_step": med, "ms_per_step_min": min(total),
           "ms_per_step_max": max(total), "forward_ms": statistics.median(fwd),
           "backward_ms": statistics.median(bwd), "optimizer_ms": statistics.median(opt_ms),
           "steps_per_s": 1000.0 / med, "cpu_ms_per_step": statistics.median(cpu)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"dmnc-late on sum2seq (pytorch {torch.__version__}), batch {args.batch}, "
              f"{out['threads']} threads, {n_params} parameters")
        print(f"  ms per step   {med:8.2f}  [{min(total):.2f}, {max(total):.2f}]  "
              f"({1000.0 / med:.1f} steps/s)")
        print(f"  forward       {out['forward_ms']:8.2f}\n  backward      {out['backward_ms']:8.2f}\n"
              f"  optimizer     {out['optimizer_ms']:8.2f}")
        print(f"  cpu ms/step   {out['cpu_ms_per_step']:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
