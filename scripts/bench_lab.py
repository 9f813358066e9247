"""Benchmark: the lab's training step, its levers per ladder width, and minimal loops.

    python scripts/bench_lab.py --levers [--steps 40] [--warmup 2] [--threads 1] [--runs wide-32,deep-128]
                                [--backends inductor,aot_eager] [--profile default]
    MEMBOOK_CACHE=$(mktemp -d) python scripts/bench_lab.py --tolerance wide-32 [--threads 1]
    python scripts/bench_lab.py [--steps 30] [--warmup 5] [--threads 2] [--sizes 0.2M,1M,4M] [--compile]

Levers (``--levers``, to bench/results/lab_train.json)
------------------------------------------------------
At every shape the profile's ladder trains (:func:`ladder_shapes`: the default lab's
ten, widths 32-128 at 2 and 6 layers, heads ``d // 32``, ``d_ff = 4d``, context 128,
batch 8, vocabulary 4096, each run's own peak learning rate and weight decay), these
arms start from the same weights (``build_model(..., seed=run.seed)``) and train on
the same random batches, one step of each arm in turn:

* ``today``: :func:`analysis.lab.train.train_step` with
  :func:`~analysis.lab.train.make_optimizer`, as ``train`` runs it. Its AdamW is
  the fused one (``fused=True``: one C++ kernel per parameter group);
* ``today_repeat`` (``repeat`` in the tables): the same again, the noise floor of a
  ratio (and a check that a step is deterministic: its weights always came out
  bit-identical);
* ``adamw_foreach``, ``adamw_forloop`` (``foreach``, ``forloop``): make_optimizer's
  groups and settings with ``foreach=True``, and with the for-loop (:func:`adamw_variant`);
* ``compiled``: ``train(..., compile=True)``'s step, the loss under
  ``torch.compile`` (inductor) and deterministic algorithms on; compiled from a cold
  inductor cache, with ``torch._dynamo.reset()`` before each shape;
* ``compiled_aot_eager`` (``aot_eager``): that step through the ``aot_eager``
  backend (graph capture and AOT autograd, no generated kernels).

Each arm's tokens/s is its median step (wall clock, and CPU time of the process:
on one thread the CPU time is the time the step ran, not the time it waited for a
core, so it is the fairer figure on a loaded machine), its ratio is to ``today``,
and after ``warmup + steps`` steps its per-step losses and its weights are compared
with ``today``'s (bit-identical, or the largest absolute difference).

Measured on 2026-12-01 (bench/results/lab_train.json): one thread, 2 warm-up and 40
timed steps, at nice 19 under a load average of 9-16 on 2 cores. Tokens per CPU second
of ``today``, each arm's ratio to it, and ``=`` where the arm's weights after the 42
steps are bit-identical to ``today``'s, ``~`` and their largest absolute difference
where not::

         run  params  today tok/cpu-s  repeat      foreach      forloop     compiled  aot_eager
     wide-32   0.16M            14254  1.06 =  1.13 ~2e-06  0.98 ~2e-06  1.85 ~1e-05     1.11 =
     wide-48   0.27M            13625  1.04 =  1.03 ~1e-05  1.04 ~1e-05  1.49 ~6e-03     0.94 =
     wide-64   0.39M            11499  1.06 =  0.98 ~8e-04  1.03 ~8e-04  1.41 ~4e-03     0.94 =
     wide-96   0.69M             8802  1.01 =  1.03 ~1e-05  0.95 ~1e-05  1.21 ~4e-04     0.95 =
    wide-128   1.05M             6191  0.99 =  1.00 ~5e-07  0.97 ~5e-07  1.21 ~5e-05     0.99 =
     deep-32   0.23M            10684  0.95 =  0.89 ~5e-06  0.93 ~5e-06  1.42 ~2e-04     0.95 =
     deep-48   0.42M             9102  1.02 =  0.97 ~5e-04  0.99 ~5e-04  1.38 ~5e-03     1.03 =
     deep-64   0.66M             6915  0.98 =  1.01 ~3e-06  1.00 ~3e-06  1.38 ~2e-05     0.99 =
     deep-96   1.28M             4964  1.00 =  0.96 ~4e-07  1.00 ~4e-07  1.18 ~7e-05     0.98 =
    deep-128   2.10M             3367  1.02 =  1.00 ~9e-07  1.02 ~9e-07  1.22 ~5e-05     1.02 =

Per wall-clock second (the same run, noisier under that load) ``compiled`` made
1.71, 1.52, 1.49, 1.48, 1.23 (wide) and 1.49, 1.37, 1.31, 1.18, 1.35 (deep) x today.
What the figures say:

* the lab already steps the fused AdamW; ``foreach`` and the for-loop are no faster
  (their ratios, 0.89-1.13, straddle 1 as ``repeat``'s do, 0.95-1.06) and not
  bit-identical (a step's loss moves by a float32 ulp, 9.5e-07, within the 42 steps);
* ``torch.compile`` (inductor) is 1.18-1.85x per CPU second, its gain shrinking
  with width (the transformers model's fixed per-step overhead is a smaller share
  of a wider model's step): 1.4-1.85x up to width 64, 1.18-1.22x at widths 96 and
  128, where the 1.2x line lies within the noise of a ratio; it is never
  bit-identical (losses apart by 1e-06 to 1.3e-04 within 42 steps) and costs a cold
  compile of 65-262 s a shape (wall clock, under that load);
* ``aot_eager`` is bit-identical at every shape and no faster: the rounding changes
  come from inductor's generated kernels, not from capturing the graph.

Tolerance (``--tolerance RUN``)
-------------------------------
Trains one standard run of the profile to its end with ``train`` and with
``train(..., compile=True)`` (in ``$MEMBOOK_CACHE``; point it at a scratch folder)
and records, under ``tolerance`` in bench/results/lab_train.json, how far the
compiled run's per-step losses, mean loss over its last 100 steps, held-out loss
(the corpus's held-out documents, :func:`analysis.lab.train.eval_loss`) and
weights end from the lab's.

Measured on 2026-12-01 for wide-32 (2,441 steps, one thread, at nice 19 under load;
the two trainings ran one after the other, so their tokens/s are no fair ratio)::

              tokens/s  last-100 loss  held-out loss  max |d loss| a step  max |d weight|
    today         3075        2.21579        6.00607                    -               -
    compiled      4863        2.21578        6.00586              3.2e-03         4.9e-02

The compiled run ends 1e-05 nats from the lab's on its last 100 steps and 2.1e-04
nats on held-out text, about a hundredth of the 0.03-0.06 nats that another init seed
moves a ladder model (the comment on ``analysis.lab.profiles.PROFILES``); its
weights are not the lab's, so adopting it would give every run a new key.

Minimal loops (the default, to bench/results/lab.json)
------------------------------------------------------
For each toy model size, the arms train on the same random token batches
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
count (the mean is recorded too).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

from analysis.core import jsonio  # strict JSON: a missing number is null
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
        torch._dynamo.reset()  # each size compiled afresh, with static shapes
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


# --- levers: the lab's step at the default ladder's shapes, one implementation change at a time ---

#: ``torch.optim.AdamW`` keyword arguments of each implementation (on the CPU, AdamW
#: with neither flag set runs the for-loop)
ADAMW_IMPLS = {
    "fused": {"fused": True, "foreach": None},
    "foreach": {"fused": None, "foreach": True},
    "forloop": {"fused": None, "foreach": False},
}


def adamw_impl(optimizer) -> str:
    """Which AdamW implementation ``optimizer`` runs on CPU tensors: "fused", "foreach" or "forloop"."""
    if optimizer.defaults.get("fused"):
        return "fused"
    return "foreach" if optimizer.defaults.get("foreach") else "forloop"


def adamw_variant(model, run: RunConfig, impl: str):
    """:func:`analysis.lab.train.make_optimizer`'s AdamW (its groups, betas, eps, weight
    decay) with the implementation ``impl`` (a key of :data:`ADAMW_IMPLS`)."""
    if impl not in ADAMW_IMPLS:
        raise ValueError(f"impl must be one of {sorted(ADAMW_IMPLS)}, got {impl!r}")
    today = make_optimizer(model, run)
    groups = [{k: v for k, v in g.items() if k not in ("fused", "foreach")} for g in today.param_groups]
    defaults = {k: today.defaults[k] for k in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize")}
    return torch.optim.AdamW(groups, **defaults, **ADAMW_IMPLS[impl])


def ladder_shapes(runs, families: tuple[str, ...] = ("ladder-wide", "ladder-deep")) -> list[RunConfig]:
    """The first run of each distinct (model, batch size) among ``runs`` of ``families``,
    in the profile's order: the shapes the lab trains, each once."""
    seen, shapes = set(), []
    for r in runs:
        key = (r.model, r.batch_size)
        if r.family in families and key not in seen:
            seen.add(key)
            shapes.append(r)
    return shapes


