"""What each section of the lab page glues and how its tables are laid out: one
function per section, each returning ``{"text": {name: value}, "md": {name:
markdown}}`` for ``report.glue_page``, and the table layouts its visible cells
show. Every glued name is a literal here, so a ``{glue}`` name on the page greps to
where it is made; numbers are formatted here, never in the notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.book.lab_checks import budget_sentence, rebuild_sentence, regime_reason
from analysis.book.phenomena import control_contrast, control_sentence, neighbour_gaps
from analysis.book.report import data_table
from analysis.core import data
from analysis.core.fmt import fmt_pct
from analysis.core.tables import NUMERIC_CELLS
from analysis.lab import budget
from analysis.lab.design import design_facts
from analysis.lab.probe import memorization_drop
from analysis.lab.profiles import ablation_runs, model_name
from analysis.lab.train import memory as lab_memory
from analysis.lab.train import train_memory

Glue = dict[str, dict[str, object]]



def design(plan) -> Glue:
    """The design's facts (:func:`design_facts`), ``n_popular``, ``n_stories``,
    ``phrase_levels``, ``phrases_per_level``, ``lr_range``."""
    lrs = sorted({r.lr for r in plan.runs if r.family.startswith("ladder")})
    lr_range = f"{lrs[-1]:.2g} to {lrs[0]:.2g}" if len(lrs) > 1 else f"{lrs[0]:.2g}"
    return {"text": {**design_facts(plan), "n_popular": len(data.popular_texts()),
                     "n_stories": len(data.baseline_texts()),
                     "phrase_levels": "/".join(map(str, plan.corpus.phrase_levels)),
                     "phrases_per_level": plan.corpus.phrases_per_level, "lr_range": lr_range}}


def runs(lab, runs: pd.DataFrame, lab_profile: str) -> Glue:
    """``n_runs``, ``n_standard``, ``param_min``, ``param_max``, ``param_ratio``,
    ``lab_minutes``, ``n_trained_now``, ``vocab``, ``v2_gap_lo``, ``v2_gap_hi``,
    ``v2_pair_ratios``; ``lab_budget``."""
    ladder = runs[runs["family"].str.startswith("ladder")]
    v2 = pd.read_csv(data_table("lab_v2_family_gap.csv"), comment="#").set_index("measure")["value"]
    return {"text": {"n_runs": len(runs), "n_standard": int((~runs["inject"]).sum()),
                     "param_min": f"{ladder['params'].min() / 1e6:.2f}M",
                     "param_max": f"{ladder['params'].max() / 1e6:.2f}M",
                     "param_ratio": f"{ladder['params'].max() / ladder['params'].min():.0f}",
                     "lab_minutes": f"{lab.train_seconds() / 60:.1f}",
                     "n_trained_now": int(runs["trained now"].sum()),
                     "vocab": f"{lab.tokenizer.vocab_size:,}",
                     "v2_gap_lo": f"{v2.filter(like='lowest').iloc[0]:.2f}",
                     "v2_gap_hi": f"{v2.filter(like='highest').iloc[0]:.2f}",
                     "v2_pair_ratios": " and ".join(f"{x:.2f}" for x in v2.filter(like="size ratio"))},
            "md": {"lab_budget": budget_sentence(lab_profile)}}


def fingerprints(lab, fingerprints: pd.DataFrame) -> Glue:
    """``ablation_width``; ``lab_fingerprints`` (JSON), ``rebuild_sentence``."""
    ablations = ablation_runs(lab.profile)
    width = int(lab.profile.run(ablations[0]).model.d_model) if ablations else "—"
    return {"text": {"ablation_width": width},
            "md": {"lab_fingerprints": fingerprints.to_json(orient="records"),
                   "rebuild_sentence": rebuild_sentence()}}


def fingerprint_display(fingerprints: pd.DataFrame) -> pd.DataFrame:
    """The fingerprints with each weights hash cut to its first 16 characters."""
    return fingerprints.assign(weights_sha256=fingerprints["weights_sha256"].str[:16] + "…")


def corpus_counts(manifest: pd.DataFrame, injections: pd.DataFrame) -> Glue:
    """``n_docs``, ``n_injections``, ``n_inserted_copies``."""
    return {"text": {"n_docs": f"{len(manifest):,}", "n_injections": f"{len(injections):,}",
                     "n_inserted_copies": f"{int(injections['copies'].sum()):,}"}}


def injection_counts(injections: pd.DataFrame) -> pd.DataFrame:
    """Injected sequences per task (rows) and copies per sequence (columns)."""
    return (injections.groupby(["task", "copies"]).size().unstack("copies")
            .rename_axis(columns="copies per sequence"))


def phenomena(values: Mapping[str, str], ends: Sequence[str], entropy_run: str) -> Glue:
    """The checks' numbers (:func:`analysis.book.phenomena.glue_values`), ``ladder_small``,
    ``ladder_large``, ``entropy_run``."""
    return {"text": {**values, "ladder_small": ends[0], "ladder_large": ends[-1], "entropy_run": entropy_run}}


def extraction_shares(extraction: pd.DataFrame):
    """Each run's extracted share by copies, runs in the order of ``extraction``, styled."""
    shares = (extraction.pivot(index="run", columns="copies", values="share")
              .loc[list(dict.fromkeys(extraction["run"]))].rename_axis(columns="copies"))
    return shares.style.format(fmt_pct).set_properties(**NUMERIC_CELLS)


