"""What each section of the size chapter glues (``notebooks/size.md``): one function
per section, named after it, returning ``{"text": {name: str}, "md": {name: str}}``
for ``report.glue_page``. Every number the page states is formatted here; the
sentences come from :mod:`analysis.size.text`, and nothing here decides a claim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claims import Claim
from analysis.size.method_relative import sweep_at
from analysis.size.params import (
    PAIRWISE_TAU,
    PAPER_LAW,
    PAPER_LOO_R2,
    PAPER_N_POPULAR,
    PAPER_PREFIX_LENS,
    PAPER_RHO_BASELINE,
    PAPER_RHO_P,
    PAPER_RHO_POPULAR,
)
from analysis.size.steps import is_ablation, run_names
from analysis.size.text import (
    ablation_text,
    agreement_note,
    calibration_text,
    gap_text,
    index_ablation_text,
    invalid_bounds_text,
    kinds_text,
    ladder_gap_text,
    ladder_values,
    null_values,
    pairwise_text,
    probe_text,
    render,
    tokens_text,
    untestable_text,
    valid_count,
)

#: the lab's ablation runs, in the order the page names them, and the glue name of each one's ratio
ABLATION_RATIOS = {"abl-overtrained": "lab_ablation_ratio_overtrained",
                   "abl-overexposed": "lab_ablation_ratio_overexposed",
                   "abl-uneven": "lab_ablation_ratio_uneven"}
#: the text of the source's first figure, drawn first where the ladder has it
PAPER_PANEL_TEXT = "alice_in_wonderland"


def setup(params: Mapping) -> dict:
    """``n_popular_paper``, ``n_lens_paper``, ``alpha`` and ``kind``."""
    return {"text": {"n_popular_paper": str(PAPER_N_POPULAR), "n_lens_paper": str(len(PAPER_PREFIX_LENS)),
                     "alpha": f"{params['alpha']:g}", "kind": str(params["block_kind"])}}


def results(answers: pd.DataFrame, popular: Mapping, baseline: Mapping, template_ids: Sequence[int],
            gap_claims: Sequence[Claim], probe_claims: Sequence[Claim]) -> dict:
    """``size_queries``, ``n_errors``, ``n_texts``, ``templates``; Markdown ``gap_text``, ``probe_text``."""
    n_errors = int(answers["error"].notna().sum())
    return {"text": {"size_queries": f"{len(answers):,}", "n_errors": f"{n_errors:,}",
                     "n_texts": f"{len(popular)} popular and {len(baseline)} baseline",
                     "templates": ", ".join(map(str, template_ids))},
            "md": {"gap_text": gap_text(gap_claims), "probe_text": probe_text(probe_claims)}}


def agreement(acc: pd.DataFrame) -> dict:
    """Markdown ``agree_note``."""
    return {"md": {"agree_note": agreement_note(acc)}}


def _law_values(method) -> dict[str, str]:
    theta, bounds = method.theta, method.bounds
    n_valid = int(bounds["valid"].sum())
    return {"lab_r2": f"{method.law.r2:.2f}", "lab_B": f"{method.law.B:.2f}",
            "lab_explained": f"{100 * method.pca.explained:.0f}%",
            "lab_band": f"{100 * method.loo.within_band:.0f}%",
            "lab_valid": f"{n_valid} of {len(bounds)}", "lab_valid_count": str(n_valid),
            "lab_n": str(len(theta)), "lab_min": f"{theta.min() / 1e6:.2f}M",
            "lab_max": f"{theta.max() / 1e6:.2f}M"}


def lab_ladder(method, facts: Mapping, tokens: Sequence[int], nulls, claims: Sequence[Claim],
               alpha: float) -> dict:
    """``lab_r2``, ``lab_B``, ``lab_explained``, ``lab_band``, ``lab_valid``, ``lab_valid_count``,
    ``lab_n``, ``lab_min``, ``lab_max``, :func:`~analysis.size.text.ladder_values`' names, ``lab_tokens``,
    ``lab_excerpt_words``, ``lab_popular_copies``, ``paper_loo_r2``, ``paper_rho_p``,
    ``paper_rho_popular``, ``paper_rho_baseline``, :func:`~analysis.size.text.null_values`' names;
    Markdown ``lab_verdict``, ``lab_pairwise``, ``lab_invalid_bounds``, ``lab_kinds``, ``lab_gap_ends``."""
    text = {**_law_values(method), **ladder_values(method), "lab_tokens": tokens_text(tokens),
            "lab_excerpt_words": str(facts["excerpt_words"]),
            "lab_popular_copies": str(facts["popular_copies"]),
            "paper_loo_r2": f"{PAPER_LOO_R2}", "paper_rho_p": f"{PAPER_RHO_P:.1e}",
            "paper_rho_popular": f"{PAPER_RHO_POPULAR}", "paper_rho_baseline": f"{PAPER_RHO_BASELINE}",
            **null_values(nulls, claims)}
    md = {"lab_verdict": render(claims[0]),
          "lab_pairwise": pairwise_text(sweep_at(method.sweep, PAIRWISE_TAU), alpha),
          "lab_invalid_bounds": invalid_bounds_text(method.invalid, PAIRWISE_TAU),
          "lab_kinds": kinds_text(method.kinds, alpha),
          "lab_gap_ends": ladder_gap_text(method.gap, method.theta)}
    return {"text": text, "md": md}


def index_ablation(variants: pd.DataFrame) -> dict:
    """Markdown ``index_ablation``."""
    return {"md": {"index_ablation": index_ablation_text(variants)}}


def per_text_panels(acc: pd.DataFrame) -> list[str]:
    """The popular texts the per-text figure draws: the source's (where the ladder has
    it), then the one the ladder predicts best and the one it predicts worst on average."""
    means = acc[acc["group"] == "popular"].groupby("text_id")["acc"].mean().sort_values()
    return list(dict.fromkeys([t for t in [PAPER_PANEL_TEXT] if t in means.index]
                              + [means.index[-1], means.index[0]]))


def _outside_shapes(lab, ablations: Sequence[str], heldout: Sequence[str]) -> dict[str, str]:
    run = lab.profile.run
    return {"lab_ablation_width": str(run(ablations[0]).model.d_model) if ablations else "—",
            "lab_heldout_shape": (f"{run(heldout[0]).model.n_layer} layers, widths "
                                  + "/".join(str(run(n).model.d_model) for n in heldout)
                                  if heldout else "none in this lab")}


def outside(placed: pd.DataFrame | None, lab, ablations: Sequence[str], heldout: Sequence[str],
            loo_ratio: pd.Series, lab_profile) -> dict:
    """``lab_ablation_ratio_overtrained``, ``lab_ablation_ratio_overexposed``,
    ``lab_ablation_ratio_uneven``, ``lab_ablation_valid``, ``lab_heldout_valid``,
    ``lab_ablation_width``, ``lab_heldout_shape``; Markdown ``lab_ablations``. ``placed``
    (:func:`~analysis.size.method.bound_targets`, None where the lab trains no model
    outside calibration) and ``lab``, the lab that built them."""
    if placed is None:
        return {"text": {**dict.fromkeys(ABLATION_RATIOS.values(), "—"), "lab_ablation_valid": "—",
                         "lab_heldout_valid": "—", "lab_ablation_width": "—",
                         "lab_heldout_shape": "none in this lab"},
                "md": {"lab_ablations": f"**The lab profile {lab_profile!r} trains no ablation or held-out "
                                        "runs**, so this section has no result on it."}}
    ratio = dict(zip(run_names(placed["model"]), placed["ratio"]))
    is_abl = is_ablation(placed, ablations)
    text = {name: (f"{ratio[n]:.2f}" if n in ratio else "—") for n, name in ABLATION_RATIOS.items()}
    text |= {"lab_ablation_valid": valid_count(placed[is_abl]),
             "lab_heldout_valid": valid_count(placed[~is_abl]),
             **_outside_shapes(lab, ablations, heldout)}
    return {"text": text, "md": {"lab_ablations": ablation_text(placed, loo_ratio)}}


def calibration(claims: Sequence[Claim], kind: str, alpha: float) -> dict:
    """Markdown ``cal_verdict``."""
    return {"md": {"cal_verdict": calibration_text(claims, kind, alpha)}}


def lab_calibration(claims: Sequence[Claim], kind: str, alpha: float) -> dict:
    """Markdown ``lab_cal_verdict``."""
    return {"md": {"lab_cal_verdict": calibration_text(claims, kind, alpha)}}


def paper_tables(t1: pd.DataFrame, t2: pd.DataFrame, source_only: Sequence[Claim]) -> dict:
    """``paper_law``, ``t2_valid``, ``t2_tight``, ``n_t1``, ``n_t2``; Markdown ``size_untestable``."""
    return {"text": {"paper_law": f"θ̂(z) = {PAPER_LAW[0]}·e^({PAPER_LAW[1]}z)",
                     "t2_valid": f"{int((t2['best_lb'] <= t2['size']).sum())} of {len(t2)}",
                     "t2_tight": f"{t2['tightness_pct'].median():.0f}%", "n_t1": str(len(t1)),
                     "n_t2": str(len(t2))},
            "md": {"size_untestable": untestable_text(source_only)}}


def source(t1: pd.DataFrame) -> dict:
    """``paper_min`` and ``paper_max``: the range of the paper's dense open models (Table I)."""
    return {"text": {"paper_min": f"{t1['size'].min():g}B", "paper_max": f"{t1['size'].max():g}B"}}
