"""A claim is a value: what a source found, what this run found, and the verdict.

Every verdict the book states is a :class:`Claim`, computed from the numbers by a
chapter's ``claims.py`` and rendered to a sentence by :mod:`analysis.core.claim_text`
(the one renderer). A default execution writes the chapter's claims to
``results/<chapter>.json`` under ``"claims"`` and the scoreboard page lists them.

What a claim carries besides its number:

* ``kind``: ``"source"`` (a source states it; ``source_value`` holds the source's
  number) or ``"extension"`` (the book's own addition);
* ``unit`` and ``n_units``: what is independent (texts, facts, problems, sequences,
  models, level sets, candidate sets, phrases, ...) and how many of them the value
  rests on. Intervals resample and permutations permute whole units; ``n`` stays
  the row count;
* ``null_kind`` and ``null_value``: how the null was had (:data:`NULL_KINDS`:
  ``"permutation"`` computed by permuting labels through the same pipeline, its
  median in ``null_value``; ``"analytic"`` where a closed form is exact;
  ``"target"`` where the value is held against the source's number; ``"none"``
  where there is no value to test);
* ``control_value`` (the same statistic where the studied signal is absent by
  construction: the standard twin, non-member sets, shuffled labels) or
  ``control_reason`` (why no control applies);
* ``family`` and ``p_adjusted``: a Holm-corrected family of tests;
* ``by_design`` with ``by_design_reason``, and ``mechanical``.

The statuses follow from the evidence by one set of rules, :func:`decide`:

* ``reproduced`` (an extension: ``holds``): the source's direction, significant
  against the null (the adjusted p in a family), with at least ``min_n`` units,
  and not shown by the negative control;
* ``not reproduced`` (``does not hold``): evidence against the source only: the
  value is significant in the opposite direction, or its interval excludes the
  source's effect;
* ``inconclusive``: everything else, a non-significant value on either side
  included, and a claim whose control shows the same effect (``mechanical``: the
  method, not the phenomenon);
* ``not testable here``: no value; every arm at the measurement's floor or ceiling
  (0 of n against 0 of n); or a claim about models this run does not have.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from analysis.core import jsonio

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
#: a source claim's statuses, then an extension's (the same rules, other words)
SOURCE_STATUSES = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE)
EXTENSION_STATUSES = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE)
STATUSES = SOURCE_STATUSES + (HOLDS, DOES_NOT_HOLD)
SOURCE, EXTENSION = "source", "extension"
KINDS = (SOURCE, EXTENSION)
#: how a claim's null was had
NULL_KINDS = ("permutation", "analytic", "target", "none")
#: what a claim's independent units can be
UNITS = ("texts", "facts", "problems", "sequences", "models", "level sets", "candidate sets", "phrases",
         "families", "replicates", "targets", "cells", "lengths", "strategies", "subsamples", "patterns",
         "completions", "pairs of sets", "pairs of models", "copy levels", "thresholds", "tasks", "seeds",
         "runs")
#: the status words of one kind as the other's (a verdict computed once, worded per kind)
_AS_KIND = {SOURCE: {HOLDS: REPRODUCED, DOES_NOT_HOLD: NOT_REPRODUCED},
            EXTENSION: {REPRODUCED: HOLDS, NOT_REPRODUCED: DOES_NOT_HOLD}}


class ClaimError(ValueError):
    """A claim built with a status, interval or n that cannot be."""


def _number(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def as_kind(status: str, kind: str) -> str:
    """``status`` in the words of ``kind`` (``reproduced`` ↔ ``holds``, ``not
    reproduced`` ↔ ``does not hold``; the other two are shared)."""
    if kind not in KINDS:
        raise ClaimError(f"kind must be one of {KINDS}, got {kind!r}")
    return _AS_KIND[kind].get(status, status)


@dataclass(frozen=True)
class Claim:
    """One verdict of a chapter, with its evidence.

    ``id`` is unique in its chapter (``"e3_direction"``); ``statement`` is the
    finding in a line; ``source_value`` the source's number as the source prints
    it; ``value`` this run's number, ``interval`` its (lo, hi) or None, ``n`` the
    rows it rests on and ``n_units`` the independent units among them, ``p`` its
    p-value where a test was run (``p_adjusted`` after Holm in ``family``);
    ``comparison`` says how the status was decided; ``section`` is the page label
    the scoreboard links to. See the module for the rest.
    """

    id: str
    chapter: str
    statement: str
    status: str
    reason: str
    comparison: str
    unit: str
    kind: str = SOURCE
    value: float | None = None
    interval: tuple[float, float] | None = None
    n: int | None = None
    n_units: int | None = None
    p: float | None = None
    p_adjusted: float | None = None
    family: str | None = None
    min_n: int | None = None
    null_kind: str = "none"
    null_value: float | None = None
    control_value: float | None = None
    control_reason: str | None = None
    mechanical: bool = False
    source_value: str | None = None
    section: str | None = None
    by_design: bool = False
    by_design_reason: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        where = f"claim {self.id!r}"
        if self.kind not in KINDS:
            raise ClaimError(f"{where}: kind must be one of {KINDS}, got {self.kind!r}")
        allowed = SOURCE_STATUSES if self.kind == SOURCE else EXTENSION_STATUSES
        if self.status not in allowed:
            raise ClaimError(f"{where}: a {self.kind} claim's status must be one of {allowed}, "
                             f"got {self.status!r}")
        if self.kind == SOURCE and not self.source_value:
            raise ClaimError(f"{where}: a source claim needs the source's value (source_value)")
        if not self.reason:
            raise ClaimError(f"{where}: a status needs its reason")
        if self.unit not in UNITS:
            raise ClaimError(f"{where}: unit must be one of {UNITS}, got {self.unit!r}")
        if self.null_kind not in NULL_KINDS:
            raise ClaimError(f"{where}: null_kind must be one of {NULL_KINDS}, got {self.null_kind!r}")
        if self.by_design and not self.by_design_reason:
            raise ClaimError(f"{where}: by_design needs its rule's reason (by_design_reason)")
        for name in ("value", "p", "p_adjusted", "null_value", "control_value"):
            object.__setattr__(self, name, _number(getattr(self, name)))
        if self.control_value is None and not self.control_reason:
            raise ClaimError(f"{where}: a claim needs its negative control's value (control_value) "
                             "or the reason none applies (control_reason)")
        if self.mechanical and self.control_value is None:
            raise ClaimError(f"{where}: a mechanical claim needs the control's value")
        if self.interval is not None:
            lo, hi = (_number(v) for v in self.interval)
            if lo is None or hi is None:
                object.__setattr__(self, "interval", None)
            elif lo > hi:
                raise ClaimError(f"{where}: interval ({lo}, {hi}) has lo > hi")
            else:
                object.__setattr__(self, "interval", (lo, hi))
        for name in ("n", "n_units"):
            x = getattr(self, name)
            if x is not None:
                if int(x) < 0:
                    raise ClaimError(f"{where}: {name} must be ≥ 0, got {x}")
                object.__setattr__(self, name, int(x))

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


class Verdict(NamedTuple):
    """What :func:`decide` returns: the status (in a source claim's words; a
    chapter words it for an extension with :func:`as_kind`, which :func:`claim`
    does), its reason, and whether the control showed the same effect."""

    status: str
    reason: str
    mechanical: bool = False


def not_testable(id: str, chapter: str, statement: str, why: str, **kw) -> Claim:
    """A claim this run has no value for, and why (``why`` is the reason)."""
    kw.setdefault("control_reason", "no value to control")
    return Claim(id=id, chapter=chapter, statement=statement, status=NOT_TESTABLE, reason=why,
                 comparison=kw.pop("comparison", "—"), **kw)


def _sig(p: float, alpha: float, adjusted: bool) -> str:
    name = "Holm-adjusted p" if adjusted else "p"
    return f"{name} = {p:.3g} {'<' if p < alpha else '≥'} {alpha:g}"


def decide(*, value: float | None, null: float, n_units: int | None, min_n: int, p: float | None = None,
           interval: tuple[float, float] | None = None, direction: int = 1, alpha: float = 0.05,
           adjusted: bool = False, floor: str | None = None, control_value: float | None = None,
           control_p: float | None = None, control_interval: tuple[float, float] | None = None,
           source_effect: float | None = None, unit: str = "units") -> Verdict:
    """The one set of rules that turns evidence into a status (see the module).

    ``value`` lies on the ``direction`` side of ``null`` (+1 above, −1 below) in the
    source's finding. Significance is ``p < alpha`` when ``p`` is given, else an
    ``interval`` that excludes ``null``. ``floor`` names the floor or ceiling every
    arm sits at (the claim is then not testable); ``control_*`` is the same
    statistic on the negative control, which must not show the effect;
    ``source_effect`` is the source's own value on the scale of ``value``, which a
    non-significant interval can exclude (the only way a non-significant value is
    evidence against the source).
    """
    if direction not in (1, -1):
        raise ClaimError(f"direction must be +1 or -1, got {direction!r}")
    value, p = _number(value), _number(p)
    if value is None or not n_units:
        return Verdict(NOT_TESTABLE, "this run has no value for it")
    if floor:
        return Verdict(NOT_TESTABLE, f"every arm is at the measurement's {floor}, so the comparison "
                                     "cannot show either direction")
    count = f"{n_units:,} {unit}"
    if n_units < min_n:
        return Verdict(INCONCLUSIVE, f"{count}, below the minimum of {min_n}")
    side = (value - null) * direction
    where = ("the source's direction" if side > 0 else
             "the opposite direction" if side < 0 else "at the null")
    if p is not None:
        significant, test = p < alpha, _sig(p, alpha, adjusted)
    elif interval is not None:
        lo, hi = interval
        # the interval's ends on the source's scale: near is the end closest to the null's far side
        near, far = sorted(((lo - null) * direction, (hi - null) * direction))
        significant = near > 0 or far < 0
        if significant:  # the side is that of the whole interval
            side = near if near > 0 else far
        test = f"95% interval [{lo:.3g}, {hi:.3g}] {'excludes' if significant else 'covers'} {null:g}"
    else:
        significant, test = False, None
    if significant and side > 0:
        if _control_shows(control_value, control_p, control_interval, null, direction, alpha):
            return Verdict(INCONCLUSIVE, f"{where}, {test}, {count}; but the negative control shows the "
                                         f"same effect ({control_value:.3g}), so this measures the method, "
                                         "not the phenomenon", mechanical=True)
        return Verdict(REPRODUCED, f"{where}, {test}, {count}")
    if significant and side < 0:
        return Verdict(NOT_REPRODUCED, f"significant in the opposite direction ({test}), {count}")
    if source_effect is not None and interval is not None:
        lo, hi = interval
        if not (lo <= source_effect <= hi):
            return Verdict(NOT_REPRODUCED, f"{where}, not significant, but the 95% interval "
                                           f"[{lo:.3g}, {hi:.3g}] excludes the source's {source_effect:.3g}, "
                                           f"{count}")
    if test is None:
        return Verdict(INCONCLUSIVE, f"{where}, with no significance test, {count}")
    return Verdict(INCONCLUSIVE, f"{where}, not significant ({test}), {count}")


def _control_shows(value, p, interval, null, direction, alpha) -> bool:
    """Whether the negative control shows the effect: significant on the source's side."""
    value = _number(value)
    if value is None or (value - null) * direction <= 0:
        return False
    if _number(p) is not None:
        return p < alpha
    if interval is not None:
        return (interval[0] - null) * direction > 0
    return False


