"""Generation and scoring batch sizes on the entropy chapter's own requests.

The entropy chapter is the book's largest consumer of model calls: on the default
profile, dataset inference asks each of two lab models for 8 x 1,500 greedy
continuations (32 + 16 tokens) and scores 8 x 500 windows, and each real model
3 x 500 continuations. This script draws those requests exactly as the chapter
does (:func:`analysis.entropy.sample_pairs` on the chapter's candidate sets, set
``k`` with seed ``sample_seed + k``), then, for every batch size asked, in one run
on the same machine:

* generates every pair's continuation (greedy, the chapter's decoding) through
  the model layer with an empty query cache, and counts the answers that differ
  from the first batch size's (the model's batch size today);
* scores a slice of the windows (``score_ids_stats``, what the membership-inference
  attacks read), and gives the largest absolute difference from today's.

The batch size is not part of a model's cache identity, so a batch size may replace
today's only where every answer is identical and every score equal: then cached
answers stay valid and no committed value moves. Timings are the best of
``--repeats`` rounds (wall and process CPU seconds); compare ratios within one run.

    python scripts/bench_batch_sizes.py --model lab:pert-l2x --batch-sizes 16 64 128 256
    python scripts/bench_batch_sizes.py --model gemma3-270m --batch-sizes 32 64 128

Writes ``bench/results/batch-sizes-<model>.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from analysis.core import jsonio  # strict JSON: a missing number is null

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"


def chapter_pairs(model, name: str, n: int, params: dict) -> list[tuple[list[int], list[int]]]:
    """The default profile's dataset-inference pairs for ``model``, first ``n`` of each set."""
    from analysis import entropy
    from analysis.core import data

    if name.startswith("lab:"):
        from analysis.lab import ladder

        lab = ladder.build_lab(params["lab_profile"], runs=params["di_models"])
        sets = entropy.lab_candidate_sets(lab.corpus, params["lab_popular_sets"], params["lab_heldout_sets"])
        p, s, seed = params["lab_prefix_tokens"], params["lab_suffix_tokens"], params["seed"] + 10
    else:
        sets = entropy.real_candidate_sets(data.popular_texts(), data.baseline_texts())
        p, s, seed = params["prefix_tokens"], params["suffix_tokens"], params["seed"] + 20
    out = []
    for k, cand in enumerate(sets):
        tokens = dict(zip(cand.docs, model.tokenize(list(cand.docs.values()))))
        pairs = entropy.sample_pairs(tokens, p, s, n, seed=seed + k, balance=cand.balance)
        out += [(list(map(int, a)), list(map(int, b))) for a, b in zip(pairs["prefix"], pairs["suffix"])]
    return out


def timed(fn, repeats: int):
    best_wall = best_cpu = float("inf")
    out = None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return round(best_wall, 2), round(best_cpu, 2), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="lab:pert-l2x")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64, 128, 256],
                    help="the first is the reference (today's)")
    ap.add_argument("--pairs", type=int, default=300, help="pairs per candidate set")
    ap.add_argument("--score", type=int, default=512, help="windows scored (score_ids_stats)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-generate", action="store_true", help="time the scoring only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if any(b < 1 for b in args.batch_sizes):
        ap.error(f"--batch-sizes must be positive integers, got {args.batch_sizes}")

    import numpy as np
    import torch

    from analysis.core.cache import QueryCache
    from analysis.entropy.params import PROFILES
    from analysis.models import GenerationSettings, load_model

    params = PROFILES["default"]
    probe = load_model(args.model)
    pairs = chapter_pairs(probe, args.model, args.pairs, params)
    prompts = [p for p, _ in pairs]
    windows = [p + s for p, s in pairs][: args.score]
    settings = GenerationSettings(temperature=params["temperature"], max_new_tokens=len(pairs[0][1]))
    print(f"{args.model}: {len(prompts)} continuations, {len(windows)} windows scored, "
          f"{torch.get_num_threads()} threads", flush=True)

    def empty_cache():  # every round asks the model, never the cache
        return QueryCache(Path(tempfile.mkdtemp()) / "q.sqlite")

    arms, ref_answers, ref_scores = {}, None, None
    for bs in args.batch_sizes:
        model = load_model(args.model, cache=empty_cache(), batch_size=bs, ids_batch_size=bs)
        model.model  # weights load outside the timing

        def generate(model=model):
            model.cache = empty_cache()
            return [a.meta["ids"] for a in model.generate_ids(prompts, settings)]

        def score(model=model):
            model.cache = empty_cache()
            return model.score_ids_stats(windows)

        g_wall, g_cpu, answers = (None, None, []) if args.no_generate else timed(generate, args.repeats)
        s_wall, s_cpu, scores = timed(score, args.repeats)
        if ref_answers is None:
            ref_answers, ref_scores = answers, scores
        differ = sum(a != b for a, b in zip(answers, ref_answers))
        diff = max((float(np.max(np.abs(r[k] - q[k]))) for r, q in zip(scores, ref_scores) for k in r),
                   default=0.0)
        arms[str(bs)] = dict(generate_wall_s=g_wall, generate_cpu_s=g_cpu, score_wall_s=s_wall,
                             score_cpu_s=s_cpu, differing_answers=differ, max_abs_score_diff=diff)
        generated = "not timed" if args.no_generate else f"{g_wall:7.2f} s wall ({g_cpu:7.2f} CPU)"
        print(f"  batch {bs:4d}: generate {generated}, score {s_wall:6.2f} s, "
              f"{differ} answers differ, scores differ by at most {diff:.3g}", flush=True)
    ref = arms[str(args.batch_sizes[0])]
    for arm in arms.values():
        arm["generate_speedup"] = (None if args.no_generate
                                   else round(ref["generate_wall_s"] / arm["generate_wall_s"], 2))
        arm["score_speedup"] = round(ref["score_wall_s"] / arm["score_wall_s"], 2)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                            cwd=RESULTS.parents[1]).stdout.strip()
    record = dict(model=args.model, commit=commit, continuations=len(prompts), windows=len(windows),
                  prompt_tokens=len(prompts[0]), new_tokens=settings.max_new_tokens,
                  threads=torch.get_num_threads(), reference_batch=args.batch_sizes[0], repeats=args.repeats,
                  arms=arms,
                  load_average=[round(x, 2) for x in os.getloadavg()],
                  date=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    out = Path(args.out) if args.out else RESULTS / f"batch-sizes-{args.model.replace(':', '-')}.json"
    out.write_text(jsonio.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
