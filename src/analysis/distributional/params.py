"""The distributional chapter's settings: profiles, ``PARAMS``, the source's constants,
the thresholds its claims are decided with, and the loader of its claims table."""

from __future__ import annotations

import pandas as pd

from analysis.core.paths import DATA_DIR
from analysis.lab.profiles import check_runs, lab_profile_param
from analysis.params import Declaration, Param


class DistributionalError(ValueError):
    """Bad input to the distributional chapter's computations, raised before any work."""


# ---------------------------------------------------------------------------
# The source's setting, as the chapter transcribes it
# ---------------------------------------------------------------------------

#: the source's models, as its summary names them
SOURCE_MODELS = "Pythia 70M–12B"
#: where E5's cosines cluster, as its model card states it (why the same γ is not the
#: same filter with MiniLM)
E5_COSINE_RANGE = (0.7, 1.0)
#: the source study's setting of each parameter, for the chapter's Setup table
SOURCE_SETUP = {"lab_models": SOURCE_MODELS, "n_reasoning": "the GSM8K test set (1,319 problems)",
                "max_pairs": "every pair of the task-gram table", "seed": "—",
                "prompt_opt_problems": "the GSM8K test set (1,319 problems)"}
#: the thresholds the chapter applies as "the paper's": TriviaQA's for the knowledge
#: task, with a 2-gram value the paper does not give (0.80, continuing its step of
#: 0.05 per n); the reasoning task takes the same values (the paper gives none for GSM8K)
CHAPTER_THRESHOLDS = {
    "knowledge": {2: 0.80, 3: 0.75, 5: 0.65},
    "reasoning": {2: 0.80, 3: 0.75, 5: 0.65},
}

#: the MMLU subjects of each split: the ones the source's summary names as examples of
#: the paper's knowledge-intensive (33) and reasoning-intensive (24) subtasks; the
#: summary does not list the rest of the paper's Appendix D classification
MMLU_SPLITS = {
    "MMLU knowledge": ("high_school_geography", "astronomy", "professional_psychology"),
    "MMLU reasoning": ("college_mathematics", "econometrics", "abstract_algebra"),
}
#: the source's MMLU reasoning-intensive panel (Figure 4, bottom right), as its summary reads it
SOURCE_MMLU_REASONING = ("n = 3 lower than the knowledge split and largely insignificant; "
                         "n = 5 rho about 0.22 at 70M to 0.12 at 12B")
#: the source's WMT novelty (Figure 4, top left), as its summary reads it
SOURCE_NOVELTY = ("WMT: the share of novel generated n-gram pairs rises from about 0.2 at 70M to about 0.5 "
                  "at 12B")
#: the source's GSM8K Kendall tau distances for Pythia (Figure 4), as its summary reads them
SOURCE_KENDALL = "GSM8K, Pythia: task-gram LM about 0.51–0.54, ∞-gram LM about 0.55–0.58"
SOURCE_KENDALL_INF = "about 0.55–0.58"

# ---------------------------------------------------------------------------
# The lab's two tasks and the chapter's tables
# ---------------------------------------------------------------------------

#: the knowledge task's prompt: the source's instruction ("Answer the following
#: question:") before the question and a minimal output cue after it, a wording no
#: training document holds (:func:`analysis.distributional.run.knowledge_task` checks it)
KNOWLEDGE_PROMPT = "Answer the following question: {question} Answer:"
#: new tokens of a knowledge answer (the lab's answers are a few words)
KNOWLEDGE_TOKENS = 12
#: the n of the novelty measure
NOVELTY_N = 3
#: bins of equal size in the performance-against-count figure (the source's has five)
N_COUNT_BINS = 5
#: edges of the copies bins of the accuracy-by-copies table: a bin of its own for the
#: never-trained control facts (0 copies), then 1, 2-4, 5-16, 17-64, 65-256 (the default
#: lab's trained facts have 1 to 64 copies; a larger count widens the last bin)
COPIES_EDGES = (-1, 0, 1, 4, 16, 64, 256)
#: the three filters of the task-gram tables, by label
PAPER_FILTER, AUTHORS_FILTER, NONE_FILTER = "paper (as applied here)", "authors' code", "no filter"
#: the corpus LMs set against the models: the task-gram LM (Mem_n), the ∞-gram LM
#: (Mem_∞) and the pair count C((x, y)) (a variant beyond the paper)
CORPUS_LMS = ("task-gram", "∞-gram", "pair count")
#: the note of a correlation left undefined because one side ranks every pair the same
CONSTANT_NOTE = "one side gives every pair the same value"

# ---------------------------------------------------------------------------
# How the chapter's claims are decided (analysis.distributional.claims)
# ---------------------------------------------------------------------------

