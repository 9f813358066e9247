"""What each section of the entropy chapter glues: one function per section, each
returning ``{"text": {name: value}, "md": {name: markdown}}`` for
``report.glue_page``. Every glued name is a literal here, so a ``{glue}`` name on
the page greps to where it is made; numbers are formatted here or in the chapter's
text modules, never in the notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.entropy.claims_robust import mm_value, rarefied_value
from analysis.entropy.copy_designs import copy_designs_sentence
from analysis.entropy.cost import profile_cost_sentence
from analysis.entropy.method_di import di_calls
from analysis.entropy.method_sets import Inference, SetResult, Stream, kept
from analysis.entropy.mia import BLIND
from analysis.entropy.params import RAREFY_DRAWS, RAREFY_MIN_PAIRS, load_paper_table
from analysis.entropy.robust import estimator_summary
from analysis.entropy.text import (
    agreement_sentence,
    correct_count,
    end_entropy_sentence,
    extrapolation_sentence,
    fit_value,
    instance_sentence,
    intercept_slope_sentence,
    intercept_trend_sentence,
    length_r_sentence,
    linearity_sentences,
    low_score_sentence,
    merge_intervals,
    method_constants,
    model_lines,
    normalized_sentence,
    paper_correct_count,
    paper_lines_sentence,
    pooling_sentence,
    sample_size_sentence,
    set_size_sentence,
    setup_sentences,
    strategy_sentence,
    stream_sentence,
    tau_sentence,
    token_space_sentence,
    verbatim_sentence,
    window_sentence,
)
from analysis.entropy.text_di import (
    baseline_sentence,
    bos_sentence,
    bos_values,
    claim_value,
    di_calls_sentence,
    mia_sentence,
    shift_sentence,
    tau_convention_sentence,
    tpr_phrase,
    undecided_sentence,
)
from analysis.entropy.text_robust import (
    binning_sentence,
    estimator_sentence,
    interval_cost_sentence,
    interval_cost_values,
    maini_count,
    maini_difference_sentence,
    maini_sentence,
    nsb_sentence,
    strategy_line_sentence,
)

Glue = dict[str, dict[str, object]]

#: the columns of the dataset-inference table on the page
DI_COLUMNS = ["model", "set", "role", "pairs", "level sets", "intercept", "intercept lo", "intercept hi",
              "slope", "r", "tau", "prediction", "agreement", "truth", "assumption"]


def constants(table1: pd.DataFrame) -> Glue:
    """The source's constants (:func:`method_constants`) and ``paper_di_correct``."""
    return {"text": {**method_constants(), "paper_di_correct": paper_correct_count(table1)}}


def setup(params: Mapping) -> Glue:
    """``setup_text``."""
    return {"md": {"setup_text": setup_sentences(params, load_paper_table("table4"))}}


def lab_sample(params: Mapping, stream: Stream, pool: pd.DataFrame, window: int) -> Glue:
    """``lab_injected``; ``lab_status``, ``stream_text``, ``window_text``."""
    status = (f"Everything below is computed from the lab run `{params['lab_model']}` "
              f"({', '.join(params['di_models'])} for dataset inference).")
    injected = sum(stream.source[d] == "injected" for d in pool["doc_id"])
    return {"text": {"lab_injected": f"{injected:,}"},
            "md": {"lab_status": status, "stream_text": stream_sentence(stream),
                   "window_text": window_sentence(stream, window)}}


def scores(lab, params: Mapping, lab_scored: Mapping[str, pd.DataFrame], lab_main: pd.DataFrame,
           filters: pd.DataFrame, stream: Stream, claims: Mapping[str, Claim]) -> Glue:
    """``lab_pairs``, ``lab_kept``, ``drop_written``, ``drop_described``, ``lab_tokens``;
    ``verbatim_text``, ``low_text``."""
    drops = [f"{d:,} ({fmt_pct(s)})" for d, s in zip(filters["dropped"], filters["share dropped"])]
    return {"text": {"lab_pairs": f"{len(lab_main):,}", "lab_kept": f"{len(kept(lab_main)):,}",
                     "drop_written": drops[0], "drop_described": drops[1],
                     "lab_tokens": f"{lab.profile.run(params['lab_model']).tokens:,}"},
            "md": {"verbatim_text": verbatim_sentence(lab_scored),
                   "low_text": low_score_sentence(lab_main, stream, claims["low_scores_rarer"])}}


def filter_display(filters: pd.DataFrame) -> pd.DataFrame:
    """The trivial-pair filters' table with its shares as percentages."""
    return filters.assign(**{"share dropped": filters["share dropped"].map(fmt_pct)})