def max_abs_diff(a, b) -> dict:
    """Whether two sequences of tensors are bit-identical, and their largest absolute difference."""
    a, b = list(a), list(b)
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b)):
        raise ValueError(f"a and b must hold tensors of the same shapes, got {len(a)} and {len(b)} tensors")
    same = all(torch.equal(x, y) for x, y in zip(a, b))
    diff = max((float((x.double() - y.double()).abs().max()) for x, y in zip(a, b) if x.numel()), default=0.0)
    return {"bit_identical": same, "max_abs_diff": diff}


def tokens_per_second(seconds, tokens_per_step: int) -> float:
    """Tokens per second at the median step time (bursts of background load do not count)."""
    if not len(seconds):
        raise ValueError("seconds must hold at least one step time")
    return tokens_per_step / float(np.median(seconds))


def lever_arms(run: RunConfig, vocab: int, backends: tuple[str, ...] = ("inductor",),
               repeat: bool = True) -> dict:
    """``name -> (model, optimizer, step)``, every model the same initial weights.

    ``today`` is the lab's step as ``train`` runs it; ``adamw_<impl>`` swaps in each
    other AdamW implementation; ``compiled`` is ``train(..., compile=True)``'s step
    (the loss under ``torch.compile``, deterministic algorithms on), and
    ``compiled_<backend>`` that step through another ``torch.compile`` backend;
    ``today_repeat`` is ``today`` again (the noise floor of a ratio, and a check that
    a step is deterministic)."""
    def eager(m, o, x, y, lr):
        return train_step(m, o, x, y, lr)

    def fresh():
        return build_model(run.model, vocab, 0, seed=run.seed).train()

    arms = {"today": (m := fresh(), make_optimizer(m, run), eager)}
    today_impl = adamw_impl(arms["today"][1])
    if repeat:
        arms["today_repeat"] = (m := fresh(), make_optimizer(m, run), eager)
    for impl in ADAMW_IMPLS:
        if impl != today_impl:
            arms[f"adamw_{impl}"] = (m := fresh(), adamw_variant(m, run, impl), eager)
    torch._dynamo.reset()  # as in a fresh process: static shapes, no recompile limit reached
    for backend in backends:
        name = "compiled" if backend == "inductor" else f"compiled_{backend}"
        arms[name] = (m := fresh(), make_optimizer(m, run), _compiled_step(backend))
    return arms


