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
    none), and the ``n`` items it rests on."""

    value: float
    lo: float = math.nan
    hi: float = math.nan
    p: float = math.nan
    n: int = 0
    method: str = ""

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if math.isnan(self.lo) or math.isnan(self.hi) else (self.lo, self.hi)
