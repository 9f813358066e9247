"""The one result type of :mod:`analysis.stats`."""

from __future__ import annotations

import math
from dataclasses import dataclass


class StatsError(ValueError):
    """A statistic asked of data that cannot give it (too few points, one class)."""


@dataclass(frozen=True)
class Estimate:
    """A statistic with its evidence: ``value``, a (``lo``, ``hi``) interval
    (NaN when none), the p-value of ``method``'s test against its null (NaN when
    none), the ``n`` rows it rests on and the ``n_units`` independent units among
    them (0 when the rows are the units), and for a computed null its median
    ``null_value`` and the ``n_null`` draws it was computed from."""

    value: float
    lo: float = math.nan
    hi: float = math.nan
    p: float = math.nan
    n: int = 0
    method: str = ""
    n_units: int = 0
    null_value: float = math.nan
    n_null: int = 0

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if math.isnan(self.lo) or math.isnan(self.hi) else (self.lo, self.hi)
