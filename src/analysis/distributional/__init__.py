"""Distributional memorization: does a model's output probability track pretraining counts?

The source (a summary and critique of "Generalization v.s. Memorization: tracing
language models' capabilities back to pretraining data") correlates the task-gram
LM, ``P(y | x) = C(x, y) / C(x)`` over a task's n-gram pairs, with the LLM's
chain-rule probability of ``y``: ``Mem_n`` is their Spearman correlation. The
chapter (``notebooks/distributional.md``) runs it on the lab corpus and ladder.

* :mod:`.params`: profiles, ``PARAMS``, the source's constants, the claims' thresholds;
* :mod:`.method`: the source's equations (Mem_n, Kendall distance, novelty, the test
  pairs, answer scoring), pure;
* :mod:`.method_tables`, :mod:`.method_trends`: the chapter's tables over the ladder,
  and a measure read across it;
* :mod:`.run`: the lab's two tasks, the corpus counts, the models' answers and
  probabilities, the ∞-gram LM;
* :mod:`.inference`: the cluster permutation null of every Mem_n (whole facts or
  problems move), the answers-swapped control, trends across the models;
* :mod:`.claims`: every verdict as a :class:`~analysis.core.claims.Claim`;
* :mod:`.text`: the English (:func:`render` and the glued paragraphs).
"""

from analysis.distributional.claims import (
    above_infgram_claims,
    count_claim,
    count_claims,
    kendall_inf_claim,
    kendall_rises,
    mem_claims,
    mem_none,
    mem_rises,
    mem_rises_claims,
    mem_significant,
    tied_claims,
)
from analysis.distributional.claims_causes import (
    counterfactual_claim,
    influence_claim,
    partial_claims,
    prompt_opt_claim,
    prompt_opt_claims,
)
from analysis.distributional.claims_filter import filter_claims, sensitivity_claim
from analysis.distributional.claims_performance import copies_rise, copies_size, performance_claims
from analysis.distributional.claims_tasks import mmlu_claims, novelty_claims, untestable_claims
from analysis.distributional.controls import (
    SWAPPED,
    accuracy_matrix,
    distinct_table,
    distinct_values,
    kendall_trend_interval,
    mem_intervals,
    novelty_intervals,
    partial_mem_table,
    partial_mem_tables,
    swapped_task,
    unit_resamples,
    unit_trend_interval,
)
from analysis.distributional.counterfactual import (
    answer_logprobs,
    counterfactual_drop,
    counterfactual_run,
    counterfactual_texts,
    removed_facts,
    smallest_ladder_run,
)
from analysis.distributional.inference import (
    aggregate_null,
    cluster_mem_table,
    cluster_spearman,
    model_trend,
    share_bootstrap,
    unit_maps,
)
from analysis.distributional.influence import (
    R_DOCS,
    checkpoint_steps,
    fact_documents,
    fact_documents_summary,
    influence_gap,
    influence_run,
    influence_table,
    lab_influence,
    lab_influence_cached,
    question_span,
    tracin,
)
from analysis.distributional.method import (
    answer_correct,
    continuation,
    cooccurring,
    corpus_lms,
    final_number,
    flat_segments,
    instance_pair_counts,
    kendall_distance,
    mem_spearman,
    ngram_segments,
    noncontiguous_share,
    noncontiguous_shares,
    novelty,
    pair_contexts,
    performance_by_count,
    recall_gap,
    size_trend,
    spearman_row,
    task_table,
    tied_share,
)
from analysis.distributional.method_tables import (
    accuracy_by_copies,
    accuracy_table,
    answered_by_copies,
    by_model,
    copies_bins,
    count_bins,
    facts_per_copies_bin,
    filter_counts,
    filter_rows,
    filter_thresholds,
    kendall_table,
    ladder_table,
    mem_table,
    pair_inputs,
    performance_table,
    score_answers,
    sensitivity_table,
    task_specs,
    taskgram_mem_table,
)
from analysis.distributional.method_trends import (
    Trend,
    above_infgram,
    significant_positive,
    threshold_trends,
    trend,
)
from analysis.distributional.params import (
    ALPHA,
    AUTHORS_FILTER,
    CHAPTER_THRESHOLDS,
    CONSTANT_NOTE,
    COPIES_EDGES,
    CORPUS_LMS,
    E5_COSINE_RANGE,
    KNOWLEDGE_PROMPT,
    KNOWLEDGE_TOKENS,
    MIN_FACTS,
    MIN_MODELS,
    MIN_PAIRS,
    MMLU_SPLITS,
    N_BOOT,
    N_COUNT_BINS,
    N_PERM,
    NONE_FILTER,
    NOVELTY_N,
    PAPER_FILTER,
    PARAMS,
    PROFILES,
    SOURCE_KENDALL,
    SOURCE_MMLU_REASONING,
    SOURCE_MODELS,
    SOURCE_NOVELTY,
    SOURCE_SETUP,
    DistributionalError,
    load_paper_claims,
    paper_value,
)
from analysis.distributional.prompt_opt import (
    arm_answers,
    arm_table,
    control_gold,
    prompt_gap,
    search_prompts,
)
from analysis.distributional.run import (
    CorpusCounts,
    TaskGrams,
    count_corpus,
    count_pairs_api,
    doc_index,
    generate_answers,
    infgram_logprobs,
    infgram_table,
    knowledge_pairs,
    knowledge_task,
    llm_table,
    mmlu_in_lab,
    mmlu_task,
    ngram_logprob,
    novelty_counts,
    novelty_table,
    reasoning_task,
    source_task_table,
    split_tables,
    swapped_answers,
    task_gram_tables,
)
from analysis.distributional.source_rules import (
    NLTK_STOPWORD_COUNT,
    e5_keep_rate,
    matched_thresholds,
    nltk_stopwords,
    source_stopwords,
    stopwords_source,
)
from analysis.distributional.text import (
    accuracy_sentence,
    authors_sentence,
    copies_sentence,
    count_sentence,
    counterfactual_values,
    distinct_sentence,
    filter_sentence,
    fmt_params,
    influence_values,
    kendall_inf_sentence,
    kendall_sentence,
    knowledge_sentence,
    lm_sentence,
    mem_glue,
    mem_name,
    mem_sentence,
    mmlu_lab_text,
    mmlu_sentence,
    noncontiguous_sentence,
    novelty_sentence,
    partial_range,
    partial_sentence,
    peak_sentence,
    prompt_opt_glue,
    prompt_opt_values,
    range_text,
    reasoning_sentence,
    render,
    sensitivity_sentence,
    ties_sentence,
    undefined_sentence,
    units_sentence,
    untestable_sentence,
)