#: significance level of every Spearman, Kendall, sign and Fisher test (the source's p < 0.05)
ALPHA = 0.05
#: share of tied pairs, or of models, above which the chapter says "most"
MOST = 0.5
#: largest |Mem_n| the chapter calls "near zero"
NEAR_ZERO = 0.1
#: share of candidates at or above which a filter keeps "nearly every" pair
NEARLY_ALL = 0.95
#: the fewest test pairs a Mem_n is read on: below it a claim resting on that Mem_n is
#: inconclusive (at 30 pairs a Spearman ρ of 0.36 is just significant at p < 0.05)
MIN_PAIRS = 30
#: the fewest models a claim across the ladder rests on (a trend with size, a sign
#: test over models): with fewer, the two-sided sign test cannot reach p < 0.05
MIN_MODELS = 6
#: the fewest facts a recall comparison between two copies bins rests on, and the fewest
#: units (facts, problems) a Mem_n claim rests on
MIN_FACTS = 10
#: seeded permutations of the cluster null of every model's Mem_n (whole facts or problems
#: move; :mod:`analysis.distributional.inference`): 1,000, so that the smallest two-sided
#: p-value, 2/1001, survives Holm's correction over the ten models of the ladder
N_PERM = 1000
#: seeded permutations of the null of a trend across the models (the values shuffled among them)
MODEL_PERM = 2000
#: seeded bootstrap resamples of whole units (facts, problems) behind every Mem interval
#: and every size trend's interval (:mod:`analysis.distributional.controls`)
N_BOOT = 1000
#: the seed of all three
PERM_SEED = 0

# ---------------------------------------------------------------------------
# Profiles and parameters
# ---------------------------------------------------------------------------

#: the chapter's profiles. ``lab_models``: lab runs of the ladder (None = all of the
#: profile's ladder); ``max_pairs``: a seeded sample of at most this many test
#: pairs per (task, n); ``count_n``: the n whose pair counts bin the instances
#: (the paper's Figure 3 uses 5 for TriviaQA); ``reasoning_tokens``: new tokens of a
#: reasoning answer (80: the longest lab prompt, 39 tokens, plus 80 fits the 128-token context)
PROFILES = {
    "smoke": dict(lab_profile="smoke", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=12, max_pairs=300,
                  count_n=5, reasoning_tokens=48, seed=0, influence_facts=3, influence_docs=3,
                  prompt_opt_problems=12),
    "default": dict(lab_profile="default", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=1000,
                    max_pairs=2000, count_n=5, reasoning_tokens=80, seed=0, influence_facts=20,
                    influence_docs=50, prompt_opt_problems=300),
    # every test pair and as many reasoning problems as GSM8K's test set (Pythia and the Pile, the
    # paper's own setting, need the network: see the chapter's real-data section)
    "paper": dict(lab_profile="default", lab_models=None, ngram_sizes=(2, 3, 5), n_reasoning=1319,
                  max_pairs=None, count_n=5, reasoning_tokens=80, seed=0, influence_facts=50,
                  influence_docs=50, prompt_opt_problems=1319),
}


def _check_lab_models(value, settings):
    if value is not None:
        check_runs("lab_models", value, settings["lab_profile"], family="ladder", at_least=2)


PARAMS = Declaration(
    "distributional",
    PROFILES,
    (
        lab_profile_param(),
        Param("lab_models", "lab ladder runs to compare (default: the whole ladder)", kind="names",
              nullable=True, check=_check_lab_models),
        Param("n_reasoning", "fresh arithmetic problems in the reasoning task", kind="int", lo=1),
        Param("max_pairs", "test pairs per (task, n), a seeded sample (None: all)", kind="int", lo=1,
              nullable=True),
        Param("seed", "seed of the samples", kind="int", lo=0),
        Param("influence_facts", "knowledge facts whose training-document influence is computed "
              "(Section 6)", kind="int", lo=2),
        Param("influence_docs", "training documents retrieved per fact and way (the source's R = 50)",
              kind="int", lo=1),
        Param("prompt_opt_problems", "reasoning problems asked under each optimized prompt (Table 1; at most "
              "n_reasoning)", kind="int", lo=2),
    ),
    profile_help={"smoke": "the smoke lab (CI)", "default": "the book's lab, 2,000 pairs per (task, n)",
                  "paper": "the book's lab, every test pair, 1,319 reasoning problems (GSM8K's test size)"},
)


def load_paper_claims() -> pd.DataFrame:
    """The paper's claims the chapter sets beside the lab's results
    (``data/distributional_claims.csv``; see its note for the source)."""
    return pd.read_csv(DATA_DIR / "distributional_claims.csv", comment="#")


def paper_value(paper: pd.DataFrame | None, figure: str, task: str) -> str | None:
    """The source's value for one (figure, task) row of :func:`load_paper_claims`,
    or None when ``paper`` is None or has no such row."""
    if paper is None:
        return None
    row = paper[(paper["figure"] == figure) & (paper["task"] == task)]
    return None if row.empty else str(row["value"].iloc[0])
