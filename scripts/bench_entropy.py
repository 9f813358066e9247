"""Benchmark the entropy chapter's scoring and level-set code.

Measures, in one run on the same machine:

* memorization scores (token-level Levenshtein) through rapidfuzz's batch API
  (:func:`analysis.entropy.levenshtein`) against a Python loop over
  ``Levenshtein.distance``, for answers of 16, 32 and 50 tokens;
* the LCS filter (:func:`analysis.entropy.lcs`, prompt vs answer);
* level sets and the entropy line (:func:`analysis.entropy.level_set_table`);
* the bootstrap of the line (:func:`analysis.entropy.bootstrap_fits`).

Optionally (``--model``), batched token-level generation through the shared
model interface at several batch sizes, with an empty query cache.

    python scripts/bench_entropy.py [--pairs 200000] [--model lab:pert-l2x]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from benchutil import best_of


def scoring(n_pairs: int, vocab: int = 4096, seed: int = 0) -> None:
    from rapidfuzz.distance import Levenshtein

    from analysis import entropy

    rng = np.random.default_rng(seed)
    print(f"scoring {n_pairs:,} pairs of token-id lists (vocabulary {vocab:,}); best of 3")
    for length in (16, 32, 50):
        a = [list(map(int, rng.integers(0, vocab, length))) for _ in range(n_pairs)]
        b = [list(map(int, rng.integers(0, vocab, length))) for _ in range(n_pairs)]
        # a realistic mix: a tenth of the responses copy most of the answer
        for i in range(0, n_pairs, 10):
            b[i] = a[i][:-3] + b[i][-3:]
        t_batch, d_batch = best_of(entropy.levenshtein, a, b)
        k = min(n_pairs, 50_000)
        def loop_scores(a=a, b=b, k=k):
            return [Levenshtein.distance(x, y) for x, y in zip(a[:k], b[:k])]

        t_loop, d_loop = best_of(loop_scores)
        assert list(d_batch[:k]) == d_loop
        t_lcs, _ = best_of(entropy.lcs, a, b)
        batch, loop = n_pairs / t_batch, k / t_loop
        print(f"  |s| = {length:2d}: levenshtein batch {batch:12,.0f} pairs/s | "
              f"python loop {loop:10,.0f} pairs/s ({loop / batch:.2f}x of batch) | "
              f"LCS batch {n_pairs / t_lcs:12,.0f} pairs/s")


def level_sets(n_pairs: int, length: int = 16, vocab: int = 4096, seed: int = 0) -> None:
    from analysis import entropy

    rng = np.random.default_rng(seed)
    scores = rng.integers(0, length + 1, n_pairs)
    suffixes = [list(map(int, rng.integers(0, vocab, length))) for _ in range(n_pairs)]
    texts = ["x" * length] * n_pairs
    t_table, table = best_of(entropy.level_set_table, scores, suffixes, texts)
    t_fit, _ = best_of(entropy.fit_levels, table)
    n_boot = 200
    t_boot, boot = best_of(lambda: entropy.bootstrap_fits(scores, suffixes, n_boot=n_boot), repeat=1)
    print(f"level sets of {n_pairs:,} pairs (|s| = {length}): table {t_table:.3f} s, "
          f"fit {1e3 * t_fit:.2f} ms, bootstrap {n_boot} resamples {t_boot:.1f} s "
          f"({1e3 * t_boot / n_boot:.1f} ms each, {len(boot)} kept)")


def generation(model_name: str, n: int, batch_sizes: list[int], prefix: int = 32, suffix: int = 16) -> None:
    from analysis import entropy
    from analysis.core.cache import QueryCache
    from analysis.models import GenerationSettings, load_model

    rng = np.random.default_rng(0)
    for bs in batch_sizes:
        cache = QueryCache(Path(tempfile.mkdtemp()) / "q.sqlite")
        model = load_model(model_name, cache=cache, batch_size=bs)
        vocab = len(model.tokenizer)
        pairs = {"prefix": [list(map(int, rng.integers(100, vocab, prefix))) for _ in range(n)],
                 "suffix": [list(map(int, rng.integers(100, vocab, suffix))) for _ in range(n)]}
        import pandas as pd

        model.model  # load outside the timing
        t0 = time.perf_counter()
        entropy.discoverable(model, pd.DataFrame(pairs), GenerationSettings())
        dt = time.perf_counter() - t0
        print(f"{model_name}: batch {bs:3d}: {n / dt:7.1f} pairs/s ({n} pairs, {prefix} + {suffix} tokens)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--model", default=None, help="also time generation with this model, e.g. lab:pert-l2x")
    ap.add_argument("--gen-pairs", type=int, default=256)
    ap.add_argument("--batch-sizes", default="1,16,64")
    args = ap.parse_args(argv)
    scoring(args.pairs)
    level_sets(min(args.pairs, 50_000))
    if args.model:
        generation(args.model, args.gen_pairs, [int(b) for b in args.batch_sizes.split(",")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
