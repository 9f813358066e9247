"""Size inference from popular-text memorization: the Size chapter (``notebooks/size.md``).

The chapter re-runs "Inferring the Size of Large Language Models From Popular
Text Memorization" (the *paper*). A model :math:`M` is shown the :math:`l` words
before a position of a text :math:`T` and asked for the next word; its
subsampled next-word accuracy :math:`\\hat\\alpha(M,T,l)` on 37 popular texts,
minus its accuracy :math:`\\hat\\beta(M,l)` on 4 obscure baseline texts,
aggregated over prefix lengths :math:`l\\in\\{4,8,10,12,16,24\\}`, forms the
:math:`2KL` *accuracy profile* of the model (Section 3.2). Two inference methods
are built on it:

* **absolute** (Section 3.3): PCA of the reference models' profiles gives a
  latent index :math:`z_M`; OLS of :math:`\\ln\\theta = B z + c` gives
  :math:`\\hat\\theta(z) = A e^{Bz}` (Eq. 3-4); the lower bound is
  :math:`0.5\\,\\hat\\theta` (Section 4.2.1);
* **relative** (Section 3.4): block scores :math:`s_j` per text and a one-sided
  blocked sign-permutation test of :math:`H_0: E[s_j]\\le 0`; the relative bound
  is the size of the largest reference that the target beats significantly
  (Section 4.3). The best bound is the larger of the two.

The package, by role:

* :mod:`.params`: profiles, ``PARAMS``, the paper's constants and tables;
* :mod:`.method_probe`, :mod:`.method_absolute`, :mod:`.method_relative`,
  :mod:`.method_calibration`, :mod:`.method_groups`, :mod:`.method`: the
  method, pure functions (the sign-permutation test itself is
  :mod:`analysis.stats.permutation`);
* :mod:`.nulls`: the computed nulls (sizes permuted among the ladder's models,
  group labels among texts, families among models) and intervals over models;
* :mod:`.run`: the probe of real and lab models, and :func:`plan`;
* :mod:`.claims` (the real models, the source-only tables), :mod:`.claims_ladder`
  (the lab ladder) and :mod:`.claims_calibration` (the sign test under a true null):
  the chapter's verdicts as claims; :mod:`.text`: their wording;
* :mod:`.steps`: the method's steps as the page calls them; :mod:`.page`: what each
  section of the page glues.
"""

from analysis.size.claims import agreement_claim, gap_claims, probe_claims, probe_modes, source_only_claims
from analysis.size.claims_calibration import calibration_claims
from analysis.size.claims_ladder import (
    bounds_claim,
    lab_agreement_claims,
    ladder_claims,
    law_claim,
    law_coefficients_claim,
    loo_claim,
    loo_r2_claim,
    pairwise_claims,
)
from analysis.size.claims_outside import outside_claims
from analysis.size.method import (
    LadderMethod,
    bound_targets,
    family_lean,
    invalid_bounds,
    ladder_method,
    place_on_law,
)
from analysis.size.method_absolute import (
    LOOResult,
    PCAIndex,
    ScalingLaw,
    absolute_lower_bound,
    fit_law,
    index_ablation,
    log_r2,
    loo_cv,
    loo_r2_interval,
    pca_index,
    project,
)
from analysis.size.method_calibration import (
    calibration,
    equal_size_false_positives,
    null_calibration,
    null_pvalues,
)
from analysis.size.method_groups import (
    AssumptionCheck,
    FamilyAgreement,
    LadderAgreement,
    agreement,
    agreement_check,
    assumption_check,
    complete_models,
    family_agreement,
    group_gap,
    ladder_agreement,
    pairwise_spearman,
    text_ranks,
)
from analysis.size.method_probe import (
    accuracy_profile,
    accuracy_table,
    add_lift,
    baseline_accuracy,
    is_correct,
    normalize_word,
    position_table,
    prediction_word,
    sample_positions,
    whitespace_words,
)
from analysis.size.method_relative import (
    RelativeBound,
    best_bound,
    block_scores,
    decision_metrics,
    kind_sweep,
    pairwise_tests,
    relative_lower_bound,
    sweep_at,
    tau_sweep,
    truly_larger,
)
from analysis.size.nulls import (
    LADDER_STATS,
    LadderNulls,
    family_label_null,
    ladder_nulls,
    ladder_stats,
    pair_bootstrap,
    rate_bootstrap,
    tau_tag,
    text_label_null,
)
from analysis.size.params import (
    ALTERNATIVES,
    BAND,
    DATA_DIR,
    GROUPS,
    KIND_ORDER,
    KINDS,
    LAB_PROBE_TOKENS,
    LOWER_BOUND_FACTOR,
    PAIRWISE_TAU,
    PAPER_ALPHA,
    PAPER_LAW,
    PAPER_LAW_R2,
    PAPER_LOO_R2,
    PAPER_N_PER_TEXT,
    PAPER_N_POPULAR,
    PAPER_PREFIX_LENS,
    PAPER_RATES_AT_TAU,
    PAPER_RHO_BASELINE,
    PAPER_RHO_GROUPS,
    PAPER_RHO_P,
    PAPER_RHO_POPULAR,
    PAPER_TABLES,
    PAPER_TAUS,
    PARAMS,
    PROFILES,
    SOURCE_SETUP,
    TRACKS_R2,
    SizeError,
    load_paper_table,
    render_prompt,
    templates,
)
from analysis.size.run import chapter_templates, chapter_texts, lab_samples, ladder_design, plan, probe_models
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
    untestable_text,
    valid_count,
)
from analysis.stats.permutation import SignTestResult, sign_permutation_test

