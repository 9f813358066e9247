"""Timing helper shared by the benchmark scripts."""

from __future__ import annotations

import time


def best_of(fn, *args, repeat: int = 3):
    """Run ``fn(*args)`` ``repeat`` times; return the best wall time (s) and the last result."""
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, out