def copy_designs(lab, params: Mapping) -> Glue:
    """``copy_designs_text``, for the weights of this lab's run."""
    weights = lab.fingerprints().set_index("run").loc[params["lab_model"], "weights_sha256"]
    return {"md": {"copy_designs_text": copy_designs_sentence(params["lab_profile"], params["lab_model"],
                                                              weights=weights)}}


def instance(inst_fits: Mapping, suffix_tokens: int, lab) -> Glue:
    """``inst_r_ent``, ``inst_r_zlib``, ``lab_S``, ``lab_vocab``, ``lab_max_h``; ``inst_text``."""
    return {"text": {"inst_r_ent": f"{inst_fits['entropy'].r:.2f}",
                     "inst_r_zlib": f"{inst_fits['zlib'].r:.2f}", "lab_S": suffix_tokens,
                     "lab_vocab": f"{len(lab.tokenizer):,}",
                     "lab_max_h": f"{np.log2(suffix_tokens):.1f}"},
            "md": {"inst_text": instance_sentence(inst_fits)}}


def level_sets(main: SetResult, other_label: str, other: SetResult, shuffled: pd.DataFrame,
               claims: Mapping[str, Claim]) -> Glue:
    """``lab_r``, ``lab_set_r``, ``level_null_n``, ``level_null_r``; ``lines_text``,
    ``paper_lines``, ``space_text``, ``size_text``, ``norm_text``."""
    return {"text": {"lab_r": fit_value(main.fit, "r"), "lab_set_r": fit_value(main.fit, "r"),
                     "level_null_n": len(shuffled), "level_null_r": f"{shuffled['r_entropy'].median():.3f}"},
            "md": {"lines_text": linearity_sentences(main, other_label, other, claims["em_linearity"],
                                                     claims["entropy_beats_zlib"]),
                   "paper_lines": paper_lines_sentence(), "space_text": token_space_sentence(main.levels),
                   "size_text": set_size_sentence(claims["score_over_size"], claims["verbatim_rarer"]),
                   "norm_text": normalized_sentence(claims["normalized_falls"])}}


def lengths(length_table: pd.DataFrame, claims: Mapping[str, Claim]) -> Glue:
    """``len_r_text``, ``len_intercept_text``, ``len_end_text``."""
    return {"md": {"len_r_text": length_r_sentence(claims["r_every_length"]),
                   "len_intercept_text": intercept_trend_sentence(length_table,
                                                                  claims["intercept_grows_with_length"]),
                   "len_end_text": end_entropy_sentence(claims["same_end_entropy"])}}


def strategies(strategy_table: pd.DataFrame, claims: Mapping[str, Claim]) -> Glue:
    """``strategy_text``."""
    return {"md": {"strategy_text": strategy_sentence(strategy_table, claims["r_every_strategy"])}}


def strategy_line(claim: Claim) -> Glue:
    """``strategy_line_text``."""
    return {"md": {"strategy_line_text": strategy_line_sentence(claim)}}


def sample_size(sens: pd.DataFrame, claims: Mapping[str, Claim]) -> Glue:
    """``sens_text``."""
    return {"md": {"sens_text": sample_size_sentence(sens, claims["small_samples_spread"],
                                                     claims["small_samples_lower"])}}


def sample_cost(cost: pd.DataFrame, n_real: int, lab_main: pd.DataFrame) -> Glue:
    """``interval_width_default``, ``interval_width_paper``, ``interval_width_ratio``;
    ``cost_text`` and ``profile_cost_text``."""
    return {"text": interval_cost_values(cost, n_real),
            "md": {"cost_text": interval_cost_sentence(cost, n_real, len(kept(lab_main))),
                   "profile_cost_text": profile_cost_sentence()}}


def dataset_inference(di: pd.DataFrame, lab_di: Sequence[Inference], claims: Mapping[str, Claim]) -> Glue:
    """``lab_di_correct``, ``lab_di_sets``, ``di_correct``, ``di_lab_correct``,
    ``di_real_correct``; ``di_calls_lab``, ``di_calls_real``, ``di_undecided_text``,
    ``extrapolation_text``, ``intercept_slope_text``, ``tau_text``, ``real_lines``."""
    lab_cands = di[(di["role"] == "candidate") & (di["kind"] == "lab")]
    calls = {kind: di_calls(di, kind) for kind in ("lab", "real")}
    return {"text": {"lab_di_correct": int(lab_cands["correct"].sum()), "lab_di_sets": len(lab_cands),
                     "di_correct": correct_count(di), "di_lab_correct": correct_count(di, "lab"),
                     "di_real_correct": correct_count(di, "real")},
            "md": {"di_calls_lab": di_calls_sentence(calls["lab"], "the lab's models"),
                   "di_calls_real": di_calls_sentence(calls["real"], "the real models"),
                   "di_undecided_text": undecided_sentence(list(calls.values())),
                   "extrapolation_text": extrapolation_sentence(lab_di, di),
                   "intercept_slope_text": intercept_slope_sentence(claims["intercept_slope_opposed"]),
                   "tau_text": tau_sentence(di), "real_lines": model_lines(di, "real")}}


