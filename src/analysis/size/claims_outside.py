"""The size chapter's claims on targets outside calibration (issue "Lab v4"'s models):
does the best lower bound stay at or below the true size where it can break?

* ``heldout_bounds_valid`` (the source's claim that its bounds hold out of
  calibration): every model of the held-out family, a shape the law was not fitted on;
* ``ablation_bounds_valid`` (the book's test in the direction that can fail): every
  ablation, trained longer, on more copies or on uneven copies of the popular texts
  than the reference models, so that it breaks one of the method's assumptions.

Each is a count over the whole design (every such model of the lab), an exact value:
a miss is evidence, not sampling error. Unit: models.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.claims import EXTENSION, SOURCE, Claim, as_kind, not_testable, within
from analysis.size.claims import CHAPTER, SECTION_LADDER

STATEMENTS = {
    "heldout_bounds_valid": ("The best lower bound is at or below the true size for models outside "
                             "calibration (a held-out shape)"),
    "ablation_bounds_valid": ("The best lower bound stays at or below the true size for models that break "
                              "the method's assumptions (over-trained, over-exposed, unevenly exposed)"),
}
SOURCE_VALUE = "every bound valid out of calibration (16 of 16 MoE models, Table II)"


def outside_claims(placed: pd.DataFrame | None, is_ablation) -> list[Claim]:
    """``heldout_bounds_valid`` and ``ablation_bounds_valid`` from
    :func:`analysis.size.bound_targets`'s table (``valid`` per model) and a mask of its
    ablation rows; not testable where the lab trains no such model."""
    out = []
    for id, kind in (("heldout_bounds_valid", SOURCE), ("ablation_bounds_valid", EXTENSION)):
        kw = dict(section=SECTION_LADDER, unit="models", kind=kind,
                  source_value=SOURCE_VALUE if kind == SOURCE else None,
                  comparison="share of the models whose best bound is at or below the true size = 1 (a count "
                             "over every such model of the lab)",
                  control_reason="a count over the whole design; no arm lacks the signal by construction")
        if placed is None or not len(placed):
            out.append(not_testable(id, CHAPTER, STATEMENTS[id],
                                    "this lab trains no model outside calibration", **kw))
            continue
        mask = pd.Series(is_ablation, index=placed.index).astype(bool)
        rows = placed[mask] if id == "ablation_bounds_valid" else placed[~mask]
        if not len(rows):
            out.append(not_testable(id, CHAPTER, STATEMENTS[id], "this lab trains no such model", **kw))
            continue
        k, n = int(rows["valid"].sum()), len(rows)
        status, reason = within(value=k / n, target=1.0, tolerance=0.0, n=n, min_n=1, exact=True,
                                unit="models")
        out.append(Claim(id=id, chapter=CHAPTER, statement=STATEMENTS[id], status=as_kind(status, kind),
                         reason=f"{k} of {n} valid: {reason}", value=k / n, n=n, n_units=n, min_n=1,
                         null_kind="target", null_value=1.0,
                         extra={"valid": k, "models": list(rows["model"]),
                                "invalid": list(rows.loc[~rows["valid"].astype(bool), "model"])}, **kw))
    return out
