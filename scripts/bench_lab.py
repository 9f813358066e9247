"""Benchmark: the lab's training step vs minimal plain-PyTorch training loops.

    python scripts/bench_lab.py [--steps 30] [--warmup 5] [--threads 2] [--sizes 0.2M,1M,4M] [--compile]

For each model size, the arms train on the same random token batches
(context 128, batch 32) with the same optimizer (fused AdamW, betas 0.9/0.95,
weight decay on matrices) and gradient clipping, in the same process:

* ``lab``: ``LlamaForCausalLM`` through :func:`analysis.lab.train.train_step`,
  the very function the lab's ``train`` loop calls;
* ``minimal_gpt``: a handwritten GPT (learned positions, LayerNorm, GELU MLP,
  ``F.scaled_dot_product_attention(is_causal=True)``, tied embeddings) with the
  same d_model, n_layer, d_ff, context and batch;
* ``minimal_gpt_same_params``: that GPT with 1.5 x d_ff, as many parameters
  as the lab's model (its gated MLP has three matrices to GPT's two);
* ``minimal_llama``: the same architecture as the lab's model (RMSNorm, rotary
  positions, gated SiLU MLP, tied embeddings) written by hand, so the ratio to
  it isolates what the transformers implementation costs;
* ``lab_compiled`` (with ``--compile``): the lab's step with its loss under
  ``torch.compile`` (``train(..., compile=True)``); it compiles during the warm-up.

The arms take one step each in turn and each arm's tokens/s is its median
step time, so background load hits the arms alike and a burst of it does not
count (the mean is recorded too). Results go to bench/results/lab.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from analysis.lab.config import ModelConfig, RunConfig
from analysis.lab.train import (
    build_model,
    deterministic_algorithms,
    lm_loss,
    make_optimizer,
    param_count,
    train_step,
)

OUT = Path(__file__).resolve().parents[1] / "bench" / "results"
VOCAB = 4096
CONTEXT = 128
BATCH = 32
SIZES = {
    "0.2M": ModelConfig(n_layer=4, d_model=32, n_head=4, d_ff=128, context=CONTEXT),
    "1M": ModelConfig(n_layer=4, d_model=96, n_head=4, d_ff=384, context=CONTEXT),
    "4M": ModelConfig(n_layer=4, d_model=256, n_head=8, d_ff=640, context=CONTEXT),
}


class GPTBlock(nn.Module):
    def __init__(self, d: int, h: int, ff: int):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.fc = nn.Linear(d, ff, bias=False)
        self.out = nn.Linear(ff, d, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class MinimalGPT(nn.Module):
    def __init__(self, cfg: ModelConfig, vocab: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(GPTBlock(cfg.d_model, cfg.n_head, cfg.d_ff) for _ in range(cfg.n_layer))
        self.ln = nn.LayerNorm(cfg.d_model)
        self.register_buffer("positions", torch.arange(cfg.context), persistent=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(self.positions[: idx.shape[1]])
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.tok.weight.T


class LlamaBlock(nn.Module):
    def __init__(self, d: int, h: int, ff: int):
        super().__init__()
        self.h = h
        self.n1, self.n2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate_up = nn.Linear(d, 2 * ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, D = x.shape
        hd = D // self.h
        qkv = self.qkv(F.rms_norm(x, (D,), self.n1, 1e-6))
        q, k, v = qkv.view(B, T, 3, self.h, hd).permute(2, 0, 3, 1, 4)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        g, u = self.gate_up(F.rms_norm(x, (D,), self.n2, 1e-6)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


def _rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class MinimalLlama(nn.Module):
    def __init__(self, cfg: ModelConfig, vocab: int):
        super().__init__()
        self.d = cfg.d_model
        self.tok = nn.Embedding(vocab, cfg.d_model)
        self.blocks = nn.ModuleList(LlamaBlock(cfg.d_model, cfg.n_head, cfg.d_ff) for _ in range(cfg.n_layer))
        self.norm = nn.Parameter(torch.ones(cfg.d_model))
        hd = cfg.d_model // cfg.n_head
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(cfg.context).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x, self.cos[:T], self.sin[:T])
        return F.rms_norm(x, (self.d,), self.norm, 1e-6) @ self.tok.weight.T


def init_weights(model: nn.Module) -> nn.Module:
    """GPT-2's initialisation (normal, std 0.02), as ``LlamaForCausalLM`` uses."""
    for p in model.parameters():
        if p.ndim >= 2:
            nn.init.normal_(p, std=0.02)
    return model


