"""What the threshold admits: a completion scored against an ending it did not continue.

A completion is scored against its own phrase's ending. To see how often the
threshold accepts text a model did *not* continue, the same completion is scored
against the ending of another phrase of the same type and the same (cleaned)
length, its own prompt's echo still removed (:func:`guess_distances`). The share of
those guesses below the threshold is a false-match rate on real outputs; the sweep
(:func:`threshold_sweep`) gives both rates at thresholds from 0.1 to 0.6, so that a
threshold's gain in matches can be set beside its gain in false matches.

Pure functions on scored frames (:func:`.method_rates.score`'s columns).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.phrases.method import clean, match
from analysis.stats.intervals import wilson_interval

#: the thresholds of the sweep
SWEEP_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
#: the columns of :func:`threshold_sweep`
SWEEP_COLUMNS = ["set", "model", "threshold", "n", "matched", "rate", "n_guess", "guess_matched",
                 "guess_rate", "guess_lo", "guess_hi"]


def guess_partners(table: pd.DataFrame, lang: str = "zh", seed: int = 0) -> dict[str, str]:
    """For each phrase of ``table`` (``id``, ``type``, ``end``), another phrase of the same
    type whose cleaned ending has the same length: within each such group of at least
    two, a seeded random cycle (every phrase is some other phrase's partner once). A
    phrase alone in its group has no partner."""
    rng = np.random.default_rng(seed)
    lengths = table["end"].map(lambda e: len(clean(e, lang)))
    out: dict[str, str] = {}
    for _, ids in table.groupby([table["type"], lengths], sort=True)["id"]:
        ids = list(ids)
        if len(ids) < 2:
            continue
        order = [ids[i] for i in rng.permutation(len(ids))]
        out.update({a: b for a, b in zip(order, order[1:] + order[:1])})
    return out


def guess_distances(scored: pd.DataFrame, table: pd.DataFrame, lang: str = "zh", seed: int = 0,
                    mode: str = "windowed") -> pd.DataFrame:
    """Each scorable completion of ``scored`` (its ``phrase_id``, ``completion``,
    ``excluded``, ``distance``) scored again against its partner's ending
    (:func:`guess_partners` over ``table``: ``id``, ``type``, ``start``, ``end``), its own
    start's echo removed as in the real score. Columns ``model``, ``phrase_id``,
    ``distance`` (to its own ending) and ``guess`` (to the partner's; NaN when the
    phrase has no partner); excluded completions are left out, as the rates leave them."""
    t = table.drop_duplicates("id").set_index("id")
    partner = guess_partners(t.reset_index(), lang, seed)
    kept = scored[~scored["excluded"].astype(bool)]
    guess = []
    for pid, completion in zip(kept["phrase_id"], kept["completion"]):
        other = partner.get(pid)
        guess.append(np.nan if other is None else
                     match(completion, t.at[other, "end"], t.at[pid, "start"], mode=mode, lang=lang).distance)
    return pd.DataFrame({"model": kept["model"].to_numpy(), "phrase_id": kept["phrase_id"].to_numpy(),
                         "distance": kept["distance"].astype(float).to_numpy(), "guess": guess})


def threshold_sweep(guesses: pd.DataFrame, name: str,
                    thresholds: tuple[float, ...] = SWEEP_THRESHOLDS) -> pd.DataFrame:
    """Per model of ``guesses`` (:func:`guess_distances`) and threshold: the share of its
    completions below the threshold against their own endings (``rate``) and against
    their partners' (``guess_rate``, a false-match rate, with its Wilson 95% interval);
    ``name`` labels the set (:data:`SWEEP_COLUMNS`). The rule is the scorer's: a
    distance strictly below the threshold."""
    rows = []
    for model, g in guesses.groupby("model", sort=False):
        d, q = g["distance"].to_numpy(float), g["guess"].to_numpy(float)
        q = q[np.isfinite(q)]
        for t in thresholds:
            k, kq = int((d < t).sum()), int((q < t).sum())
            lo, hi = wilson_interval(np.array([kq]), np.array([max(len(q), 1)]))
            rows.append([name, model, t, len(d), k, k / len(d) if len(d) else np.nan, len(q), kq,
                         kq / len(q) if len(q) else np.nan, float(lo[0]) if len(q) else np.nan,
                         float(hi[0]) if len(q) else np.nan])
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """The sweep for display: a row per set and model, a column per threshold holding
    "rate · false-match rate" in percent."""
    cell = sweep.assign(cell=[f"{100 * r:.1f}% · {100 * f:.1f}%" if np.isfinite(f) else f"{100 * r:.1f}% · —"
                              for r, f in zip(sweep["rate"], sweep["guess_rate"])])
    wide = cell.pivot_table(index=["set", "model"], columns="threshold", values="cell", aggfunc="first",
                            sort=False)
    wide.columns = [f"< {t:g}" for t in wide.columns]
    return wide.reset_index()
