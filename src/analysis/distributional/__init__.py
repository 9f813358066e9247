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

Below, the names the chapter's notebook, the book's other pages and modules, and the
scripts read from the package, each once (``tests/test_surface.py`` keeps them exactly
those); tests import from the submodules.
"""

from analysis.distributional import page
from analysis.distributional.claims import mem_claims
from analysis.distributional.claims_causes import (
    counterfactual_claim,
    influence_claim,
    partial_claims,
    prompt_opt_claims,
)
from analysis.distributional.claims_filter import filter_claims, sensitivity_claim
from analysis.distributional.claims_performance import performance_claims
from analysis.distributional.claims_tasks import mmlu_claims, novelty_claims, untestable_claims
from analysis.distributional.controls import (
    accuracy_matrix,
    distinct_table,
    kendall_trend_interval,
    mem_intervals,
    novelty_intervals,
    partial_mem_tables,
    swapped_task,
    unit_trend_interval,
)
from analysis.distributional.counterfactual import (
    answer_logprobs,
    counterfactual_drop,
    counterfactual_run,
    removed_facts,
    smallest_ladder_run,
)
from analysis.distributional.inference import cluster_mem_table
from analysis.distributional.influence import (
    checkpoint_steps,
    influence_gap,
    influence_run,
    influence_table,
    lab_influence_cached,
)
from analysis.distributional.method import instance_pair_counts, tied_share
from analysis.distributional.method_tables import (
    accuracy_by_copies,
    accuracy_table,
    answered_by_copies,
    by_model,
    copies_bins,
    filter_counts,
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
from analysis.distributional.params import (
    KNOWLEDGE_TOKENS,
    NOVELTY_N,
    PARAMS,
    SOURCE_SETUP,
    load_paper_claims,
)
from analysis.distributional.prompt_opt import (
    arm_answers,
    arm_table,
    control_gold,
    prompt_gap,
    search_prompts,
)
from analysis.distributional.run import (
    count_corpus,
    generate_answers,
    infgram_table,
    knowledge_pairs,
    knowledge_task,
    llm_table,
    mmlu_in_lab,
    mmlu_task,
    novelty_counts,
    novelty_table,
    reasoning_task,
    source_task_table,
    split_tables,
    task_gram_tables,
)
from analysis.distributional.source_rules import matched_thresholds
from analysis.distributional.text import render
