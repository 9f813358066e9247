"""Could another copy distribution of the popular excerpts put the lab in the entropy
source's regime? A reweighting study on the trained lab, no retraining.

The entropy chapter samples its lab model's training stream weighted by copies. On
the default lab that sample is a bowl: thousands of verbatim answers (e = 0), a few
dozen at e = 1-7, then thousands again near e = |s|. The source's regime is the
other shape: low scores exponentially rarer than high ones. This script asks how
far a different spread of copies over the popular texts would move the level-set
line, with the model's answers as they are:

1. draw the chapter's main sample from the lab model's stream (its ``default``
   parameters: |p| + |s|, n, seed) and score it (answers come from the query cache
   when the chapter has run);
2. for each candidate design (a copies value per popular text), reweight the
   sample's popular pairs so each text carries its new copies, keep every other
   pair's weight, and resample ``n`` pairs (seeded);
3. fit the level-set entropy line (:func:`analysis.entropy.analyse_set`) and count
   the kept pairs per score.

The model is not retrained, so each popular pair keeps the score the model gave it
at its text's copies, and a new copies value borrows the pairs of the nearest value
the lab has (on a log scale). That assumes a text's memorization depends on its own
copies only; a real retraining also changes how many passes the rest of the corpus
gets. The figures bound what a copy distribution alone can do for this model; they
are not a lab.

    python scripts/entropy_copy_designs.py [--run pert-l2x] [--out bench/results/entropy_copy_designs.json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from analysis.core import jsonio  # noqa: E402  (strict JSON: a missing number is null)


def designs(lab: np.ndarray, lo: int, hi: int) -> dict[str, np.ndarray]:
    """Copies per popular text: the lab's own (``lab``, a geometric spread from ``lo``
    to ``hi``), that spread with lower caps, and Zipf spreads (the text of rank k
    gets ``max · k^-s`` copies, at least ``lo``)."""
    n_texts = len(lab)
    out = {f"geometric {lo}-{hi} (the lab)": lab}
    for cap in (16, 12, 8):
        out[f"geometric {lo}-{cap}"] = np.geomspace(lo, cap, n_texts).round()
    for s in (0.5, 0.75, 1.0):
        for top in (16, 32, 64):
            out[f"Zipf s={s} max={top}"] = np.maximum(lo, np.round(top * np.arange(1, n_texts + 1) ** -s))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", default="pert-l2x", help="the lab run whose stream and answers are reweighted")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "entropy_copy_designs.json"))
    args = ap.parse_args()

    from analysis import entropy
    from analysis.lab import ladder, profiles
    from analysis.models import load_model

    p = entropy.PARAMS.resolve("default")
    cfg = profiles.get_profile(p["lab_profile"]).corpus
    lab = ladder.build_lab(p["lab_profile"], runs=[args.run])
    model = load_model(profiles.model_name(p["lab_profile"], args.run))
    stream = entropy.training_stream(lab, args.run, model)
    P, S, n = p["lab_prefix_tokens"], p["lab_suffix_tokens"], p["n_lab"]
    pool = entropy.sample_pairs(stream.tokens, P, S, n, seed=p["seed"], weights=stream.copies)
    settings = next(iter(entropy.lab_decodings(p["temperature"], seed=p["seed"]).values()))
    scored = entropy.discoverable(model, pool, settings, p["lcs_filter"], progress=args.run)

    copies = scored["doc_id"].map(lambda d: stream.copies[d]).to_numpy()
    source = scored["doc_id"].map(stream.source).to_numpy()
    popular = source == "popular"
    texts = {c: len(set(scored["doc_id"][popular & (copies == c)])) for c in sorted(set(copies[popular]))}
    have = np.array(sorted(texts))
    lab_design = np.sort([d.copies for d in lab.corpus.documents if d.kind == "popular"])

    rows = []
    for name, design in designs(lab_design, cfg.popular_copies, cfg.popular_max_copies).items():
        nearest = Counter(int(have[np.argmin(abs(np.log(have) - np.log(c)))]) for c in design)
        w = np.ones(len(scored))
        for c, k in texts.items():
            w[popular & (copies == c)] = nearest.get(c, 0) / k
        # the popular share of the stream scales with the design's total copies
        w[popular] *= (design.sum() / lab_design.sum()) * popular.sum() / w[popular].sum()
        idx = np.random.default_rng(1).choice(len(scored), size=n, p=w / w.sum())
        sub = scored.iloc[idx].reset_index(drop=True)
        fit = entropy.analyse_set(name, sub, n_boot=10).fit
        counts = entropy.kept(sub)["score"].astype(int).value_counts().reindex(range(S + 1), fill_value=0)
        rows.append({"design": name, "copies_total": int(design.sum()), "copies_max": int(design.max()),
                     "popular_pairs": int(popular[idx].sum()), "r": None if fit is None else round(fit.r, 3),
                     "pairs_by_score": counts.tolist()})
        print(f"{name:28s} r = {rows[-1]['r']}  e=0: {counts[0]:5d}  e=1-7: {counts[1:8].tolist()}",
              flush=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    weights = lab.fingerprints().set_index("run").loc[args.run, "weights_sha256"]
    out = {"profile": p["lab_profile"], "run": args.run, "weights_sha256": weights, "commit": commit,
           "date": time.strftime("%Y-%m-%d"),
           "sample": {"prefix_tokens": P, "suffix_tokens": S, "pairs": n, "seed": p["seed"]},
           "observed_r": round(entropy.analyse_set("observed", scored, n_boot=10).fit.r, 3),
           "designs": rows}
    Path(args.out).write_text(jsonio.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