def minimal_step(model, optimizer, x, y):
    """The plain loop's step: forward, cross-entropy, backward, clip, AdamW."""
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1), ignore_index=-100)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.detach()


def bench_size(label: str, cfg: ModelConfig, steps: int, warmup: int, compile: bool = False) -> dict:
    run = RunConfig(f"bench-{label}", cfg, tokens=BATCH * CONTEXT * (steps + warmup), batch_size=BATCH)
    torch.manual_seed(0)
    lab = build_model(cfg, VOCAB, 0, seed=0)
    lab.train()
    # the gated MLP has three d x d_ff matrices to GPT's two: 1.5 x d_ff matches the parameters
    wide = replace(cfg, d_ff=cfg.d_ff * 3 // 2)
    models = {
        "lab": lab,
        "minimal_gpt": init_weights(MinimalGPT(cfg, VOCAB)),
        "minimal_gpt_same_params": init_weights(MinimalGPT(wide, VOCAB)),
        "minimal_llama": init_weights(MinimalLlama(cfg, VOCAB)),
    }
    steps_of = {"lab": lambda m, o, x, y: train_step(m, o, x, y, run.lr)}
    if compile:
        models["lab_compiled"] = build_model(cfg, VOCAB, 0, seed=0).train()
        compiled = torch.compile(lm_loss)

        def compiled_step(m, o, x, y):
            # as train(compile=True) runs it
            with deterministic_algorithms():
                return train_step(m, o, x, y, run.lr, compiled)

        steps_of["lab_compiled"] = compiled_step
    arms = {name: (m, make_optimizer(m, run), steps_of.get(name, minimal_step)) for name, m in models.items()}
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.integers(1, VOCAB, size=(BATCH, CONTEXT), dtype=np.int64))
    y = torch.full_like(x, -100)
    y[:, :-1] = x[:, 1:]
    for m, o, step in arms.values():
        for _ in range(warmup):
            step(m, o, x, y)
    # one step of each arm in turn; the median step time shrugs off bursts of background load
    times: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(steps):
        for name, (m, o, step) in arms.items():
            t0 = time.perf_counter()
            step(m, o, x, y)
            times[name].append(time.perf_counter() - t0)
    tps = {name: BATCH * CONTEXT / float(np.median(t)) for name, t in times.items()}
    tps_mean = {name: BATCH * CONTEXT * len(t) / float(np.sum(t)) for name, t in times.items()}
    n_params = {name: sum(p.numel() for p in m.parameters()) for name, (m, _, _) in arms.items()}
    assert n_params["lab"] == param_count(cfg, VOCAB)
    minimal = [k for k in tps if k.startswith("minimal")]
    result = {
        "size": label, "model": cfg.as_dict(), "vocab": VOCAB, "batch": BATCH, "steps": steps,
        "params": n_params, "non_embedding_params": n_params["lab"] - VOCAB * cfg.d_model,
        "tokens_per_second": {k: round(v, 1) for k, v in tps.items()},
        "tokens_per_second_mean": {k: round(v, 1) for k, v in tps_mean.items()},
        "ratio": {k: round(tps["lab"] / tps[k], 3) for k in minimal},
    }
    if compile:
        result["ratio_compiled"] = {k: round(tps["lab_compiled"] / tps[k], 3) for k in minimal}
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--compile", action="store_true", help="add the lab step under torch.compile")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    results = []
    for label in args.sizes.split(","):
        r = bench_size(label, SIZES[label], args.steps, args.warmup, args.compile)
        results.append(r)
        t = r["tokens_per_second"]
        t, ratio = r["tokens_per_second"], r["ratio"]
        arms = " | ".join(f"{k} {t[k]:.0f} (lab x{ratio[k]:.2f})" for k in ratio)
        if "lab_compiled" in t:
            arms += f" | lab_compiled {t['lab_compiled']:.0f}"
        size = f"{label:>5} ({r['params']['lab'] / 1e6:.2f}M params)"
        print(f"{size}: lab {t['lab']:.0f} tok/s | {arms}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    payload = {
        "threads": args.threads, "context": CONTEXT, "batch": BATCH, "torch": torch.__version__,
        "machine": platform.platform(), "processor": platform.processor(), "results": results,
    }
    (OUT / "lab.json").write_text(json.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