def di_display(di: pd.DataFrame) -> pd.DataFrame:
    """The dataset-inference table as the page shows it (intervals merged)."""
    return merge_intervals(di[DI_COLUMNS], digits=2)


def taus(taus: pd.DataFrame, margin) -> Glue:
    """``tau_source_text``."""
    return {"md": {"tau_source_text": tau_convention_sentence(taus, margin)}}


def loss_baseline(params: Mapping, comparison: pd.DataFrame, losses: pd.DataFrame) -> Glue:
    """``n_mia_lab``, ``n_mia_real``; ``baseline_text``."""
    return {"text": {"n_mia_lab": f"{params['n_mia_lab']:,}", "n_mia_real": f"{params['n_mia_real']:,}"},
            "md": {"baseline_text": baseline_sentence(comparison, losses[losses["kind"] == "lab"])}}


def maini(rules: pd.DataFrame, maini: pd.DataFrame) -> Glue:
    """``maini_correct``, ``maini_lab_correct``, ``maini_real_correct``; ``maini_text``,
    ``maini_diff_text``."""
    return {"text": {"maini_correct": maini_count(rules), "maini_lab_correct": maini_count(rules, "lab"),
                     "maini_real_correct": maini_count(rules, "real")},
            "md": {"maini_text": maini_sentence(rules, maini),
                   "maini_diff_text": maini_difference_sentence()}}


def bos(check: Mapping) -> Glue:
    """:func:`bos_values`' names; ``bos_text``."""
    return {"text": bos_values(check), "md": {"bos_text": bos_sentence(check)}}


def estimators(artefact, main: SetResult, table: pd.DataFrame, claims: Mapping[str, Claim]) -> Glue:
    """``lab_set_r_rarefied``, ``lab_set_r_miller_madow``, ``rarefy_min``,
    ``rarefy_draws``; ``estimator_text``, ``nsb_text``."""
    robust = {k: claims[k] for k in ("linearity_rarefied", "linearity_miller_madow")}
    return {"text": {"lab_set_r_rarefied": rarefied_value(artefact), "lab_set_r_miller_madow": mm_value(main),
                     "rarefy_min": RAREFY_MIN_PAIRS, "rarefy_draws": f"{RAREFY_DRAWS:,}"},
            "md": {"estimator_text": estimator_sentence(artefact, estimator_summary(table), robust),
                   "nsb_text": nsb_sentence()}}


def binning(table: pd.DataFrame, claims: Mapping[str, Claim]) -> Glue:
    """``binning_text``."""
    return {"md": {"binning_text": binning_sentence(table, claims["r_every_binning"])}}


def attacks(claims: Mapping[str, Claim], lab_panel: pd.DataFrame) -> Glue:
    """``mia_auc_loss``, ``mia_auc_zlib``, ``mia_auc_mink``, ``mia_auc_minkpp``,
    ``mia_auc_intercept``, ``tpr_text``; ``mia_text``, ``shift_text``."""
    blind = lab_panel[(lab_panel["scope"] == "all") & (lab_panel["attack"] == BLIND)].iloc[0]
    return {"text": {"mia_auc_loss": claim_value(claims["mia_loss"]),
                     "mia_auc_zlib": claim_value(claims["mia_zlib"]),
                     "mia_auc_mink": claim_value(claims["mia_mink"]),
                     "mia_auc_minkpp": claim_value(claims["mia_minkpp"]),
                     "mia_auc_intercept": claim_value(claims["mia_intercept"]),
                     "tpr_text": tpr_phrase(int(blind["non-members"]))},
            "md": {"mia_text": mia_sentence(claims), "shift_text": shift_sentence(claims["mia_real_shift"],
                                                                                  blind["auc"])}}


def closing(lab, params: Mapping, claims: Mapping[str, Claim], di: pd.DataFrame) -> Glue:
    """``lab_max_params``, ``lab_max_tokens``; ``pooling_text``, ``agreement_text``,
    ``source_counts_text``."""
    runs = {params["lab_model"], *params["di_models"]}
    return {"text": {"lab_max_params": f"{max(lab.results[r].n_params for r in runs):,}",
                     "lab_max_tokens": f"{max(lab.profile.run(r).tokens for r in runs):,}"},
            "md": {"pooling_text": pooling_sentence(claims["pooling"]),
                   "agreement_text": agreement_sentence(di),
                   "source_counts_text": counts_sentence(claims.values())}}
