"""What another spread of copies would do to the entropy chapter's lab line.

``scripts/entropy_copy_designs.py`` reweights the lab sample's popular-excerpt pairs
as other copy designs would weigh them and records the level-set line of each in
:data:`COPY_DESIGNS`; :func:`copy_designs_sentence` puts that record on the page.
"""

from __future__ import annotations

import json
from pathlib import Path

from analysis.core.paths import REPO_ROOT
from analysis.entropy.params import PAPER_MIN_R

#: what ``scripts/entropy_copy_designs.py`` writes: the level-set line under other
#: spreads of the popular excerpts' copies, by reweighting the lab model's answers
COPY_DESIGNS = REPO_ROOT / "bench" / "results" / "entropy_copy_designs.json"


def copy_designs_sentence(profile: str, run: str, path=COPY_DESIGNS, weights: str | None = None) -> str:
    """What another spread of copies would do to the level-set line, from the record
    ``scripts/entropy_copy_designs.py`` writes; says so visibly when the record is
    missing, was computed for another lab profile or run, or (``weights``: the run's
    ``weights_sha256``, :mod:`analysis.lab.fingerprint`) for other weights of that run,
    a lab since rebuilt on another design."""
    path = Path(path)
    script = "`scripts/entropy_copy_designs.py`"
    if not path.exists():
        return (f"**Not computed yet**: {script} asks whether another spread of copies would give the "
                f"source's regime; its record ({path.name}) is not in this checkout.")
    record = json.loads(path.read_text())
    if (record.get("profile"), record.get("run")) != (profile, run):
        return (f"**Not computed for `{run}` of the {profile} lab**: {script}'s record is for "
                f"`{record.get('run')}` of the {record.get('profile')} lab.")
    if weights is not None and record.get("weights_sha256") != weights:
        return (f"**Not computed for this lab's `{run}`**: {script}'s record (commit "
                f"`{record.get('commit')}`) is of other weights of the run, a lab since rebuilt; rerun the "
                "script to compute it.")
    designs = [d for d in record["designs"] if d["r"] is not None]
    best = max(designs, key=lambda d: d["r"])
    lab = designs[0]
    middle = best["pairs_by_score"][1:8]
    return (
        f"Would another spread of copies give the source's regime? {script} keeps every answer of this "
        f"sample and reweights the popular excerpts' pairs as {len(designs) - 1} other designs would weigh "
        f"them (geometric spreads capped at fewer copies, Zipf spreads), with the model not retrained. "
        f"Pearson r of the level-set line then ranges from {min(d['r'] for d in designs):.2f} to "
        f"{best['r']:.2f} (the lab's own spread, resampled: {lab['r']:.2f}). The best, {best['design']}, "
        f"still has {best['pairs_by_score'][0]:,} verbatim answers against {min(middle)} to {max(middle)} "
        f"at each score from 1 to 7: with this model's answers no spread of copies alone reaches "
        f"r = {PAPER_MIN_R:g} (record of commit `{record['commit']}`, {record['date']})."
    )