def directional(*, value: float | None, null: float, p: float | None, n: int | None, min_n: int,
                direction: int = 1, alpha: float = 0.05, unit: str = "units", **kw) -> tuple[str, str]:
    """:func:`decide` for a value tested by ``p`` on ``n`` units: (status, reason)."""
    v = decide(value=value, null=null, p=p, n_units=n, min_n=min_n, direction=direction, alpha=alpha,
               unit=unit, **kw)
    return v.status, v.reason


def within(*, value: float | None, target: float, tolerance: float, n: int | None, min_n: int,
           relative: bool = False, interval: tuple[float, float] | None = None, exact: bool = False,
           unit: str = "units") -> tuple[str, str]:
    """The status and reason of a claim that this run's value matches a target:
    reproduced when |value − target| ≤ tolerance (× |target| when ``relative``).
    A miss is "not reproduced" only with evidence: the value is ``exact`` (no
    sampling error, such as a count over the whole design) or its ``interval``
    lies wholly outside the tolerance band; otherwise it is inconclusive."""
    value = _number(value)
    if value is None or not n:
        return NOT_TESTABLE, "this run has no value for it"
    if n < min_n:
        return INCONCLUSIVE, f"{n:,} {unit}, below the minimum of {min_n}"
    bound = tolerance * abs(target) if relative else tolerance
    gap = abs(value - target)
    sign = "≤" if gap <= bound else ">"
    text = f"|{value:.3g} − {target:.3g}| = {gap:.3g} {sign} {bound:.3g}, {n:,} {unit}"
    if gap <= bound:
        return REPRODUCED, text
    if exact:
        return NOT_REPRODUCED, text + " (an exact value, no sampling error)"
    if interval is not None and (interval[1] < target - bound or interval[0] > target + bound):
        lo, hi = interval
        return NOT_REPRODUCED, text + f"; the 95% interval [{lo:.3g}, {hi:.3g}] lies outside"
    return INCONCLUSIVE, text + ("; its 95% interval reaches the band" if interval is not None
                                 else "; no interval to tell a miss from sampling error")


def to_json(claims: Iterable[Claim]) -> str:
    """The claims as a JSON list (what a chapter glues as ``claims``)."""
    claims = list(claims)
    ids = [c.id for c in claims]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ClaimError(f"claim ids must be unique in a chapter, repeated: {dup}")
    # strict JSON: a NaN in a claim's ``extra`` (a model that answered nothing) is null
    return jsonio.dumps([c.to_dict() for c in claims], ensure_ascii=False)


def from_json(text: str) -> list[Claim]:
    return [Claim.from_dict(d) for d in json.loads(text)]
