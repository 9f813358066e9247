"""The size chapter's calibration claims: the pairwise test of Section 3.4 holds
its level under a true null.

* ``calibration_<kind>``: per block-score kind, the false-positive rate of the test
  on two resamples of one model (replicates are the unit; the binomial at α is the
  exact null).

The shared rules and constants are in :mod:`analysis.size.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from analysis.core.claims import Claim, not_testable
from analysis.size.claims import CHAPTER, SECTION_CALIBRATION, at_least
from analysis.size.params import KIND_ORDER, PAPER_ALPHA
from analysis.stats.intervals import wilson_interval

#: null replicates below which a calibration is inconclusive
CALIBRATION_MIN_REPS = 100
#: a kind's false-positive rate holds its level up to alpha + this many standard errors
CALIBRATION_SE = 2.0

KIND_STATEMENTS = {
    "raw": "with the source's block score on raw accuracies (this book's default)",
    "lifted": "with the source's block score on lifted accuracies",
    "all": "with block scores averaging raw and lifted accuracies together (this book's reading)",
}


def calibration_status(*, rate: float, se: float, n: int, alpha: float) -> tuple[str, str, float]:
    """Status, reason and exact one-sided binomial p (the rate above α) of "the
    false-positive rate under a true null holds its level": :func:`within` the band
    [0, α + 2 se] (a conservative test holds its level too); a miss is not
    reproduced only when the rate's 95% Wilson interval lies wholly above it."""
    limit = alpha + CALIBRATION_SE * se
    k = int(round(rate * n))
    p = float(stats.binomtest(k, n, alpha, alternative="greater").pvalue) if n else float("nan")
    interval = tuple(float(x) for x in wilson_interval(k, n)) if n else None
    status, reason = at_least(value=rate, floor=0.0, ceiling=limit, interval=interval, n=n,
                              min_n=CALIBRATION_MIN_REPS, unit="replicates")
    return status, reason, p


def calibration_claims(cal: pd.DataFrame, alpha: float = PAPER_ALPHA,
                       kinds: Sequence[str] = KIND_ORDER, prefix: str = "calibration",
                       model: str | None = None) -> list[Claim]:
    """Per block-score kind: the pairwise test rejects a true null at most at its
    level, i.e. its false-positive rate lies in [0, α + 2 se] (``cal`` from
    :func:`~analysis.size.method_calibration.calibration`). The replicates are the
    unit (each an independent pair of resamples); the exact null of the count of
    rejections is Binomial(n, α). Ids are ``<prefix>_<kind>``; ``model`` (the model
    resampled) goes into the statement when given."""
    at = cal[np.isclose(cal["alpha"].astype(float), alpha)].set_index("kind") if len(cal) else pd.DataFrame()
    out = []
    for kind in kinds:
        cid = f"{prefix}_{kind}"
        statement = f"The pairwise test, {KIND_STATEMENTS[kind]}, rejects a true null at most at its level α"
        if model:
            statement += f" (resampling {model})"
        kw = dict(section=SECTION_CALIBRATION, source_value=f"α = {alpha:g}", unit="replicates",
                  comparison=(f"false-positive rate ≤ α + {CALIBRATION_SE:g} se, two resamples of one model "
                              "(not reproduced when its 95% Wilson interval lies above)"))
        if kind not in at.index:
            out.append(not_testable(cid, CHAPTER, statement, "the model it resamples has no scorable answer",
                                    extra={"kind": kind}, **kw))
            continue
        r = at.loc[kind]
        rate, se, n = float(r["false_positive_rate"]), float(r["se"]), int(r["n_rep"])
        status, reason, p = calibration_status(rate=rate, se=se, n=n, alpha=alpha)
        k = int(round(rate * n))
        out.append(Claim(id=cid, chapter=CHAPTER, statement=statement, status=status, reason=reason,
                         value=rate, interval=tuple(float(x) for x in wilson_interval(k, n)), n=n, n_units=n,
                         p=p,
                         min_n=CALIBRATION_MIN_REPS, null_kind="analytic", null_value=alpha,
                         control_reason=("the replicates are themselves a true null: two resamples of one "
                                         "model"),
                         extra={"kind": kind, "alpha": alpha, "se": se, "limit": alpha + CALIBRATION_SE * se,
                                "model": model},
                         **kw))
    return out