def _compiled_step(backend: str):
    """The step ``train(..., compile=True)`` takes, its loss compiled by ``backend``."""
    compiled = torch.compile(lm_loss, backend=backend)

    def step(m, o, x, y, lr):
        with deterministic_algorithms():
            return train_step(m, o, x, y, lr, compiled)

    return step


def bench_levers(run: RunConfig, vocab: int, steps: int, warmup: int,
                 backends: tuple[str, ...] = ("inductor",), repeat: bool = True) -> dict:
    """Every lever arm at ``run``'s shape: tokens/s (median step), ratio to ``today``,
    compile seconds, and the losses and weights after ``warmup + steps`` steps against
    ``today``'s. Every arm trains on the same random batches at ``run.lr``, one step of
    each arm in turn."""
    arms = lever_arms(run, vocab, backends, repeat)
    B, T = run.batch_size, run.model.context
    rng = np.random.default_rng(run.seed)
    xs = torch.from_numpy(rng.integers(1, vocab, size=(warmup + steps, B, T), dtype=np.int64))
    ys = torch.full_like(xs, -100)
    ys[:, :, :-1] = xs[:, :, 1:]
    times = {name: [] for name in arms}
    cpu = {name: [] for name in arms}
    losses = {name: [] for name in arms}
    for i in range(warmup + steps):
        for name, (m, o, step) in arms.items():
            t0, c0 = time.perf_counter(), time.process_time()
            losses[name].append(step(m, o, xs[i], ys[i], run.lr))
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    tps = {name: tokens_per_second(t[warmup:], B * T) for name, t in times.items()}
    # per CPU second: on one thread, the time the step ran, not the time it waited for a core
    tpc = {name: tokens_per_second(t[warmup:], B * T) for name, t in cpu.items()}
    weights = {name: [p.detach() for p in m.state_dict().values()] for name, (m, _, _) in arms.items()}
    result = {
        "run": run.name, "family": run.family, "model": run.model.as_dict(), "batch": B, "lr": run.lr,
        "weight_decay": run.weight_decay, "params": param_count(run.model, vocab),
        "today_adamw": adamw_impl(arms["today"][1]), "arms": {},
    }
    for name in arms:
        arm = {
            "tokens_per_second": round(tps[name], 1), "ratio": round(tps[name] / tps["today"], 3),
            "tokens_per_cpu_second": round(tpc[name], 1), "ratio_cpu": round(tpc[name] / tpc["today"], 3),
            "first_step_seconds": round(times[name][0], 3),
            "median_step_seconds": round(float(np.median(times[name][warmup:])), 5),
            "final_loss": float(losses[name][-1]),
            "losses": max_abs_diff([torch.stack(losses[name])], [torch.stack(losses["today"])]),
            "weights": max_abs_diff(weights[name], weights["today"]),
        }
        if name.startswith("compiled"):
            # the first step traces and compiles the forward and the backward
            arm["compile_seconds"] = round(times[name][0] - float(np.median(times[name][warmup:])), 1)
        result["arms"][name] = arm
    return result


