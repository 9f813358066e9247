"""Entropy–Memorization linearity and dataset inference (the entropy chapter).

The study re-run here measures *discoverable memorization*: a sequence from a
model's training data is cut into a prompt ``p`` (the first ``|p|`` tokens) and
an answer ``s`` (the next ``|s|``); the model continues ``p`` with a response
``r`` of ``|s|`` tokens, and the memorization score is the token-level
Levenshtein distance ``d(r, s)`` (0 = verbatim). Its claim is that per-instance
compressibility of ``s`` says little about ``d``, but pooling all answers with
the same score ``e`` into a *level set* and taking the empirical entropy of
their tokens gives a quantity linear in ``e`` (Pearson r > 0.9), and that the
intercept of that line separates training data from unseen data.

The modules, by role:

* :mod:`.params`: profiles, ``PARAMS``, the source's constants and tables, :class:`EntropyError`;
* :mod:`.method`: the source's equations (sampling, scores, entropies, level sets, the bootstrap);
* :mod:`.method_sets`: a sample's level sets analysed (:class:`SetResult`), tables, the DI decision;
* :mod:`.method_di`: the DI rule's calls, its undecided sets, the mean-loss baseline, τ conventions;
* :mod:`.mia`: membership-inference attacks and their panels (beyond the source);
* :mod:`.candidates`: the candidate sets of dataset inference;
* :mod:`.run`: querying models (:func:`discoverable`) and reading a lab run's stream;
* :mod:`.nulls`: the computed nulls and the intervals over whole units (texts, level sets, sets);
* :mod:`.claims` and :mod:`.claims_mia`: the chapter's verdicts as claims; :mod:`.text` and
  :mod:`.text_di`: its English, and :func:`render` (the book's one claim voice);
* :mod:`.robust`: rarefied and Miller–Madow lines, coarse binning, the cost of a smaller sample;
  :mod:`.maini`: Maini et al. (2024)'s dataset inference, the source's baseline;
  :mod:`.claims_robust` and :mod:`.text_robust`: their claims and English;
* :mod:`.copy_designs`: what another spread of copies would do to the lab's line (the record of
  ``scripts/entropy_copy_designs.py``).

Below, the names the chapter's notebook, the book's other pages and modules, and the
scripts read from the package, each once (``tests/test_surface.py`` keeps them exactly
those); tests import from the submodules.
"""

from analysis.entropy import page
from analysis.entropy.candidates import lab_candidate_sets, real_candidate_sets
from analysis.entropy.claims import (
    di_claims,
    instance_claims,
    length_claims,
    level_set_claims,
    sample_claims,
    sample_size_claims,
    strategy_claims,
)
from analysis.entropy.claims_mia import baseline_claim, mia_claims
from analysis.entropy.claims_robust import binning_claim, estimator_claims, maini_claim, strategy_line_claim
from analysis.entropy.cost import profile_cost_table
from analysis.entropy.maini import maini_rule, three_rules
from analysis.entropy.method import (
    bootstrap_fits,
    fit_levels,
    instance_metrics,
    lcs,
    level_set_table,
    levenshtein,
    sample_pairs,
)
from analysis.entropy.method_di import loss_rule, rule_comparison, source_tau_margin, tau_conventions
from analysis.entropy.method_sets import (
    analyse_set,
    di_table,
    filter_summary,
    fit_table,
    instance_fits,
    kept,
    sample_size_sensitivity,
    source_table,
    strategy_table,
)
from analysis.entropy.mia import ATTACKS, BLIND, inference_panel, panel_table, set_panel
from analysis.entropy.nulls import level_set_null
from analysis.entropy.params import PAPER_MIN_DI_SAMPLES, PARAMS, PROFILES, load_paper_table
from analysis.entropy.robust import binning_table, estimator_table, estimator_test, interval_cost
from analysis.entropy.run import (
    bos_check,
    by_strategy,
    by_suffix_length,
    dataset_inference,
    discoverable,
    injected_candidates,
    lab_decodings,
    plan,
    score_sequences,
    training_stream,
)
from analysis.entropy.text import merge_intervals, render, setup_table
from analysis.entropy.text_di import panel_display
from analysis.entropy.text_robust import cost_sizes, estimator_display, maini_display
