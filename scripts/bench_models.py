"""Benchmark: batched local continuation vs a one-prompt-at-a-time generate loop.

    python scripts/bench_models.py [--model smollm2-135m-instruct] [--n 32] [--tokens 32]
    python scripts/bench_models.py --sampling [--model lab:deep-128] [--n 240]

Both arms continue the same phrase prompts greedily with the same token budget,
in the same process, with the query cache out of the way (a fresh sqlite file
per arm), so the ratio of their wall times is what batching buys. Also times
a few batch sizes. Results go to bench/results/models-<model>.json.

``--sampling`` times sampled answers at the entropy chapter's setting (prompts of
32 tokens from the phrases data, 16 new tokens, no end-of-text stop) over the
sampled decodings of its Table 4: one request at a time as the book made them
(:func:`analysis.models.local.generate_alone`) against the batched path
(:class:`analysis.models.local.RowSampler`), and counts the answers that differ
(a token flipped by a batch-dependent logit). Results go to
bench/results/sampling-<model>.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import torch
from transformers import GenerationConfig  # noqa: F401  (import cost outside the timings)

from analysis import phrases as ph
from analysis.core import data
from analysis.core.cache import QueryCache
from analysis.models import GenerationSettings, load_model
from analysis.models.base import request_seed
from analysis.models.local import LocalModel, generate_alone

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--n", type=int, default=32, help="prompts")
    ap.add_argument("--tokens", type=int, default=32, help="new tokens per prompt")
    ap.add_argument("--batch-sizes", type=int, nargs="*", default=[8, 16, 32, 64])
    ap.add_argument("--sampling", action="store_true", help="the sampled-answers arm only")
    args = ap.parse_args()
    if args.sampling:
        batch = args.batch_sizes[-1] if len(args.batch_sizes) == 1 else 16
        result = bench_sampling(args.model, args.n, batch)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"sampling-{args.model.replace(':', '-')}.json").write_text(json.dumps(result, indent=1))
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
    (OUT / f"models-{args.model}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
