"""The lab as the chapters' cost preview sees it: run names and the corpus, from
a profile alone (nothing is trained)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from analysis.lab import ladder, profiles


def lab_ladder_names(lab_profile: str, runs: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """``(run, load_model name)`` of the lab profile's ladder runs (or of ``runs``),
    from the profile alone: nothing is built or trained."""
    prof = profiles.get_profile(lab_profile)
    names = list(runs) if runs else [r.name for r in prof.runs if r.family.startswith("ladder")]
    return [(r, profiles.model_name(lab_profile, r)) for r in names]


@cache
def lab_corpus(lab_profile: str):
    """The lab profile's corpus (built or read from the cache; no model is trained)."""
    return ladder.profile_corpus(lab_profile)
