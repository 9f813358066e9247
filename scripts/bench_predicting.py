"""Benchmark the predicting chapter's scoring: labels, NLL and suffix accuracy.

Scores every injected sequence of a lab profile under every run of it
(:func:`analysis.predicting.score_runs`), in one run on the same machine:

* cold, with an empty query cache, at several batch sizes (model loading is
  outside the timing);
* warm, a second pass over the same cache, which must recompute nothing.

    python scripts/bench_predicting.py [--profile default] [--batch-sizes 1,16,64]

Prints (sequence, run) scores per second and writes them to
``bench/results/predicting-<profile>.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from analysis.core import jsonio  # strict JSON: a missing number is null


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", help="lab profile (default: default)")
    ap.add_argument("--batch-sizes", default="1,16,64")
    args = ap.parse_args(argv)

    from analysis import predicting as PR
    from analysis.core.cache import QueryCache
    from analysis.lab import ladder, profiles
    from analysis.models import load_model

    lab = ladder.build_lab(args.profile, progress=False)
    inj = lab.corpus.injection_table()
    ids = lab.tokenizer(list(inj["text"]), add_special_tokens=False)["input_ids"]
    sequences = dict(zip(inj["seq_id"], ids))
    runs = [r.name for r in lab.profile.runs]
    results = {"profile": args.profile, "sequences": len(sequences), "runs": len(runs), "cold": {}}
    print(f"{len(sequences)} sequences x {len(runs)} runs = {len(sequences) * len(runs):,} scores")
    for bs in [int(b) for b in args.batch_sizes.split(",")]:
        cache = QueryCache(Path(tempfile.mkdtemp()) / "q.sqlite")
        models = {r: load_model(profiles.model_name(args.profile, r), cache=cache, batch_size=bs)
                  for r in runs}
        for m in models.values():
            m.model  # load the weights outside the timing
        t0 = time.perf_counter()
        cold = PR.score_runs(models, sequences)
        dt = time.perf_counter() - t0
        results["cold"][bs] = round(len(cold) / dt, 1)
        print(f"cold, batch {bs:3d}: {dt:6.2f} s, {len(cold) / dt:8.1f} scores/s")
    t0 = time.perf_counter()
    warm = PR.score_runs(models, sequences)
    dt = time.perf_counter() - t0
    cols = ["extract", "suffix_acc"]
    same = bool((warm[cols].to_numpy() == cold[cols].to_numpy()).all())
    results["warm"] = round(len(warm) / dt, 1)
    results["warm_equals_cold"] = same
    print(f"warm (cache), batch {bs:3d}: {dt:6.2f} s, {len(warm) / dt:8.1f} scores/s; same labels: {same}")
    out = Path(__file__).resolve().parents[1] / "bench" / "results" / f"predicting-{args.profile}.json"
    out.write_text(jsonio.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
