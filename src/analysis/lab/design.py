"""The lab's design in words, computed from a profile: what the lab page and the size
chapter state about duplicate levels, copies, weight decay, shared twins, the families'
parameter ranges and the room the injected copies fill (:func:`design_facts`).
Strings ready to glue; nothing is built or trained."""

from __future__ import annotations

from analysis.lab.config import WINDOWS, RunConfig
from analysis.lab.profiles import LabProfile, get_profile, unlabelled
from analysis.lab.train import param_count


def window_share(run: RunConfig, copies: int) -> float:
    """Share of the room inside ``run``'s insertion window that ``copies`` injected
    copies fill: its rows times ``run.copies_per_row`` (the copies a row can hold)."""
    lo, hi = WINDOWS[run.window or "all"]
    return copies / ((hi - lo) * run.steps * run.batch_size * run.copies_per_row)


def weight_decay_text(profile: str | LabProfile) -> str:
    """The ladder's AdamW weight decay in words: one value, or the common one and the
    widths that differ (``"0.1, and 0.4 at width 128"``), with the reason recorded in
    the profile's comment when some width differs."""
    prof = get_profile(profile)
    # the profile's map is keyed by width, so both families agree on each width's decay
    decay = {r.model.d_model: r.weight_decay for r in prof.runs if r.family.startswith("ladder")}
    values = list(decay.values())
    common = max(set(values), key=lambda v: (values.count(v), -v))
    others: dict[float, list[int]] = {}
    for d, v in sorted(decay.items()):
        if v != common:
            others.setdefault(v, []).append(d)
    parts = [f"{v:g} at width{'s' if len(ds) > 1 else ''} {'/'.join(map(str, ds))}"
             for v, ds in sorted(others.items())]
    if not parts:
        return f"{common:g}"
    return (f"{common:g}, and " + "; ".join(parts) + ": at the common decay, trial runs showed held-out "
            "loss rising from the next smaller width to these (the comment on ladder.PROFILES gives the "
            "numbers)")


def shared_twins_text(profile: str | LabProfile) -> str:
    """Which standard runs are ladder runs under another name (``"std-s2x is wide-64"``),
    or ``"none"``: two runs with one key train once (:func:`unlabelled`)."""
    prof = get_profile(profile)
    ladder_runs = {unlabelled(r): r.name for r in prof.runs if r.family.startswith("ladder")}
    pairs = [f"{r.name} is {ladder_runs[unlabelled(r)]}" for r in prof.runs
             if r.family == "standard" and unlabelled(r) in ladder_runs]
    return ", ".join(pairs) if pairs else "none"


def family_ranges(profile: str | LabProfile) -> tuple[str, bool]:
    """Each ladder family's parameter range in words, smallest family first
    (``"deep 0.06M to 0.32M; wide 0.33M to 1.05M"``), and whether the ranges are
    disjoint (each family starts above the one below it ends)."""
    prof = get_profile(profile)
    sizes: dict[str, list[int]] = {}
    for r in prof.runs:
        if r.family.startswith("ladder"):
            sizes.setdefault(r.family, []).append(param_count(r.model, prof.vocab_size))
    spans = sorted((min(v), max(v), fam.removeprefix("ladder-")) for fam, v in sizes.items())
    text = "; ".join(f"{fam} {lo / 1e6:.2f}M to {hi / 1e6:.2f}M" for lo, hi, fam in spans)
    return text, all(b[0] > a[1] for a, b in zip(spans, spans[1:]))


def design_facts(profile: str | LabProfile) -> dict[str, str]:
    """The lab's design as the lab page states it, computed from the profile:
    duplicate levels, sequences per level, fact copies, the injection-range runs'
    budget against the largest perturbed budget, and the share of a quarter's rows
    their copies fill. Strings ready to glue."""
    prof = get_profile(profile)
    cfg = prof.corpus
    sizes = cfg.level_sizes()
    n_tasks = len(cfg.injection_tasks)
    total = sum(level * count * n_tasks for level, count in sizes)
    counts = {}
    for level, count in sizes:
        counts.setdefault(count, []).append(level)
    per_level = "; ".join(f"{count} per task at {'/'.join(map(str, levels))} copies"
                          for count, levels in counts.items())
    ranges = [r for r in prof.runs if r.family == "range"]
    perturbed = [r.tokens for r in prof.runs if r.family == "perturbed"]
    facts = {
        "levels": "/".join(map(str, cfg.duplicate_levels)),
        "per_level": per_level,
        "n_tasks": str(n_tasks),
        "n_copies": f"{total:,}",
        "fact_max": f"{cfg.fact_max_copies:,}",
        "popular_copies": (f"{cfg.popular_copies} to {cfg.popular_max_copies}" if cfg.popular_max_copies
                           else str(cfg.popular_copies)),
        "excerpt_words": f"{cfg.popular_excerpt_words:,}",
        "weight_decay": weight_decay_text(prof),
        "shared_twins": shared_twins_text(prof),
    }
    ranges_text, disjoint = family_ranges(prof)
    facts.update(family_ranges=ranges_text, families_disjoint="do not overlap" if disjoint else "overlap")
    if ranges:
        quarter = next((r for r in ranges if r.window == "q1"), ranges[0])
        in_window = sum(level * count * n_tasks for level, count in sizes
                        if quarter.max_copies is None or level <= quarter.max_copies)
        facts.update(
            range_tokens=f"{ranges[0].tokens / 1e6:g}M",
            range_ratio=f"{ranges[0].tokens / max(perturbed):g}" if perturbed else "—",
            perturbed_max=f"{max(perturbed) / 1e6:g}M" if perturbed else "—",
            quarter_share=f"{window_share(quarter, in_window):.0%}",
            copies_per_row=str(quarter.copies_per_row),
        )
    return facts