def run_levers(args) -> None:
    """The lever arms at every shape of the profile's ladder, to bench/results/lab_train.json."""
    from analysis.lab.profiles import get_profile

    profile = get_profile(args.profile)
    shapes = ladder_shapes(profile.runs)
    if args.runs:
        wanted = args.runs.split(",")
        unknown = sorted(set(wanted) - {r.name for r in shapes})
        if unknown:
            raise SystemExit(f"--runs must name ladder shapes of {args.profile} "
                             f"({', '.join(r.name for r in shapes)}), got {unknown}")
        shapes = [r for r in shapes if r.name in wanted]
    load = os.getloadavg()
    backends = tuple(b for b in args.backends.split(",") if b)
    results = []
    # compile seconds from a cold compile cache, as in a fresh clone (shapes compiled
    # earlier in the run share their identical kernels, as in a lab build)
    with tempfile.TemporaryDirectory() as cold, temporary_cache_dir(cold):
        for run in shapes:
            r = bench_levers(run, profile.vocab_size, args.steps, args.warmup, backends)
            results.append(r)
            print(lever_table([r])[-1], "| per CPU second:", lever_table([r], "cpu_second")[-1], flush=True)
    payload = {
        "profile": args.profile, "threads": args.threads, "backends": args.backends, "steps": args.steps,
        "warmup": args.warmup,
        "vocab": profile.vocab_size, "lr": "each run's peak lr, constant", "data": "uniform random tokens",
        "inductor_cache": "cold at the start",
        "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "machine": platform.platform(), "processor": platform.processor(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": _commit(),
        "loadavg_start": [round(v, 2) for v in load], "loadavg_end": [round(v, 2) for v in os.getloadavg()],
        "results": results,
    }
    print("\n".join(lever_table(results) + lever_table(results, "cpu_second")))
    path = OUT / args.out
    if path.exists() and "tolerance" in (before := json.loads(path.read_text())):
        payload["tolerance"] = before["tolerance"]
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonio.dumps(payload, indent=1))


