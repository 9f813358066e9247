"""A claim is a value: what a source found, what this run found, and the verdict.

Every verdict the book states is a :class:`Claim`, computed from the numbers by a
chapter's ``claims.py`` and rendered to a sentence by its ``text.py``. A default
execution writes the chapter's claims to ``results/<chapter>.json`` under
``"claims"`` and the scoreboard page lists them all.

The statuses:

* ``reproduced``: this run's value lies in the source's direction and passes the
  comparison (significant where a test is named), with at least ``min_n`` items;
* ``not reproduced``: enough evidence, and the comparison fails, or the value is
  significant in the other direction;
* ``inconclusive``: fewer items than ``min_n``, or a value not significantly
  different from the null either way;
* ``not testable here``: the run has no value for it (no such model, a part the
  profile skips).

A claim that the lab could not have failed (its signal is built into the corpus)
carries ``by_design=True`` and the page says so beside its status.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
STATUSES = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE)


class ClaimError(ValueError):
    """A claim built with a status, interval or n that cannot be."""


def _number(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Claim:
    """One verdict of a chapter, with its evidence.

    ``id`` is unique in its chapter (``"e3_direction"``); ``statement`` is the
    source's finding in a line; ``source_value`` the source's number as the
    source prints it (a string, from ``data/*.csv`` or the source's text);
    ``value`` this run's number, ``interval`` its (lo, hi) or None, ``n`` the
    items it rests on, ``p`` its p-value where a test was run; ``comparison``
    says how the status was decided; ``section`` is the page label the
    scoreboard links to.
    """

    id: str
    chapter: str
    statement: str
    status: str
    reason: str
    comparison: str
    value: float | None = None
    interval: tuple[float, float] | None = None
    n: int | None = None
    p: float | None = None
    min_n: int | None = None
    source_value: str | None = None
    section: str | None = None
    by_design: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ClaimError(f"claim {self.id!r}: status must be one of {STATUSES}, got {self.status!r}")
        if not self.reason:
            raise ClaimError(f"claim {self.id!r}: a status needs its reason")
        object.__setattr__(self, "value", _number(self.value))
        object.__setattr__(self, "p", _number(self.p))
        if self.interval is not None:
            lo, hi = (_number(v) for v in self.interval)
            if lo is None or hi is None:
                object.__setattr__(self, "interval", None)
            elif lo > hi:
                raise ClaimError(f"claim {self.id!r}: interval ({lo}, {hi}) has lo > hi")
            else:
                object.__setattr__(self, "interval", (lo, hi))
        if self.n is not None:
            if int(self.n) < 0:
                raise ClaimError(f"claim {self.id!r}: n must be ≥ 0, got {self.n}")
            object.__setattr__(self, "n", int(self.n))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["interval"] = list(self.interval) if self.interval else None
        out["extra"] = dict(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        data = dict(data)
        if data.get("interval") is not None:
            data["interval"] = tuple(data["interval"])
        return cls(**data)


def not_testable(id: str, chapter: str, statement: str, why: str, **kw) -> Claim:
    """A claim this run has no value for, and why (``why`` is the reason)."""
    return Claim(id=id, chapter=chapter, statement=statement, status=NOT_TESTABLE, reason=why,
                 comparison=kw.pop("comparison", "—"), **kw)


def directional(*, value: float | None, null: float, p: float | None, n: int | None, min_n: int,
                direction: int = 1, alpha: float = 0.05) -> tuple[str, str]:
    """The status and reason of a directional claim: the source found ``value``
    on the ``direction`` side of ``null`` (+1 above, −1 below).

    * no value, or n = 0: not testable here;
    * n < ``min_n``: inconclusive, whatever the value;
    * on the source's side with p < ``alpha``: reproduced;
    * on the other side with p < ``alpha``: not reproduced;
    * p ≥ ``alpha`` (or no test): inconclusive if on the source's side, not
      reproduced if on the other side (a value against the source is never
      evidence for it).
    """
    if direction not in (1, -1):
        raise ClaimError(f"direction must be +1 or -1, got {direction!r}")
    value = _number(value)
    if value is None or not n:
        return NOT_TESTABLE, "this run has no value for it"
    if n < min_n:
        return INCONCLUSIVE, f"n = {n} is below the minimum of {min_n}"
    side = (value - null) * direction
    where = "the source's direction" if side > 0 else "the opposite direction"
    if side == 0:
        return NOT_REPRODUCED, f"the value equals the null {null:g}"
    p = _number(p)
    if p is None:
        return INCONCLUSIVE if side > 0 else NOT_REPRODUCED, f"{where}, no significance test"
    sig = f"p = {p:.3g} {'<' if p < alpha else '≥'} {alpha:g}"
    if p < alpha:
        return (REPRODUCED if side > 0 else NOT_REPRODUCED), f"{where}, {sig}, n = {n}"
    return (INCONCLUSIVE if side > 0 else NOT_REPRODUCED), f"{where}, not significant ({sig}), n = {n}"


def within(*, value: float | None, target: float, tolerance: float, n: int | None, min_n: int,
           relative: bool = False) -> tuple[str, str]:
    """The status and reason of a claim that this run's value matches a target:
    reproduced when |value − target| ≤ tolerance (× |target| when ``relative``)."""
    value = _number(value)
    if value is None or not n:
        return NOT_TESTABLE, "this run has no value for it"
    if n < min_n:
        return INCONCLUSIVE, f"n = {n} is below the minimum of {min_n}"
    bound = tolerance * abs(target) if relative else tolerance
    gap = abs(value - target)
    ok = gap <= bound
    return (REPRODUCED if ok else NOT_REPRODUCED,
            f"|{value:.3g} − {target:.3g}| = {gap:.3g} {'≤' if ok else '>'} {bound:.3g}, n = {n}")


def to_json(claims: Iterable[Claim]) -> str:
    """The claims as a JSON list (what a chapter glues as ``claims``)."""
    claims = list(claims)
    ids = [c.id for c in claims]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ClaimError(f"claim ids must be unique in a chapter, repeated: {dup}")
    return json.dumps([c.to_dict() for c in claims], ensure_ascii=False)


def from_json(text: str) -> list[Claim]:
    return [Claim.from_dict(d) for d in json.loads(text)]