__all__ = [
    # gradient influence (Section 6)
    "R_DOCS", "checkpoint_steps", "fact_documents", "fact_documents_summary", "influence_gap",
    "influence_run", "influence_table", "lab_influence", "lab_influence_cached", "question_span", "tracin",
    "influence_claim", "influence_values",
    # the counterfactual retraining
    "answer_logprobs", "counterfactual_claim", "counterfactual_drop", "counterfactual_run",
    "counterfactual_texts", "counterfactual_values", "removed_facts", "smallest_ladder_run",
    # prompt optimization (Section 7, Table 1)
    "arm_answers", "arm_table", "control_gold", "prompt_gap", "prompt_opt_claim", "prompt_opt_claims",
    "prompt_opt_glue", "prompt_opt_values",
    "search_prompts",
    # params
    "ALPHA", "AUTHORS_FILTER", "CHAPTER_THRESHOLDS", "CONSTANT_NOTE", "COPIES_EDGES", "CORPUS_LMS",
    "E5_COSINE_RANGE", "KNOWLEDGE_PROMPT", "KNOWLEDGE_TOKENS", "MIN_FACTS", "MIN_MODELS", "MIN_PAIRS",
    "MMLU_SPLITS", "N_PERM", "N_COUNT_BINS", "NONE_FILTER", "NOVELTY_N", "PAPER_FILTER", "PARAMS", "PROFILES",
    "SOURCE_KENDALL", "SOURCE_MMLU_REASONING", "SOURCE_NOVELTY", "SOURCE_MODELS", "SOURCE_SETUP",
    "DistributionalError", "load_paper_claims", "paper_value",
    # method
    "answer_correct", "continuation", "cooccurring", "corpus_lms", "final_number", "instance_pair_counts",
    "kendall_distance", "mem_spearman", "novelty", "pair_contexts", "performance_by_count", "recall_gap",
    "size_trend", "spearman_row", "task_table", "tied_share",
    # method_tables
    "accuracy_by_copies", "accuracy_table", "answered_by_copies", "by_model", "copies_bins", "count_bins",
    "facts_per_copies_bin", "filter_counts", "filter_rows", "filter_thresholds", "kendall_table",
    "ladder_table", "mem_table", "novelty_counts",
    "novelty_table", "pair_inputs", "performance_table", "score_answers",
    "sensitivity_table", "split_tables", "task_specs", "taskgram_mem_table",
    # method_trends
    "Trend", "above_infgram", "significant_positive", "threshold_trends", "trend",
    # run
    "CorpusCounts", "TaskGrams", "count_corpus", "count_pairs_api", "doc_index", "generate_answers",
    "infgram_logprobs", "infgram_table", "knowledge_pairs", "knowledge_task", "swapped_answers", "llm_table",
    "mmlu_in_lab", "mmlu_task", "ngram_logprob",
    "reasoning_task", "task_gram_tables",
    # claims
    "above_infgram_claims", "copies_rise", "copies_size", "count_claim", "count_claims", "filter_claims",
    "kendall_inf_claim", "kendall_rises", "mem_claims", "mem_none", "mem_rises", "mem_rises_claims",
    "mem_significant", "mmlu_claims", "novelty_claims", "performance_claims", "sensitivity_claim",
    "tied_claims",
    "untestable_claims",
    # inference
    "aggregate_null", "cluster_mem_table", "cluster_spearman", "model_trend", "share_bootstrap", "unit_maps",
    # controls, source rules
    "SWAPPED", "accuracy_matrix", "kendall_trend_interval", "novelty_intervals", "unit_trend_interval",
    "distinct_table", "distinct_values", "mem_intervals", "partial_mem_table", "swapped_task",
    "unit_resamples", "NLTK_STOPWORD_COUNT", "e5_keep_rate", "matched_thresholds", "nltk_stopwords",
    "source_stopwords", "stopwords_source", "partial_claims", "flat_segments", "ngram_segments",
    "noncontiguous_share", "noncontiguous_shares", "partial_mem_tables", "N_BOOT", "source_task_table",
    "distinct_sentence", "noncontiguous_sentence", "partial_range", "partial_sentence",
    # text
    "accuracy_sentence", "authors_sentence", "copies_sentence", "count_sentence",
    "filter_sentence",
    "fmt_params", "kendall_inf_sentence", "kendall_sentence", "knowledge_sentence", "lm_sentence", "mem_glue",
    "mem_name", "mem_sentence", "mmlu_lab_text", "mmlu_sentence", "novelty_sentence", "peak_sentence",
    "range_text", "reasoning_sentence", "render", "sensitivity_sentence", "ties_sentence",
    "undefined_sentence", "units_sentence", "untestable_sentence",
    # what each section of the page glues
    "page",
]

from analysis.distributional import page  # noqa: E402