__all__ = [
    "outside_claims",
    "ALTERNATIVES",
    "LADDER_STATS",
    "LadderNulls",
    "family_label_null",
    "ladder_nulls",
    "ladder_stats",
    "pair_bootstrap",
    "null_values",
    "text_label_null",
    "BAND",
    "DATA_DIR",
    "GROUPS",
    "KINDS",
    "KIND_ORDER",
    "LAB_PROBE_TOKENS",
    "LOWER_BOUND_FACTOR",
    "PAIRWISE_TAU",
    "PAPER_ALPHA",
    "PAPER_LAW",
    "PAPER_LAW_R2",
    "PAPER_LOO_R2",
    "PAPER_N_PER_TEXT",
    "PAPER_N_POPULAR",
    "PAPER_PREFIX_LENS",
    "PAPER_RHO_BASELINE",
    "PAPER_RHO_GROUPS",
    "PAPER_RHO_P",
    "PAPER_RATES_AT_TAU",
    "PAPER_RHO_POPULAR",
    "PAPER_TABLES",
    "PAPER_TAUS",
    "PARAMS",
    "PROFILES",
    "SOURCE_SETUP",
    "TRACKS_R2",
    "AssumptionCheck",
    "FamilyAgreement",
    "LOOResult",
    "LadderAgreement",
    "LadderMethod",
    "PCAIndex",
    "RelativeBound",
    "ScalingLaw",
    "SignTestResult",
    "SizeError",
    "absolute_lower_bound",
    "accuracy_profile",
    "accuracy_table",
    "add_lift",
    "agreement",
    "agreement_check",
    "agreement_claim",
    "agreement_note",
    "assumption_check",
    "baseline_accuracy",
    "best_bound",
    "block_scores",
    "bounds_claim",
    "calibration",
    "calibration_claims",
    "calibration_text", "index_ablation", "index_ablation_text",
    "chapter_templates",
    "chapter_texts",
    "complete_models",
    "decision_metrics",
    "equal_size_false_positives",
    "family_agreement",
    "family_lean",
    "fit_law",
    "gap_claims",
    "gap_text",
    "group_gap",
    "invalid_bounds",
    "invalid_bounds_text",
    "is_correct",
    "kind_sweep",
    "kinds_text",
    "lab_agreement_claims",
    "lab_samples",
    "ladder_agreement",
    "ladder_claims",
    "ladder_design",
    "ladder_gap_text",
    "ladder_method",
    "place_on_law",
    "bound_targets",
    "ladder_values",
    "law_claim",
    "law_coefficients_claim",
    "load_paper_table",
    "log_r2",
    "loo_claim",
    "loo_cv",
    "loo_r2_claim",
    "loo_r2_interval",
    "normalize_word",
    "null_calibration",
    "null_pvalues",
    "pairwise_claims",
    "probe_claims",
    "probe_modes",
    "probe_text",
    "rate_bootstrap",
    "source_only_claims",
    "tau_tag",
    "untestable_text",
    "pairwise_spearman",
    "pairwise_tests",
    "ablation_text",
    "valid_count",
    "pairwise_text",
    "pca_index",
    "plan",
    "position_table",
    "prediction_word",
    "probe_models",
    "project",
    "relative_lower_bound",
    "render",
    "render_prompt",
    "sample_positions",
    "sign_permutation_test",
    "sweep_at",
    "tau_sweep",
    "templates",
    "text_ranks",
    "truly_larger",
    "whitespace_words",
    "page",
    "bounds",
    "is_ablation",
]

# the page (what each section glues) and the ladder's steps the chapter calls one by one
from analysis.size import page  # noqa: E402
from analysis.size.steps import bounds, is_ablation  # noqa: E402