def members_display(members: pd.DataFrame):
    """The membership sets' losses, numbers right-aligned and labels left-aligned, styled."""
    return (members.style.hide(axis="index").format({"words": "{:,}", "loss": "{:.3f}"})
            .set_properties(**NUMERIC_CELLS)
            .set_properties(subset=["set", "truth"], **{"text-align": "left"}))


def controls_extracted(checks: Sequence) -> object:
    """How many never-inserted controls the predicting check extracted."""
    return next(c for c in checks if c.chapter == "predicting").numbers["extract_controls"]


def learned(values: Mapping[str, object], score_levels: pd.DataFrame) -> Glue:
    """The checks of what the models learned (:func:`analysis.book.lab_checks.learned_values`)
    and ``entropy_regime_reason``."""
    return {"text": {**values, "entropy_regime_reason": regime_reason(score_levels)}}


def score_levels_display(score_levels: pd.DataFrame):
    """Pairs per score and copies level, counts with thousands separators, styled."""
    return score_levels.style.hide(axis="index").format({c: "{:,}" for c in score_levels.columns[1:]})


def knowledge_display(knowledge_acc: pd.DataFrame, runs: Sequence[str]):
    """Knowledge accuracy per run (rows, in ``runs``' order), probe and copies bin, styled."""
    table = knowledge_acc.pivot_table(index="run", columns=["probe", "bin"], values="accuracy", observed=True)
    return table.loc[list(runs)].style.format(fmt_pct).set_properties(**{"text-align": "right",
                                                                         "padding": "0 0.6em"})


def score_counts_display(score_counts: Mapping) -> pd.DataFrame:
    """Pairs per memorization score, one row."""
    return pd.DataFrame([score_counts["counts"]], index=["pairs"]).rename_axis(columns="score")


def curves(lab, runs: pd.DataFrame) -> pd.DataFrame:
    """Every run's training curve, with its ``run`` and ``family``."""
    return pd.concat([lab.results[r].curve.assign(run=r, family=f)
                      for r, f in zip(runs["run"], runs["family"])], ignore_index=True)


def heldout(losses: pd.DataFrame) -> Glue:
    """``max_gap``, ``max_gap_run``, ``min_neighbour_gap``, ``min_neighbour_pair``."""
    closest = neighbour_gaps(losses).iloc[0]
    return {"text": {"max_gap": f"{losses['gap'].max():.2f}",
                     "max_gap_run": losses.loc[losses["gap"].idxmax(), "run"],
                     "min_neighbour_gap": f"{closest['gap']:.3f}",
                     "min_neighbour_pair": f"{closest['smaller']} and {closest['larger']}"}}


def memorization(lab_profile: str, probe_runs: Sequence[str], nll: pd.DataFrame) -> Glue:
    """``mem_pert``, ``mem_top_copies``, ``mem_drop_pert``, ``mem_drop_std``; ``control_text``."""
    pert = model_name(lab_profile, probe_runs[0])
    std = pert.replace("pert-", "std-")
    return {"text": {"mem_pert": pert, "mem_top_copies": int(nll["copies"].max()),
                     "mem_drop_pert": f"{memorization_drop(nll, pert):.2f}",
                     "mem_drop_std": f"{memorization_drop(nll, std):.2f}"},
            "md": {"control_text": control_sentence(control_contrast(nll, pert, std))}}


