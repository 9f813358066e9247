"""Formatting numbers for prose and tables: one home, used by every chapter's ``text.py``."""

from __future__ import annotations

import math


def fmt_pct(x: float, digits: int = 1) -> str:
    """A proportion as a percentage string, e.g. ``0.0432 -> '4.3%'``; "—" when undefined."""
    x = float(x)
    return f"{100 * x:.{digits}f}%" if math.isfinite(x) else "—"


def fmt_interval(lo: float, hi: float, digits: int = 1) -> str:
    """A proportion interval in percent, e.g. ``(0.1, 0.25) -> '[10.0, 25.0]%'``."""
    return f"[{100 * float(lo):.{digits}f}, {100 * float(hi):.{digits}f}]%"


def fmt_p(p: float) -> str:
    """A p-value for prose: three significant digits, or '< 0.001'."""
    return "< 0.001" if p < 0.001 else f"= {p:.3g}"
