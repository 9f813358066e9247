"""The one voice of claims: every chapter's claim sentence comes from here.

A :class:`~analysis.core.claims.Claim` carries numbers and codes; this module
words them the same way on every page:

* :data:`STATUS_WORDS`: how each status reads;
* :func:`marks`: the by-design and mechanical marks, with their reasons;
* :func:`verdict`: the status, its marks and the reason, in one sentence
  (``**Reproduced**: the source's direction, p = 0.003 < 0.05, 12 texts.``);
* :func:`evidence`: the unit, the null and the negative control in words;
* :func:`render`: a whole claim for the page: the statement, this run's value
  beside the source's, the verdict and the evidence;
* :func:`counts_sentence`: how many source claims have each status, and the
  extensions besides (every chapter's summary, the introduction, the scoreboard).

A chapter's ``text.py`` keeps only its statements, captions and the sentences
around a claim; it words a claim's status with :func:`verdict`.
"""

from __future__ import annotations

from collections.abc import Iterable

from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION_STATUSES,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SOURCE,
    SOURCE_STATUSES,
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


def counts_sentence(claims: Iterable[Claim], whose: str = "this chapter's") -> str:
    """How many of ``claims`` a source makes have each status (zeros included, the
    mechanical ones named), then the book's own claims per status: e.g. "Of this
    chapter's 5 claims a source makes, 1 reproduced, 0 not reproduced, 1 inconclusive,
    3 not testable here; besides, 9 claims of the book's own: 4 holds, 0 does not hold,
    3 inconclusive, 2 not testable here." Reads only ``kind``, ``status`` and
    ``mechanical``, so a scoreboard row serves as well as a claim."""
    claims = list(claims)
    source = [c for c in claims if c.kind == SOURCE]
    ext = [c for c in claims if c.kind != SOURCE]

    def tally(group, statuses):
        return ", ".join(f"{sum(c.status == s for c in group)} {s}" for s in statuses)

    claims_word = "claim" if len(source) == 1 else "claims"
    text = f"Of {whose} {len(source)} {claims_word} a source makes, {tally(source, SOURCE_STATUSES)}"
    mech = sum(bool(c.mechanical) for c in source)
    if mech:
        text += f" ({mech} of the inconclusive ones mechanical: the negative control shows the same effect)"
    if ext:
        own = "claim" if len(ext) == 1 else "claims"
        text += f"; besides, {len(ext)} {own} of the book's own: {tally(ext, EXTENSION_STATUSES)}"
    return text + "."
