"""The one voice of claims: every chapter's claim sentence comes from here.

A :class:`~analysis.core.claims.Claim` carries numbers and codes; this module
words them the same way on every page:

* :data:`STATUS_WORDS`: how each status reads;
* :func:`marks`: the by-design and mechanical marks, with their reasons;
* :func:`verdict`: the status, its marks and the reason, in one sentence
  (``**Reproduced**: the source's direction, p = 0.003 < 0.05, 12 texts.``);
* :func:`evidence`: the unit, the null and the negative control in words;
* :func:`render`: a whole claim for the page: the statement, this run's value
  beside the source's, the verdict and the evidence.

A chapter's ``text.py`` keeps only its statements, captions and the sentences
around a claim; it words a claim's status with :func:`verdict`.
"""

from __future__ import annotations

from analysis.core.claims import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
)

STATUS_WORDS = {REPRODUCED: "Reproduced", NOT_REPRODUCED: "Not reproduced", INCONCLUSIVE: "Inconclusive",
                NOT_TESTABLE: "Not testable here", HOLDS: "Holds", DOES_NOT_HOLD: "Does not hold"}
#: how each kind of null reads
NULL_WORDS = {"permutation": "a permutation null", "analytic": "an exact null",
              "target": "a target (the source's value, or the book's bound)", "none": "no null"}


def number(x: float | None) -> str:
    """A claim's number for prose: three significant digits, "—" when missing."""
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.1e}"


def marks(claim: Claim) -> str:
    """The marks beside a status: by design (with its rule), mechanical (with the control)."""
    out = []
    if claim.by_design:
        out.append(f"by design: {claim.by_design_reason}")
    if claim.mechanical:
        out.append(f"mechanical: the negative control shows it too ({number(claim.control_value)})")
    return f" ({'; '.join(out)})" if out else ""


def verdict(claim: Claim) -> str:
    """``**Status** (marks): reason.`` — the status and why, in one sentence."""
    return f"**{STATUS_WORDS[claim.status]}**{marks(claim)}: {claim.reason}."


def evidence(claim: Claim) -> str:
    """What the value rests on: its units, its null and its negative control."""
    parts = []
    if claim.n_units is not None:
        rows = f" ({claim.n:,} rows)" if claim.n is not None and claim.n != claim.n_units else ""
        parts.append(f"{claim.n_units:,} {claim.unit}{rows}")
    if claim.null_kind != "none":
        null = NULL_WORDS[claim.null_kind]
        parts.append(null + (f" at {number(claim.null_value)}" if claim.null_value is not None else ""))
    if claim.p_adjusted is not None and claim.family:
        parts.append(f"Holm-adjusted in the family {claim.family!r}")
    if claim.control_value is not None:
        parts.append(f"negative control {number(claim.control_value)}")
    elif claim.control_reason:
        parts.append(f"no negative control ({claim.control_reason})")
    return "; ".join(parts)


def render(claim: Claim, value_text: str | None = None) -> str:
    """A whole claim for the page (Markdown): the verdict, the statement, this run's
    value (``value_text``, or the number and its interval) beside the source's, and
    the evidence behind it."""
    if value_text is None:
        value_text = number(claim.value)
        if claim.interval:
            value_text += f" [{number(claim.interval[0])}, {number(claim.interval[1])}]"
    source = f"; the source: {claim.source_value}" if claim.source_value else " (the book's own addition)"
    ev = evidence(claim)
    statement = claim.statement if claim.statement.endswith((".", "?", "!")) else claim.statement + "."
    return (f"{verdict(claim)} {statement} This run: {value_text}{source}."
            + (f" Evidence: {ev}." if ev else ""))
