"""Benchmark: batched local continuation vs a one-prompt-at-a-time generate loop;
batched sampling; local generation against what the hardware allows.

    python scripts/bench_models.py [--model smollm2-135m-instruct] [--n 32] [--tokens 32]
    python scripts/bench_models.py --sampling [--model lab:deep-40] [--n 240]
    python scripts/bench_models.py --roofline [--model gemma3-270m] [--n 32] [--n-size 48] [--tokens 32]
        [--repeats 2] [--compile] [--arms ARM ...] [--workloads phrases|size|entropy] [--seed 1] [--tag TAG]

Both arms continue the same phrase prompts greedily with the same token budget,
in the same process, with the query cache out of the way (a fresh sqlite file
per arm), so the ratio of their wall times is what batching buys. Also times
a few batch sizes. Results go to bench/results/models-<model>.json.

``--sampling`` times sampled answers at the entropy chapter's setting (prompts of
32 tokens from the phrases data, 16 new tokens, no end-of-text stop) over the
sampled decodings of its Table 4: one request at a time as the book made them
(:func:`analysis.models.generation.generate_alone`) against the batched path
(:class:`analysis.models.generation.RowSampler`), and counts the answers that differ
(a token flipped by a batch-dependent logit). Results go to
bench/results/sampling-<model>.json.

``--roofline`` sets one model's generation against what this machine allows, on
three workloads (:func:`workloads`): the phrases chapter's prompts (``--n``,
``--tokens`` new tokens; chat prompts for SmolLM2, completions for Gemma), the size
chapter's (``--n-size`` positions at its default profile, 6 new tokens; Table V's
chat template for SmolLM2, the raw prefix for Gemma) and the entropy chapter's
(``--n-size`` prefixes of 32 token ids, 16 new tokens from ``generate_ids``). It
measures

* the FLOP/s of a plain ``F.linear`` at the shapes of the model's decode step
  (the head [B, d]·[d, V], the MLP [B, d]·[d, f]) and of its prefill, fp32 and
  bf16, with the thread count and ``torch.backends.cpu.get_cpu_capability()``;
* today's path (``LocalModel.generate``, a fresh query cache) and a minimal
  batched greedy loop on a static KV cache (:func:`static_loop`) on the same
  batches and token budget;
* the FLOP of every answer (:func:`flop_per_token`, :func:`prefill_flop`,
  :func:`answer_flop`), so that useful FLOP over seconds is the achieved FLOP/s,
  set against the matmul's;
* each lever as today's path with one thing changed, with its ratio to today's
  and the number of answers that stay identical: the batch size, a static cache
  (``--compile``: also under ``torch.compile``, whose first pass holds the
  compilation; the static cache replaces the shared prefix's), bf16 weights, and
  the KV cache of the shared chat prefix read by every row (``no prefix cache``:
  today's path computes it once per call, ``LocalModel(prefix_cache=True)``). The
  rows a batch keeps running after they stopped (:func:`wasted_row_steps`) and the
  prefill's share of the time (the ``prefill only`` arm) bound what stopping
  finished rows and reusing the prefix can give.

Arms run in interleaved rounds (``--repeats``) and are timed by this process's
CPU time on one thread (``OMP_NUM_THREADS=1``), which a machine shared with other
jobs does not inflate as it does the wall clock (both are recorded); each arm's
best round counts. Results go to bench/results/roofline-<model>[-<tag>].json.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import functools
import os
import platform
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import CompileConfig, DynamicCache, StaticCache

from analysis import nextword, size
from analysis import phrases as ph
from analysis.core import data, jsonio
from analysis.core.cache import QueryCache
from analysis.models import GenerationSettings, load_model
from analysis.models.base import Request, request_seed
from analysis.models.generation import _eos_ids, _left_padded, generate_alone
from analysis.models.generation import _shared_prefix as shared_prefix
from analysis.models.local import LocalModel
from analysis.size.params import PROFILES as SIZE_PROFILES

OUT = Path(__file__).resolve().parents[1] / "bench" / "results"


def loop_generate(model: LocalModel, prompts: list[str], max_new_tokens: int) -> list[str]:
    """The naive baseline: one ``model.generate`` call per prompt, no batching."""
    tok, hf = model.tokenizer, model.model
    texts = []
    for prompt in prompts:
        ids = (
            tok.apply_chat_template(
                [{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
            if model.is_chat
            else tok(prompt, return_tensors="pt")
        )
        with torch.inference_mode():
            out = hf.generate(
                **ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id
            )
        texts.append(tok.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True))
    return texts


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def timed_cpu(fn):
    """``(result, wall seconds, CPU seconds of this process)``. On one thread the CPU
    time is the work's own time even while a shared machine schedules other
    processes, which a wall clock counts in."""
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - t0, time.process_time() - c0


def bench_sampling(name: str, n: int, batch_size: int) -> dict:
    """Batched sampled answers against one request at a time (see the module docstring)."""
    from analysis.entropy.params import PAPER_STRATEGIES

    model = load_model(name)
    model.model  # load before timing
    texts = [t for t in data.phrases()["phrase"].tolist() if t] * 4
    ids = [x for x in model.tokenize([" ".join(texts[i : i + 6]) for i in range(0, len(texts), 6)])
           if len(x) >= 32]
    decodings = [dict(s) for _, s in PAPER_STRATEGIES if s["temperature"] > 0]
    per = max(1, n // len(decodings))
    prompts = [x[:32] for x in ids[:per]]
    out = {"model": name, "requests": per * len(decodings), "prompt_tokens": 32, "new_tokens": 16,
           "batch_size": batch_size, "threads": torch.get_num_threads(), "decodings": []}
    alone_s = batched_s = differ = 0.0
    for decoding in decodings:
        settings = GenerationSettings(max_new_tokens=16, **decoding)
        seeds = [request_seed({"prompt_ids": p, "settings": settings.as_dict(), "sample": 0})
                 for p in prompts]
        t0 = time.perf_counter()
        ref = [generate_alone(model, p, settings, sd) for p, sd in zip(prompts, seeds)]
        s_alone = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp, QueryCache(Path(tmp) / "s.sqlite") as cache:
            model.cache, model.batch_size = cache, batch_size
            t0 = time.perf_counter()
            got = model.generate_ids(prompts, settings)
            s_batched = time.perf_counter() - t0
        n_diff = sum(a.meta["ids"] != r for a, r in zip(got, ref))
        out["decodings"].append({**decoding, "alone_seconds": round(s_alone, 2),
                                 "batched_seconds": round(s_batched, 2), "differ": n_diff})
        alone_s, batched_s, differ = alone_s + s_alone, batched_s + s_batched, differ + n_diff
        print(f"{decoding}: alone {s_alone:.1f} s, batched {s_batched:.1f} s "
              f"({s_alone / s_batched:.1f}x); {n_diff}/{len(prompts)} answers differ", flush=True)
    out.update(alone_seconds=round(alone_s, 2), batched_seconds=round(batched_s, 2),
               speedup=round(alone_s / batched_s, 2), differ=int(differ))
    print(f"all: {alone_s:.1f} s alone, {batched_s:.1f} s batched: {alone_s / batched_s:.1f}x; "
          f"{int(differ)}/{out['requests']} answers differ", flush=True)
    return out


# -- the roofline: what the hardware allows, and the levers ----------------------------------------


def flop_per_token(cfg, context: float) -> float:
    """FLOP of one decoder step for one row at ``context`` tokens of attention context.

    F(c) = 2 [L (d·h·dₕ + 2·d·k·dₕ + h·dₕ·d + 3·d·f) + d·V] + 4 Σ_l h·dₕ·c_l

    with L layers, width d, h query heads and k key-value heads of size dₕ, a gated
    MLP of width f (gate, up, down), the output head d·V (counted once even when
    tied to the input embedding, which is a lookup), and per layer l the two
    attention products QKᵀ and AV over c_l = c keys (a sliding layer:
    min(c, window)). Norms, rotary embeddings and the softmax are left out (O(d)).
    The matmul part is 2 × the parameters of every linear layer and the head.
    """
    d, f, n_layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    h = cfg.num_attention_heads
    dh = getattr(cfg, "head_dim", None) or d // h
    k = getattr(cfg, "num_key_value_heads", None) or h
    linear = n_layers * (d * h * dh + 2 * d * k * dh + h * dh * d + 3 * d * f) + d * cfg.vocab_size
    kinds = getattr(cfg, "layer_types", None) or ["full_attention"] * n_layers
    window = getattr(cfg, "sliding_window", None)
    keys = sum(min(context, window) if kind == "sliding_attention" and window else context for kind in kinds)
    return 2.0 * linear + 4.0 * h * dh * keys


def prefill_flop(cfg, length: int) -> float:
    """FLOP of reading a prompt of ``length`` tokens: every position through the
    body at its own causal context (position j sees j + 1 keys), the output head
    once (``generate`` keeps the last position's logits only)."""
    head = 2.0 * cfg.hidden_size * cfg.vocab_size
    return sum(flop_per_token(cfg, j + 1) - head for j in range(length)) + head


def answer_flop(cfg, prompt_len: int, new_tokens: int) -> float:
    """Useful FLOP of one answer: its prompt's prefill and each new token after the
    first (the first comes out of the prefill) at its context."""
    decode = sum(flop_per_token(cfg, prompt_len + t) for t in range(1, new_tokens))
    return prefill_flop(cfg, prompt_len) + decode


def wasted_row_steps(prompt_lens: list[int], new_tokens: list[int], stopped: list[bool], budget: int,
                     batch_size: int) -> tuple[int, int]:
    """``(wasted, total)`` decoder row-steps of today's batching: prompts sorted by
    length in batches of ``batch_size``; a batch runs until its last row stops (a
    stopped row's end-of-text token is its last useful step) or the budget, and a
    row that stopped early keeps running to the end of its batch."""
    order = sorted(range(len(prompt_lens)), key=lambda i: prompt_lens[i])
    wasted = total = 0
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        useful = [min(budget, new_tokens[i] + stopped[i]) for i in rows]
        steps = max(useful)
        total += steps * len(rows)
        wasted += sum(steps - u for u in useful)
    return wasted, total


@dataclass
class Workload:
    """What one chapter sends a model: its prompts (text, conversations, or token ids
    for ``generate_ids`` when ``ids``), whether they go through the chat template,
    and the token budget."""

    name: str
    prompts: list
    chat: bool
    max_new_tokens: int
    ids: bool = False


def workloads(model: LocalModel, n: int, tokens: int, n_size: int, seed: int = 1) -> list[Workload]:
    """The phrases chapter's prompts (``n``, half per phrase type, ``tokens`` new
    tokens), the size chapter's at its default profile (``n_size`` positions drawn
    from every text and prefix length; Table V's template for a chat model, the raw
    prefix for a base model; its 6 new tokens) and the entropy chapter's (``n_size``
    prefixes of 32 token ids from the phrases data, 16 new tokens from
    ``generate_ids``, no end-of-text stop). ``seed`` draws the samples."""
    sample = ph.sample_phrases(data.phrases(), max(1, n // 2), seed=seed)
    out = [Workload("phrases", ph.prompts(sample, model.is_chat), model.is_chat, tokens)]
    params = SIZE_PROFILES["default"]
    popular, baseline = data.popular_texts(), data.baseline_texts()
    positions = size.sample_positions({**popular, **baseline}, params["prefix_lens"], 1, seed=0,
                                      baseline=list(baseline))
    positions = positions.sample(min(n_size, len(positions)), random_state=seed - 1).sort_index()
    if nextword.uses_chat(model.is_chat, params["mode"]):
        _, prompts = nextword.chat_prompts(positions, size.chapter_templates(params["template_ids"]))[0]
        out.append(Workload("size", prompts, True, params["max_new_tokens"]))
    else:
        out.append(Workload("size", positions["prefix"].tolist(), False, params["max_new_tokens"]))
    texts = [t for t in data.phrases()["phrase"].tolist() if t]
    ids = [x[:32] for x in model.tokenize([" ".join(texts[i : i + 6]) for i in range(0, len(texts), 6)])
           if len(x) >= 32]
    picked = np.random.default_rng(seed).choice(len(ids), size=min(n_size, len(ids)), replace=False)
    out.append(Workload("entropy", [ids[i] for i in sorted(picked)], False, 16, ids=True))
    return out


def encode(model: LocalModel, work: Workload) -> list[list[int]]:
    """The token ids today's path feeds the model for each prompt."""
    if work.ids:
        return [list(p) for p in work.prompts]
    settings = GenerationSettings(max_new_tokens=work.max_new_tokens)
    as_prompt = (lambda p: [{"role": "user", "content": p}] if isinstance(p, str) else p) if work.chat \
        else (lambda p: p)
    return [model._encode(Request(as_prompt(p), work.chat, settings)) for p in work.prompts]


def today(model: LocalModel, work: Workload, batch_size: int) -> list:
    """The project's answers (``LocalModel.generate`` or ``generate_ids``) with a
    fresh query cache."""
    settings = GenerationSettings(max_new_tokens=work.max_new_tokens)
    with tempfile.TemporaryDirectory() as tmp, QueryCache(Path(tmp) / "q.sqlite") as cache:
        model.cache, model.batch_size = cache, batch_size
        if work.ids:
            return model.generate_ids(work.prompts, settings)
        return model.generate(work.prompts, settings, chat=work.chat)


@contextmanager
def lever(model: LocalModel, hf=None, generate=None, prefix_cache: bool | None = None, **generate_kw):
    """Today's path with one thing changed: another copy of the weights (``hf``), a
    replacement for ``hf.generate``, extra keyword arguments to it, or the shared
    prefix's KV cache turned off (``prefix_cache=False``)."""
    hf = hf if hf is not None else model.model
    saved, saved_prefix = model._model, model.prefix_cache
    model._model = hf
    if prefix_cache is not None:
        model.prefix_cache = prefix_cache
    if generate is not None or generate_kw:
        hf.generate = generate or functools.partial(type(hf).generate, hf, **generate_kw)
    try:
        yield
    finally:
        hf.__dict__.pop("generate", None)
        model._model, model.prefix_cache = saved, saved_prefix


def left_padded(encoded: list[list[int]], batch_size: int, pad: int):
    """Today's batches: prompts sorted by length, left-padded as the model layer pads
    them; ``(indices, ids, mask)``."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        yield (idx, *_left_padded([encoded[i] for i in idx], pad))


def static_loop(hf, ids, att, budget: int, eos: list[int], pad: int) -> torch.Tensor:
    """The minimal batched greedy loop: one prefill, then one forward per token on a
    preallocated (static) KV cache, argmax, finished rows fed padding; stops when
    every row has ended or at the budget. Returns the new ids."""
    n, width = ids.shape
    cache = StaticCache(config=hf.config, max_cache_len=width + budget)
    mask = torch.cat([att, att.new_ones(n, budget)], 1)
    pos = (att.cumsum(-1) - 1).clamp_min(0)
    done, out = torch.zeros(n, dtype=torch.bool), []
    eos_t = torch.tensor(eos or [-1])
    with torch.inference_mode():
        logits = hf(input_ids=ids, attention_mask=att, position_ids=pos, cache=cache, use_cache=True,
                    logits_to_keep=1).logits
        for t in range(budget):
            nxt = torch.where(done, pad, logits[:, -1].argmax(-1))
            out.append(nxt)
            done |= torch.isin(nxt, eos_t)
            if done.all() or t == budget - 1:
                break
            logits = hf(input_ids=nxt[:, None], attention_mask=mask[:, : width + t + 1], cache=cache,
                        position_ids=pos[:, -1:] + t + 1, use_cache=True, logits_to_keep=1).logits
    return torch.stack(out, 1)


def loop_texts(model: LocalModel, encoded, budget: int, batch_size: int,
               stop_at_eos: bool = True) -> list[str]:
    """:func:`static_loop` over today's batches, decoded as today's answers are
    (``stop_at_eos=False``: as ``generate_ids`` answers, every token kept)."""
    tok, hf = model.tokenizer, model.model
    eos = _eos_ids(tok, hf) if stop_at_eos else []
    texts = [""] * len(encoded)
    for idx, ids, att in left_padded(encoded, batch_size, tok.pad_token_id):
        new = static_loop(hf, ids, att, budget, eos, tok.pad_token_id)
        for row, i in enumerate(idx):
            got = new[row].tolist()
            stop = next((k for k, t in enumerate(got) if t in eos), len(got))
            texts[i] = tok.decode(got[:stop], skip_special_tokens=stop_at_eos)
    return texts


def prefill_only(model: LocalModel, encoded, batch_size: int) -> None:
    """Only the prompt-reading forward of today's batches (with its KV cache)."""
    hf = model.model
    for _, ids, att in left_padded(encoded, batch_size, model.tokenizer.pad_token_id):
        with torch.inference_mode():
            hf(input_ids=ids, attention_mask=att, cache=DynamicCache(config=hf.config), use_cache=True,
               logits_to_keep=1)


def matmul_rates(cfg, batch: int, width: int, repeats: int) -> list[dict]:
    """GFLOP/s of ``F.linear`` (x·Wᵀ, the layout of the model's linear layers) at the
    decode step's shapes ([batch, d]·[d, V] the head, [batch, d]·[d, f] the MLP) and
    the prefill's ([batch·width, d]·[d, f]), fp32 and bf16, best of ``repeats``."""
    d, f, v = cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size
    shapes = {"decode head": (batch, d, v), "decode mlp": (batch, d, f), "prefill mlp": (batch * width, d, f)}
    out = []
    for label, (m, k, n) in shapes.items():
        for dtype in (torch.float32, torch.bfloat16):
            run = functools.partial(torch.nn.functional.linear, torch.randn(m, k, dtype=dtype),
                                    torch.randn(n, k, dtype=dtype))
            run()
            best = min(timed_cpu(run)[2] for _ in range(repeats))
            out.append({"shape": label, "m": m, "k": k, "n": n, "dtype": str(dtype).split(".")[-1],
                        "gflops": round(2 * m * k * n / best / 1e9, 1)})
    return out


def lever_arms(model: LocalModel, work: Workload, encoded, batch_sizes, compile_: bool,
               only: list[str] | None = None) -> dict:
    """Today's path (``today``), and each lever as that path with one thing changed
    (``only``: these arms and today's)."""
    default = model.batch_size
    arms = {"today": lambda: today(model, work, default)}
    for bs in batch_sizes:
        if bs != default:
            arms[f"batch {bs}"] = functools.partial(today, model, work, bs)

    def with_lever(**kw):
        def run():
            with lever(model, **kw):
                return today(model, work, default)
        return run

    arms["no prefix cache"] = with_lever(prefix_cache=False)
    # a static cache replaces the shared prefix's (generate takes one cache or the other)
    arms["static cache"] = with_lever(cache_implementation="static", prefix_cache=False)
    if compile_:
        config = CompileConfig(mode="default")
        config._compile_all_devices = True  # generate compiles on a GPU only unless told
        arms["static cache + compile"] = with_lever(cache_implementation="static", compile_config=config,
                                                    prefix_cache=False)
    if not only or "bf16" in only:
        arms["bf16"] = with_lever(hf=copy.deepcopy(model.model).to(torch.bfloat16))
    arms["minimal static loop"] = lambda: loop_texts(model, encoded, work.max_new_tokens, default,
                                                     stop_at_eos=not work.ids)
    arms["prefill only"] = lambda: prefill_only(model, encoded, default)
    return {k: v for k, v in arms.items() if not only or k == "today" or k in only}


def measure(model: LocalModel, work: Workload, args) -> dict:
    """Every arm on one workload, interleaved ``args.repeats`` times (rounds of all
    arms, so that a slow stretch of a shared machine hits every arm); each arm's
    best time, its ratio to today's, and how many answers equal today's."""
    encoded, default = encode(model, work), model.batch_size
    today(model, Workload(work.name, work.prompts[:2], work.chat, 2, work.ids), default)  # warm up
    arms = lever_arms(model, work, encoded, args.batch_sizes, args.compile, args.arms)
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    wall: dict[str, list[float]] = {name: [] for name in arms}
    texts: dict[str, list[str]] = {}
    answers = None
    for _ in range(args.repeats):
        for name, fn in arms.items():
            got, w, s = timed_cpu(fn)
            seconds[name].append(round(s, 2))
            wall[name].append(round(w, 2))
            if got is not None and name not in texts:
                texts[name] = [a if isinstance(a, str) else a.text for a in got]
                answers = got if name == "today" else answers
            print(f"  {work.name:8s} {name:24s} {s:7.2f} s CPU {w:7.2f} s wall", flush=True)
    model.batch_size = default
    out = summarize(model, work, encoded, answers, seconds, texts)
    for name, row in out["arms"].items():
        row["wall_seconds"] = wall[name]
    return out


def summarize(model: LocalModel, work: Workload, encoded, answers, seconds: dict, texts: dict) -> dict:
    """Ratios, answer identity, tokens/s and achieved FLOP/s of each arm; the
    finished-rows and shared-prefix figures of the workload."""
    cfg, n, best = model.model.config, len(encoded), {k: min(v) for k, v in seconds.items()}
    lens = [len(e) for e in encoded]
    new = [a.meta["new_tokens"] for a in answers]
    stopped = [a.meta.get("finish_reason") == "stop" for a in answers]
    useful = sum(answer_flop(cfg, p, t) for p, t in zip(lens, new))
    arms = {}
    for name, s in best.items():
        row = {"cpu_seconds": seconds[name], "best_cpu_seconds": s,
               "speedup_vs_today": round(best["today"] / s, 2)}
        if name in texts:
            same = sum(a == b for a, b in zip(texts[name], texts["today"]))
            row.update(identical_answers=f"{same}/{n}", differing_answers=n - same,
                       tokens_per_s=round(sum(new) / s, 1), achieved_gflops=round(useful / s / 1e9, 2))
        arms[name] = row
    wasted, total = wasted_row_steps(lens, new, stopped, work.max_new_tokens, model.batch_size)
    prefill_share = best.get("prefill only", float("nan")) / best["today"]
    prefix = shared_prefix(encoded) if work.chat else []
    waste, shared = wasted / total, len(prefix) * n / sum(lens)
    return {
        "prompts": n, "chat": work.chat, "max_new_tokens": work.max_new_tokens,
        "mean_prompt_tokens": round(sum(lens) / n, 1), "new_tokens": sum(new),
        "stopped_rows": sum(stopped), "useful_gflop": round(useful / 1e9, 1),
        "flop_per_token_gflop": round(flop_per_token(cfg, sum(lens) / n + work.max_new_tokens / 2) / 1e9, 3),
        "prefill_share_of_today": round(prefill_share, 3),
        "finished_rows": {"wasted_row_steps": wasted, "row_steps": total, "wasted_fraction": round(waste, 3),
                          "bound_on_speedup": round(1 / (1 - waste * (1 - prefill_share)), 2)},
        "shared_prefix": {"tokens": len(prefix), "fraction_of_prompt_tokens": round(shared, 3),
                          "bound_on_speedup": round(1 / (1 - prefill_share * shared), 2)},
        "arms": arms,
    }


def bench_roofline(name: str, args) -> dict:
    """The roofline arm for one model (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp, QueryCache(Path(tmp) / "load.sqlite") as cache:
        model = LocalModel.from_name(name, cache=cache)
        cfg = model.model.config  # load before timing
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=OUT.parents[1]).stdout.strip()
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        out = {"model": name, "commit": commit, "date": now,
               "threads": torch.get_num_threads(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
               "machine": platform.processor() or platform.machine(), "load_average_start": os.getloadavg(),
               "batch_size_today": model.batch_size, "args": vars(args),
               "matmul": matmul_rates(cfg, model.batch_size, 64, max(5, args.repeats)), "workloads": {}}
        peak = max(r["gflops"] for r in out["matmul"] if r["dtype"] == "float32")
        fp32 = {r["shape"]: r["gflops"] for r in out["matmul"] if r["dtype"] == "float32"}
        out["matmul_fp32_peak_gflops"] = peak
        out["bf16_faster"] = {r["shape"]: round(r["gflops"] / fp32[r["shape"]], 2)
                              for r in out["matmul"] if r["dtype"] == "bfloat16"}
        print(f"{name}: matmul fp32 peak {peak} GFLOP/s; bf16/fp32 {out['bf16_faster']}", flush=True)
        for work in workloads(model, args.n, args.tokens, args.n_size, args.seed):
            if args.workloads and work.name not in args.workloads:
                continue
            result = measure(model, work, args)
            for row in result["arms"].values():
                if "achieved_gflops" in row:
                    row["fraction_of_fp32_matmul"] = round(row["achieved_gflops"] / peak, 3)
            out["workloads"][work.name] = result
            print(jsonio.dumps({k: v for k, v in result.items() if k != "arms"}), flush=True)
        out["load_average_end"] = os.getloadavg()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--n", type=int, default=32, help="prompts")
    ap.add_argument("--tokens", type=int, default=32, help="new tokens per prompt")
    ap.add_argument("--batch-sizes", type=int, nargs="*", default=[8, 16, 32, 64])
    ap.add_argument("--sampling", action="store_true", help="the sampled-answers arm only")
    ap.add_argument("--roofline", action="store_true", help="the roofline and levers arm only")
    ap.add_argument("--repeats", type=int, default=2, help="rounds of every roofline arm")
    ap.add_argument("--n-size", type=int, default=48, help="size-chapter prompts of the roofline arm")
    ap.add_argument("--compile", action="store_true", help="also time a static cache under torch.compile")
    ap.add_argument("--arms", nargs="*", help="roofline arms to run besides today's (default: all)")
    ap.add_argument("--workloads", nargs="*", choices=["phrases", "size", "entropy"], help="default: all")
    ap.add_argument("--tag", default="", help="suffix of the roofline results file")
    ap.add_argument("--seed", type=int, default=1, help="draws the roofline arm's prompts")
    args = ap.parse_args()
    if args.roofline:
        result = bench_roofline(args.model, args)
        OUT.mkdir(parents=True, exist_ok=True)
        tag = f"-{args.tag}" if args.tag else ""
        path = OUT / f"roofline-{args.model.replace(':', '-')}{tag}.json"
        path.write_text(jsonio.dumps(result, indent=1))
        return
    if args.sampling:
        batch = args.batch_sizes[-1] if len(args.batch_sizes) == 1 else 16
        result = bench_sampling(args.model, args.n, batch)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"sampling-{args.model.replace(':', '-')}.json").write_text(jsonio.dumps(result, indent=1))
        return

    sample = ph.sample_phrases(data.phrases(), args.n // 2, seed=1)
    model = LocalModel.from_name(args.model)
    model.model  # load before timing
    prompts = ph.prompts(sample, model.is_chat)
    settings = GenerationSettings(max_new_tokens=args.tokens)
    loop_texts, loop_s = timed(lambda: loop_generate(model, prompts, args.tokens))
    results = {
        "model": args.model,
        "prompts": len(prompts),
        "new_tokens": args.tokens,
        "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
        "loop_seconds": round(loop_s, 2),
        "batched": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for bs in args.batch_sizes:
            model.batch_size = bs
            with QueryCache(Path(tmp) / f"bs{bs}.sqlite") as cache:
                model.cache = cache
                answers, s = timed(lambda: model.generate(prompts, settings))
            same = sum(a.text == b for a, b in zip(answers, loop_texts))
            results["batched"].append(
                {
                    "batch_size": bs,
                    "seconds": round(s, 2),
                    "speedup_vs_loop": round(loop_s / s, 2),
                    "identical_to_loop": f"{same}/{len(prompts)}",
                }
            )
            print(
                f"batch {bs:3d}: {s:7.2f} s  ({loop_s / s:4.1f}x the loop's {loop_s:.2f} s); "
                f"identical texts {same}/{len(prompts)}",
                flush=True,
            )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"models-{args.model}.json").write_text(jsonio.dumps(results, indent=1))


if __name__ == "__main__":
    main()
