"""Shared inputs of the phrases chapter's tests: the source's 2024 rates and a rates
table built from hand-written counts."""

from __future__ import annotations

import pandas as pd

from analysis.phrases.params import load_source_rates
from analysis.stats.intervals import wilson_interval

#: the source's 2024 rates (state media 3.2% to 8.8%)
SOURCE = load_source_rates()


def rates_of(rows):
    """A rates table (method_rates.rates' columns) from (model, type, matched, total) rows."""
    r = pd.DataFrame(rows, columns=["model", "type", "matched", "total"])
    r["rate"] = r["matched"] / r["total"]
    r["ci_lo"], r["ci_hi"] = wilson_interval(r["matched"].to_numpy(), r["total"].to_numpy())
    return r
