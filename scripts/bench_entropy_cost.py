"""Benchmark what the entropy chapter's profiles cost in model work: the measured
rate of every kind of model query the chapter sends (continuations of each prompt
and answer length under each decoding, whole-window scores for the membership
attacks), on each model, in a fresh query cache, projected onto the queries each
profile sends.

    python scripts/bench_entropy_cost.py [--pairs-lab 256] [--pairs-real 64]

The chapter's model work is its continuations and window scores; everything else
(scoring, level sets, bootstraps) is a few minutes of CPU whatever the profile.
Each rate is measured once, on ``--pairs-lab`` pairs for a lab model and
``--pairs-real`` for a real one, then multiplied by the number of such queries the
profile sends (``stages``), so the default profile's projection can be set beside
its measured cold execution (``bench/results/book_cold.json``).

Writes ``bench/results/entropy_cost.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from analysis import entropy
from analysis.core import data, jsonio  # strict JSON: a missing number is null
from analysis.core.cache import QueryCache
from analysis.entropy.run import strategy_settings
from analysis.lab import ladder
from analysis.models import load_model

OUT = Path(__file__).resolve().parents[1] / "bench" / "results" / "entropy_cost.json"
PROFILES = ("default", "paper")


def stages(p: dict, n_lab_sets: int, n_real_sets: int) -> list[dict]:
    """The model queries profile ``p`` sends, one row per (stage, model, query kind):
    ``model`` (``"lab:<run>"`` or a real model), ``prefix``, ``suffix`` (0 for a
    window score), ``decoding`` (a label of :func:`entropy.lab_decodings` or a
    strategy name; None for a score) and ``n``."""
    P, S = p["lab_prefix_tokens"], p["lab_suffix_tokens"]
    main, other = entropy.lab_decodings(p["temperature"], seed=p["seed"])
    lab = f"lab:{p['lab_model']}"
    rows = [dict(stage="lab main sample", model=lab, prefix=P, suffix=S, decoding=d, n=p["n_lab"])
            for d in (main, other)]
    rows += [dict(stage="answer lengths", model=lab, prefix=P, suffix=L, decoding=main, n=p["n_strategy"])
             for L in p["lab_suffix_lengths"]]
    rows += [dict(stage="decoding strategies", model=lab, prefix=P, suffix=S, decoding=s, n=p["n_strategy"])
             for s in p["strategies"]]
    for run in p["di_models"]:
        rows.append(dict(stage="dataset inference (lab)", model=f"lab:{run}", prefix=P, suffix=S,
                         decoding=main, n=p["n_di_lab"] * n_lab_sets))
        rows.append(dict(stage="attacks (lab)", model=f"lab:{run}", prefix=P + S, suffix=0, decoding=None,
                         n=p["n_mia_lab"] * n_lab_sets))
    for name in p["models"]:
        rows.append(dict(stage="dataset inference (real)", model=name, prefix=p["prefix_tokens"],
                         suffix=p["suffix_tokens"], decoding=main, n=p["n_real"] * n_real_sets))
        rows.append(dict(stage="attacks (real)", model=name, prefix=p["prefix_tokens"] + p["suffix_tokens"],
                         suffix=0, decoding=None, n=p["n_mia_real"] * n_real_sets))
    return rows


def kind(row: dict) -> tuple:
    """What a query's rate depends on: its model, prompt and answer lengths and decoding."""
    return row["model"], row["prefix"], row["suffix"], row["decoding"]


def settings_of(decoding: str, p: dict):
    decodings = entropy.lab_decodings(p["temperature"], seed=p["seed"])
    return decodings[decoding] if decoding in decodings else strategy_settings(decoding, seed=p["seed"])


def measure(model, docs: dict, row: dict, p: dict, m: int, seed: int = 99) -> float:
    """Seconds per query of ``row``'s kind on ``model``, over ``m`` fresh queries."""
    pairs = entropy.sample_pairs(docs, row["prefix"], max(row["suffix"], 1), m, seed=p["seed"] + seed)
    t0 = time.perf_counter()
    if row["suffix"]:
        entropy.discoverable(model, pairs, settings_of(row["decoding"], p), p["lcs_filter"])
    else:
        entropy.score_sequences(model, [list(x)[: row["prefix"]] for x in pairs["prefix"]])
    return (time.perf_counter() - t0) / len(pairs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs-lab", type=int, default=256,
                    help="queries per rate on a lab model (default 256)")
    ap.add_argument("--pairs-real", type=int, default=64,
                    help="queries per rate on a real model (default 64)")
    args = ap.parse_args(argv)
    params = {name: entropy.PARAMS.resolve(name) for name in PROFILES}
    p0 = params["default"]
    lab = ladder.build_lab(p0["lab_profile"], runs=[p0["lab_model"], *p0["di_models"]], progress=False)
    n_lab_sets = len(entropy.lab_candidate_sets(lab.corpus, p0["lab_popular_sets"], p0["lab_heldout_sets"]))
    real_sets = entropy.real_candidate_sets(data.popular_texts(), data.baseline_texts())
    cache = QueryCache(Path(tempfile.mkdtemp()) / "queries.sqlite")
    models, docs, rates = {}, {}, {}
    rows = {name: stages(p, n_lab_sets, len(real_sets)) for name, p in params.items()}
    for name, p in params.items():
        for row in rows[name]:
            key = kind(row)
            if key in rates:
                continue
            if row["model"] not in models:
                lab_model = row["model"].startswith("lab:")
                full = ladder.model_name(p["lab_profile"], row["model"][4:]) if lab_model else row["model"]
                models[row["model"]] = load_model(full, cache=cache)
                mdl = models[row["model"]]
                docs[row["model"]] = (entropy.training_stream(lab, p["lab_model"], mdl).tokens if lab_model
                                      else dict(zip(real_sets[0].docs,
                                                    mdl.tokenize(list(real_sets[0].docs.values())))))
                measure(mdl, docs[row["model"]], row, p, 8, seed=7)  # warm-up, not timed
            m = args.pairs_lab if row["model"].startswith("lab:") else args.pairs_real
            rates[key] = measure(models[row["model"]], docs[row["model"]], row, p, m)
            print(f"{name}: {key} {rates[key]:.4f} s/query", flush=True)
    out = {}
    for name in PROFILES:
        table = [{**r, "s_per_query": round(rates[kind(r)], 5),
                  "minutes": round(r["n"] * rates[kind(r)] / 60, 2)} for r in rows[name]]
        out[name] = {"stages": table, "minutes": round(sum(r["minutes"] for r in table), 1)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rec = {"profiles": out, "pairs_lab": args.pairs_lab, "pairs_real": args.pairs_real,
           "torch_threads": torch.get_num_threads(), "cores": len(os.sched_getaffinity(0)),
           "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime())}
    OUT.write_text(jsonio.dumps(rec, indent=1) + "\n")
    print({k: v["minutes"] for k, v in out.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