def exposure(checks: pd.DataFrame) -> Glue:
    """``n_checked``, ``all_agree``."""
    agree = "agree exactly" if (checks["agree"] == checks["sequences"]).all() else "DO NOT agree"
    return {"text": {"n_checked": str(len(checks)), "all_agree": agree}}


def gpu_display(gpu_runs: pd.DataFrame):
    """The GPU profile's runs with readable column names and formats, styled."""
    table = gpu_runs.rename(columns={"tokens_trained": "tokens trained here", "flops": "FLOPs",
                                     "peak_gib": "peak GiB", "micro_batches_40gb": "micro-batches at 40 GB"})
    return (table.style.hide(axis="index")
            .format({"params": "{:,}", "tokens": "{:,}", "tokens trained here": "{:,}", "FLOPs": "{:.1e}",
                     "hours": "{:.2f}", "peak GiB": "{:.1f}"})
            .set_properties(**NUMERIC_CELLS))


def gpu(plan, gpu_runs: pd.DataFrame, summary: Mapping) -> Glue:
    """The GPU profile's budget: ``gpu_n_runs``, ``gpu_min``, ``gpu_max``, ``gpu_span``,
    ``gpu_layers``, ``gpu_tokens``, ``gpu_flops``, ``gpu_hours``, ``gpu_tflops``,
    ``gpu_epochs``, ``gpu_tpw``, ``gpu_levels``, ``gpu_context``, ``gpu_vocab``,
    ``gpu_target``, ``gpu_peak``, ``gpu_peak_run``, ``gpu_peak_logits``, ``gpu_micro40``,
    ``gpu_n_micro40``, ``gpu_usable``, ``gpu_small``, ``gpu_fit``."""
    layers = sorted({r.model.n_layer for r in plan.runs if r.family.startswith("ladder")})
    largest = plan.run(gpu_runs.loc[gpu_runs["peak_gib"].idxmax(), "run"])
    peak = train_memory(largest.model, plan.vocab_size, largest.batch_size, "bf16")
    vocab = lab_memory.vocabulary_bytes(plan.vocab_size, largest.batch_size, largest.model.context)
    fits = summary["max_peak_gib"] * 2**30 <= 80e9 * lab_memory.USABLE_FRACTION
    return {"text": {"gpu_n_runs": summary["runs"], "gpu_min": f"{summary['min_params'] / 1e6:.1f}M",
                     "gpu_max": f"{summary['max_params'] / 1e6:.0f}M",
                     "gpu_span": f"{summary['param_span']:.0f}", "gpu_layers": " and ".join(map(str, layers)),
                     "gpu_tokens": f"{summary['tokens'] / 1e9:.1f}B",
                     "gpu_flops": f"{summary['flops']:.2g}", "gpu_hours": f"{summary['hours']:.1f}",
                     "gpu_tflops": f"{summary['tflops']:g}", "gpu_epochs": f"{summary['ladder_epochs']:.0f}",
                     "gpu_tpw": f"{budget.tokens_per_word(plan.vocab_size):.2f}",
                     "gpu_levels": "/".join(map(str, plan.corpus.duplicate_levels)),
                     "gpu_context": plan.runs[0].model.context, "gpu_vocab": f"{plan.vocab_size:,}",
                     "gpu_target": budget.TARGET_GPU, "gpu_peak": f"{summary['max_peak_gib']:.0f}",
                     "gpu_peak_run": largest.name, "gpu_peak_logits": f"{vocab / peak['total']:.0%}",
                     "gpu_micro40": summary["max_micro_batches_40gb"],
                     "gpu_n_micro40": int((gpu_runs["micro_batches_40gb"] > 1).sum()),
                     "gpu_usable": f"{lab_memory.USABLE_FRACTION:.0%}",
                     "gpu_small": f"{budget.SMALL_GPU_BYTES / 1e9:.0f} GB",
                     "gpu_fit": "Every run fits" if fits else "Not every run fits"}}
