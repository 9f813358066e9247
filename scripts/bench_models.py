"""Benchmark: batched local continuation vs a one-prompt-at-a-time generate loop.

    python scripts/bench_models.py [--model smollm2-135m-instruct] [--n 32] [--tokens 32]

Both arms continue the same phrase prompts greedily with the same token budget,
in the same process, with the query cache out of the way (a fresh sqlite file
per arm), so the ratio of their wall times is what batching buys. Also times
a few batch sizes. Results go to bench/results/models.json.
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
from analysis.models import GenerationSettings
from analysis.models.local import LocalModel

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--n", type=int, default=32, help="prompts")
    ap.add_argument("--tokens", type=int, default=32, help="new tokens per prompt")
    ap.add_argument("--batch-sizes", type=int, nargs="*", default=[8, 16, 32, 64])
    args = ap.parse_args()

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
            model.cache = QueryCache(Path(tmp) / f"bs{bs}.sqlite")
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
