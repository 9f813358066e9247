"""How wide the size chapter's gap interval is at fewer positions: is a smaller sample enough?

    MEMBOOK_CACHE=... python scripts/size_sample_widths.py [--profile default] [--orders 20]

The size chapter puts ``n_per_text`` positions per text and prefix length to each
real model and reports, per model, the popular − baseline accuracy gap with a 95%
cluster-bootstrap interval over texts (:func:`analysis.size.group_gap`). This script
asks what a sample sized to a target interval width would draw: it probes the
chapter's positions (answers come from the query cache after a default execution),
then, for ``k`` positions per text and length (nested subsets of the chapter's, in
``--orders`` random orders), recomputes the gap's interval and reports the mean half
width per model and ``k``, and the smallest ``k`` that reaches each ``--targets`` half
width on average. Written to ``bench/results/size_sample_widths.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core import jsonio  # strict JSON: a missing number is null

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--orders", type=int, default=20, help="random nested orders averaged over")
    ap.add_argument("--ks", default="4,6,8,12,16,24", help="positions per text and length to try")
    ap.add_argument("--targets", default="0.01,0.02,0.03,0.05", help="half widths to reach")
    args = ap.parse_args()
    from analysis import size
    from analysis.models import load_model

    params = size.PARAMS.resolve(args.profile)
    ks = [int(k) for k in args.ks.split(",") if int(k) <= params["n_per_text"]]
    popular, baseline = size.chapter_texts(params)
    samples = size.sample_positions({**popular, **baseline}, params["prefix_lens"], params["n_per_text"],
                                    seed=params["seed"], baseline=list(baseline))
    loaded = {name: load_model(name) for name in params["models"]}
    answers = size.probe_models(loaded, samples, size.chapter_templates(params["template_ids"]),
                                params["mode"], params["max_new_tokens"])
    cell = ["text_id", "prefix_len"]
    positions = answers[cell + ["position"]].drop_duplicates().reset_index(drop=True)
    rng = np.random.default_rng(params["seed"])
    rows = []
    for order in range(args.orders):
        draw = positions.assign(draw=positions.groupby(cell)["position"].transform(
            lambda s: rng.permutation(len(s))))
        drawn = answers.merge(draw, on=cell + ["position"])
        for k in ks:
            gap = size.group_gap(size.accuracy_table(drawn[drawn["draw"] < k]), seed=params["seed"])
            for r in gap.itertuples():
                rows.append({"order": order, "k": k, "model": r.model, "gap": r.gap,
                             "half_width": (r.ci_hi - r.ci_lo) / 2})
    frame = pd.DataFrame(rows)
    mean = frame.groupby(["model", "k"])["half_width"].agg(["mean", "min", "max"]).round(4)
    targets = [float(t) for t in args.targets.split(",")]
    reach = {model: {str(t): next((int(k) for k, row in g.droplevel(0).iterrows() if row["mean"] <= t), None)
                     for t in targets} for model, g in mean.groupby(level=0)}
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    out = {"profile": args.profile, "commit": head, "date": now,
           "n_per_text": params["n_per_text"], "prefix_lens": list(params["prefix_lens"]),
           "texts": {"popular": len(popular), "baseline": len(baseline)}, "orders": args.orders,
           "half_width": {model: {str(k): dict(row) for k, row in g.droplevel(0).iterrows()}
                          for model, g in mean.groupby(level=0)},
           "smallest_k_reaching": reach}
    path = ROOT / "bench" / "results" / "size_sample_widths.json"
    path.write_text(jsonio.dumps(out, indent=1) + "\n")
    print(mean.to_string())
    print(jsonio.dumps(reach, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