def run_tolerance(args) -> None:
    """Train one standard run of the profile to its end, as the lab does (``train``) and
    compiled (``train(..., compile=True)``), in ``$MEMBOOK_CACHE``; record how far the
    compiled run's losses and weights end from the lab's, under ``tolerance`` in
    bench/results/lab_train.json."""
    from analysis.lab.ladder import profile_corpus
    from analysis.lab.profiles import get_profile
    from analysis.lab.tokenizer import get_tokenizer
    from analysis.lab.train import eval_loss, train

    profile = get_profile(args.profile)
    run = profile.run(args.tolerance)
    if run.inject:
        raise SystemExit(f"--tolerance must name a standard run of {args.profile}, got {run.name!r}")
    corpus = profile_corpus(profile)
    texts, key = corpus.training_texts(), corpus.fingerprint()
    tokenizer = get_tokenizer(texts, key, profile.vocab_size)
    heldout = [d.text for d in corpus.heldout]
    arms = {}
    for name, compile in (("today", False), ("compiled", True)):
        torch._dynamo.reset()
        res = train(run, texts, [], tokenizer, key, progress=False, threads=args.threads, compile=compile,
                    fork=False)
        arms[name] = {"result": res, "weights": _safetensors(res.path)}
    today = arms["today"]
    record = {"run": run.name, "steps": run.steps, "threads": args.threads, "heldout_docs": len(heldout),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": _commit(), "arms": {}}
    for name, arm in arms.items():
        res, loss = arm["result"], arm["result"].curve["loss"]
        record["arms"][name] = {
            "trained_now": res.trained, "seconds": round(res.seconds, 1),
            "tokens_per_second": round(res.tokens_per_second, 1),
            "final_loss_last_100": round(float(loss.tail(100).mean()), 5),
            "heldout_loss": round(eval_loss(res.path, heldout, threads=args.threads), 5),
            "losses": max_abs_diff([torch.tensor(loss.to_numpy())],
                                   [torch.tensor(today["result"].curve["loss"].to_numpy())]),
            "weights": max_abs_diff(arm["weights"], today["weights"]),
        }
    print(jsonio.dumps(record["arms"], indent=1))
    path = OUT / "lab_train.json"
    payload = json.loads(path.read_text()) if path.exists() else {}
    payload.setdefault("tolerance", {})[run.name] = record
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonio.dumps(payload, indent=1))


def _safetensors(path: Path) -> list:
    """A saved run's tensors, in name order."""
    from safetensors.torch import load_file

    tensors = load_file(str(Path(path) / "model.safetensors"))
    return [tensors[k] for k in sorted(tensors)]


def lever_table(results: list[dict], per: str = "second") -> list[str]:
    """The docstring's table of ``--levers`` results: a row per shape, the lab's tokens per
    wall-clock ``second`` (or ``cpu_second``) and each other arm's ratio to it, ``=`` where
    its weights are bit-identical to the lab's after the run's steps and ``~`` with their
    largest absolute difference where not."""
    if per not in ("second", "cpu_second"):
        raise ValueError(f"per must be 'second' or 'cpu_second', got {per!r}")
    ratio = "ratio" if per == "second" else "ratio_cpu"
    names = [k for k in results[0]["arms"] if k != "today"]
    short = {"today_repeat": "repeat", "adamw_foreach": "foreach", "adamw_forloop": "forloop",
             "compiled_aot_eager": "aot_eager"}
    rows = [["run", "params", f"today tok/{'s' if per == 'second' else 'cpu-s'}",
             *(short.get(k, k) for k in names)]]
    for r in results:
        cells = [r["run"], f"{r['params'] / 1e6:.2f}M", f"{r['arms']['today'][f'tokens_per_{per}']:.0f}"]
        for k in names:
            a = r["arms"][k]
            same = "=" if a["weights"]["bit_identical"] else f"~{a['weights']['max_abs_diff']:.0e}"
            cells.append(f"{a[ratio]:.2f} {same}")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=OUT.parents[1], check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--compile", action="store_true", help="add the lab step under torch.compile")
    ap.add_argument("--levers", action="store_true",
                    help="the lab's step at the ladder's shapes under each AdamW and torch.compile")
    ap.add_argument("--profile", default="default", help="the lab profile whose ladder --levers measures")
    ap.add_argument("--runs", default="", help="with --levers: only these ladder runs (comma-separated)")
    ap.add_argument("--tolerance", default="", metavar="RUN",
                    help="train this standard run of --profile to its end, eager and compiled, and "
                         "compare (in $MEMBOOK_CACHE)")
    ap.add_argument("--out", default="lab_train.json", help="with --levers: the file under bench/results")
    ap.add_argument("--backends", default="inductor,aot_eager",
                    help="with --levers: torch.compile backends of the compiled arms ('' for none)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.levers:
        run_levers(args)
        return
    if args.tolerance:
        run_tolerance(args)
        return
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
    (OUT / "lab.json").write_text(jsonio.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
