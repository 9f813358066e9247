"""The candidate sets of dataset inference: documents, their truth and why we believe it.

The lab's sets (:func:`lab_candidate_sets`) are cut from its corpus, where
membership is logged; the real models' sets (:func:`real_candidate_sets`) are the
book's popular texts (likely members) and its 2024–26 stories (likely
non-members). One set of each model is the reference that fixes τ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.entropy.method import available_windows
from analysis.entropy.params import (
    LAB_HELDOUT_SETS,
    LAB_POPULAR_SETS,
    LAB_REFERENCE,
    LAB_REFERENCES,
    EntropyError,
)
from analysis.lab.corpus import SHINGLE_WORDS


@dataclass(frozen=True)
class CandidateSet:
    """A set of documents for dataset inference: its label, its documents (id →
    text), whether it is training data (``truth``), why we believe so, whether to
    share its windows evenly among documents, and whether it is the reference that
    sets τ."""

    label: str
    docs: Mapping[str, str]
    truth: int
    assumption: str
    balance: bool = False
    reference: bool = False


def _bands(items: list, n: int) -> list[list]:
    """``items`` (sorted) cut into ``n`` contiguous runs of near-equal length, larger runs first."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        stop = start + size + (k < extra)
        out.append(items[start:stop])
        start = stop
    return out


def lab_candidate_sets(corpus, popular_sets: int = LAB_POPULAR_SETS, heldout_sets: int = LAB_HELDOUT_SETS,
                       reference: str = LAB_REFERENCE) -> list[CandidateSet]:
    """The lab's sets: two halves of the background, the popular-text excerpts, and
    the held-out popular windows and 2024–26 stories, which no training document
    overlaps. The reference is background A, or (``reference="popular"``) the
    excerpts with the most copies.

    With ``popular_sets`` above 1 the excerpts, ordered by copies (then id), are cut
    into that many contiguous bands of near-equal numbers of excerpts, one set each,
    fewest copies first; with ``heldout_sets`` above 1 the held-out popular windows,
    ordered by id, are dealt round-robin into that many sets. The number of sets
    therefore comes from these two counts and the corpus; each set is labelled by
    what it holds.
    """
    if reference not in LAB_REFERENCES:
        raise EntropyError(f"reference must be one of {LAB_REFERENCES}, got {reference!r}")
    background = [d for d in corpus.documents if d.kind == "background"]
    popular = sorted((d for d in corpus.documents if d.kind == "popular"), key=lambda d: (d.copies, d.doc_id))
    heldout = sorted((d for d in corpus.heldout if d.source == "popular"), key=lambda d: d.doc_id)
    for name, value, items in (("popular_sets", popular_sets, popular),
                               ("heldout_sets", heldout_sets, heldout)):
        whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not whole or not 1 <= value <= max(1, len(items)):
            raise EntropyError(f"{name} must be an integer from 1 to the {len(items)} documents it splits, "
                               f"got {value!r}")
    member = "in the training stream (logged)"
    never = f"never in the training stream (checked by {SHINGLE_WORDS}-word shingles)"

    def docs(items):
        return {d.doc_id: d.text for d in items}

    def copies_text(items):
        copies = sorted({d.copies for d in items})
        return f"{copies[0]} copies" if len(copies) == 1 else f"{copies[0]} to {copies[-1]} copies"

    by_ref = reference == "popular"
    bands = _bands(popular, popular_sets)
    popular_out = []
    for k, band in enumerate(bands):
        if not band:
            continue
        is_ref = by_ref and k == len(bands) - 1
        popular_out.append(CandidateSet(f"training: popular excerpts ({copies_text(band)})"
                                        + (" (reference)" if is_ref else ""), docs(band), 1, member,
                                        reference=is_ref))
    heldout_out = [
        CandidateSet("held out: popular-text windows" + (f" {chr(65 + k)}" if heldout_sets > 1 else ""),
                     docs(heldout[k::heldout_sets]), 0, never, balance=True)
        for k in range(heldout_sets)
    ]
    background_a = "training: background A" + ("" if by_ref else " (reference)")
    out = [
        CandidateSet(background_a, docs(background[0::2]), 1, member, reference=not by_ref),
        CandidateSet("training: background B", docs(background[1::2]), 1, member),
        *popular_out,
        *heldout_out,
        CandidateSet("held out: 2024–26 stories", docs(d for d in corpus.heldout if d.source == "baseline"),
                     0, never, balance=True),
    ]
    # the reference first, as decide_membership and the tables expect it
    return sorted(out, key=lambda c: not c.reference)


def candidate_windows(sets: Sequence[CandidateSet], tokenize, window: int) -> pd.DataFrame:
    """How many distinct windows of ``window`` (= |p| + |s|) tokens each set's
    documents hold, to check before any model runs that every set can supply the
    pairs dataset inference draws from it (:func:`sample_pairs` needs at least as
    many windows as pairs). ``tokenize`` maps a list of texts to lists of token ids
    (a model's ``tokenize``). One row per set: ``set``, ``truth``, ``reference``,
    ``documents``, ``tokens`` and ``windows``."""
    rows = []
    for cand in sets:
        lengths = [len(t) for t in tokenize(list(cand.docs.values()))] if cand.docs else []
        rows.append({"set": cand.label, "truth": cand.truth, "reference": cand.reference,
                     "documents": len(lengths), "tokens": int(sum(lengths)),
                     "windows": available_windows(lengths, window)})
    return pd.DataFrame(rows, columns=["set", "truth", "reference", "documents", "tokens", "windows"])


def real_candidate_sets(popular: Mapping[str, str], baseline: Mapping[str, str]) -> list[CandidateSet]:
    """The real models' sets: the popular texts in two halves by sorted id (the
    first is the reference), likely members, and the 2024–26 stories, likely
    non-members; windows shared evenly among the texts of a set."""
    ids = sorted(popular)
    likely = "likely member: public-domain classics in every web corpus"
    return [
        CandidateSet("popular texts A (reference)", {k: popular[k] for k in ids[0::2]}, 1, likely, True,
                     True),
        CandidateSet("popular texts B", {k: popular[k] for k in ids[1::2]}, 1, likely, True),
        CandidateSet("2024–26 stories", dict(baseline), 0,
                     "likely non-member: published after the models' training data were collected", True),
    ]
