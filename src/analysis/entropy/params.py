"""The entropy chapter's parameters, the source's transcribed constants and tables.

``PROFILES`` and ``PARAMS`` (the :class:`~analysis.params.Declaration` a notebook
resolves), the numbers the source prints (``PAPER_*``), this chapter's own rules
(τ's quantile, the thresholds its claims use) and :func:`load_paper_table`, the
loader of the source's tables in ``data/entropy_table*.csv``. The chapter's one
error class, :class:`EntropyError`, lives here too.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.paths import DATA_DIR
from analysis.lab.profiles import check_runs, lab_profile_param
from analysis.params import Declaration, Param

#: the source's discoverable-memorization setup
PAPER_PREFIX_TOKENS = 100
PAPER_SUFFIX_TOKENS = 50
PAPER_TEMPERATURE = 0.8
#: the source's minimum sample for dataset inference (Section 6.2, Appendix E.1)
PAPER_MIN_DI_SAMPLES = 1500
#: the source's per-model intercept thresholds (Section 6.3)
PAPER_TAU = {"Pythia": 0.0, "OLMo-2": 3.0}
#: Appendix C.1's sampling strategies (Table 4)
PAPER_STRATEGIES = (
    ("Temp=0", dict(temperature=0.0)),
    ("Temp=0.5", dict(temperature=0.5)),
    ("Temp=0.8", dict(temperature=0.8)),
    ("Temp=0.8, top_p=0.5", dict(temperature=0.8, top_p=0.5)),
    ("Temp=1", dict(temperature=1.0)),
    ("Temp=0.8, top_k=10", dict(temperature=0.8, top_k=10)),
)
#: Appendix E.2, Table 7: dataset-inference calls right out of 6, the source's rule and its
#: baseline (Maini et al. 2024's aggregated membership-inference attacks), on Pythia and MIMIR
PAPER_TABLE7 = {"intercept rule": (5, 6), "Maini et al. (2024)": (3, 6)}
#: Appendix E.1's sample sizes
PAPER_SAMPLE_SIZES = (250, 500, 1000, 2000, 4000, 8000)
#: the abstract and Section 4: Pearson r of the level-set entropy line on every model tried
PAPER_MIN_R = 0.9
#: Figure 1 (Section 3.1): instance-level r, "a positive, yet weak" correlation "around 0.6"
PAPER_INSTANCE_R = 0.6
PAPER_INSTANCE_MODEL = "OLMo-1B"
#: Figure 2 (Section 4) on OLMo-2-1124-7B: "r = 0.972 and 0.945 respectively" for its panels
#: (a) zlib and (b) entropy. Read in panel order; Appendix C's base-model entropy line
#: (intercept 3.724, slope 0.142, as in Table 1) has r = 0.945, which confirms that reading.
PAPER_SET_R = {"entropy": 0.945, "zlib": 0.972}
PAPER_SET_MODEL = "OLMo-2-1124-7B"
#: Figure 4 (Section 4): continuation lengths and the range of r across them
PAPER_LENGTHS = (10, 20, 30, 40, 50)
PAPER_LENGTH_R = (0.92, 0.98)
#: Figure 4 and Appendix C.7: every line reaches M(s_50) ≈ 11 at e = |s| = 50 (OLMo-2)
PAPER_END_ENTROPY = 11.0
#: Appendix C.1: Table 4's sample (the DCLM1 subset of OLMo-2-1124-Mix), about this many pairs
PAPER_TABLE4_PAIRS = 28_000
#: Appendix E.1: below the minimum sample, the intercept falls from a plateau towards this value
PAPER_SMALL_SAMPLE_INTERCEPT = -6.0
#: sample sizes of the main experiments: Figure 1 (OLMo-1B) and Appendix E.1 (OLMo-2's dataset)
PAPER_N_PAIRS = {"OLMo-1B": 240_000, "OLMo-2-1124-7B": 300_000}
#: this chapter's rule for tau: this quantile of the reference set's re-centred bootstrap intercepts
DI_QUANTILE = 0.05
#: a call is stable when at least this share of re-centred resamples makes it too
AGREEMENT_LEVEL = 0.95
#: a change of the intercept across answer lengths below this many bits "hardly moves"
FLAT_INTERCEPT_BITS = 0.5
#: level-set entropies at e = |s| within this many bits of each other "end near the same entropy"
SAME_END_BITS = 1.0
#: a pair "scores low" below this share of |s| edits
LOW_SCORE_SHARE = 0.5
#: how the trivial-memorization filter reads LCS: as written, LCS(p, s); as the
#: text describes it, overlap of the response with the prompt, LCS(p, r); or off
LCS_FILTERS = ("written", "described", "none")
#: the passage on which the chapter measures what the beginning-of-sequence token
#: changes (issue 42): characters 20,000–23,000 of the mirror's *Alice in Wonderland*,
#: its first 256 tokens, scored with and without the BOS by the model that has one
#: (Gemma 3) and, for contrast, by one whose tokenizer adds none (SmolLM2)
BOS_TEXT = "alice_in_wonderland"
BOS_CHARS = (20_000, 23_000)
BOS_TOKENS = 256
BOS_MODELS = {"gemma": "gemma3-270m", "smollm": "smollm2-135m-instruct"}
#: Appendix C.4: the numbers of equal-width score bins the source re-bins the scores into
PAPER_BINNINGS = (3, 5, 10)
#: rarefaction (is the line a sample-size artefact?): level sets are cut down to the pairs
#: of the smallest one holding at least this many (smaller ones are left out), this many
#: draws give the interval, and the permutation test averages r over this many draws
RAREFY_MIN_PAIRS = 10
RAREFY_DRAWS = 200
RAREFY_TEST_DRAWS = 20
#: the Holm family of the two bias-corrected lines (rarefied, Miller–Madow)
ESTIMATOR_FAMILY = "sample-size artefact"
#: why the NSB estimator is not computed (the brief: not hand-rolled)
NSB_NOTE = ("The NSB estimator (Nemenman, Shafee and Bialek 2002) is not computed: the one maintained "
            "Python implementation on PyPI, infomeasure (AGPL-3.0, which pulls in numba), is not among the "
            "book's dependencies, ndd was last released in 2021 and builds only with a Fortran compiler, and "
            "the book does not write its own")
#: Maini et al. (2024)'s dataset inference (the source's Table 7 baseline): the share of each
#: attack's values clipped (half at each end) within each set, and the t-test's level
MAINI_CLIP = 0.05
MAINI_ALPHA = 0.05
#: the fewest pairs of the known train and validation sets (each half of the validation set
#: needs two) and of a suspect set the aggregation and its t-test take
MAINI_MIN_PAIRS = 4
#: the fewest strategies a correlation across strategies rests on
MIN_STRATEGY_LINES = 5
#: the same, as a claim's reason says it
NSB_SHORT = ("NSB is not computed: no maintained implementation is among the book's dependencies (see "
             "the page)")
PAPER_TABLES = {
    "table1": "entropy_table1.csv",
    "table4": "entropy_table4.csv",
}



#: the fewest level sets a claim about a line rests on (a line needs 3)
MIN_LEVEL_SETS = 5
#: the fewest kept pairs a claim about the share of low scores rests on
MIN_PAIRS = 30
#: the fewest texts (documents the pairs are drawn from) a claim over pairs rests on
MIN_TEXTS = 30
#: the fewest subsamples (both sizes together) a sample-size claim rests on
MIN_SUBSAMPLES = 10
#: the fewest decided candidate sets a dataset-inference claim rests on
MIN_DI_SETS = 10
#: the fewest candidate sequences (members and non-members together) a membership-inference
#: claim rests on
MIN_MIA_CANDIDATES = 30
#: the fewest sets (with a bootstrap) the intercept–slope claim rests on
MIN_BOOT_SETS = 5
#: the fewest answer lengths, strategies or sets an "at every one" claim rests on
MIN_SETTINGS = 2
#: the bootstrap resample correlation of intercept and slope reads "opposite" below
#: minus this, "together" above it
TIED_R = 0.5
#: the lab's dataset-inference sets: the popular-text excerpts in this many sets of
#: contiguous copy bands, the held-out popular-text windows in this many sets, and
#: which member set is the reference ("background": background A; "popular": the
#: band of most-copied excerpts). Each set must hold at least as many windows of
#: |p| + |s| tokens as the pairs drawn from it (:func:`~analysis.entropy.sets.candidate_windows`).
LAB_POPULAR_SETS = 1
LAB_HELDOUT_SETS = 1
LAB_REFERENCE = "background"
LAB_REFERENCES = ("background", "popular")


PROFILES = {
    # CI: the smoke lab's models (near chance) and a handful of pairs.
    "smoke": dict(
        lab_profile="smoke", lab_model="pert-l2x", di_models=["pert-l2x"],
        lab_popular_sets=1, lab_heldout_sets=1,
        lab_prefix_tokens=8, lab_suffix_tokens=8, n_lab=150, n_di_lab=60, n_strategy=60,
        lab_suffix_lengths=(4, 8), strategies=("Temp=0", "Temp=0.5"), sample_sizes=(40, 80), repeats=5,
        models=["smollm2-135m-instruct"], prefix_tokens=16, suffix_tokens=16, n_real=16,
        temperature=0.0, lcs_filter="written", n_boot=50, seed=0, n_mia_lab=60, n_mia_real=16,
    ),
    # The lab's largest perturbed run (its stream holds the injected sequences) and,
    # for dataset inference, also the largest model of the 6-layer family (deep-40,
    # another depth and about a third of the size, which never saw an injected
    # sequence); both real models. The injected sequences are about 64 tokens long, so
    # |p| + |s| = 32 + 16, the source's 2 : 1 split scaled down. Greedy decoding
    # (the source's Table 4 finds the same r as at its main temperature 0.8, which
    # the lab section also shows). The lab's excerpts and held-out windows are each
    # cut into 3 sets (excerpts by copies), so each lab model meets 8 candidate sets
    # (16 over the two), every one with more distinct 48-token windows than the
    # 1,500 pairs it supplies. On 2 cores the lab part takes a few minutes;
    # 3 x 500 real pairs take about 4 minutes for SmolLM2 and 10 for Gemma 3 270M.
    # Membership inference scores every kept pair of every dataset-inference set again
    # as a whole window (n_mia_lab per lab set and n_mia_real per real set, as many as
    # the sets' pairs, so that Maini et al.'s baseline and the mean-loss rule use the
    # same amount of data as the intercept rule: 1,500 forward passes per real model)
    # and the lab's injected sequences once.
    "default": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "deep-40"],
        lab_popular_sets=3, lab_heldout_sets=3,
        lab_prefix_tokens=32, lab_suffix_tokens=16, n_lab=10_000, n_di_lab=PAPER_MIN_DI_SAMPLES,
        n_strategy=3000, lab_suffix_lengths=(8, 16, 24, 32),
        strategies=tuple(name for name, _ in PAPER_STRATEGIES), sample_sizes=PAPER_SAMPLE_SIZES,
        repeats=20, models=["smollm2-135m-instruct", "gemma3-270m"], prefix_tokens=32, suffix_tokens=16,
        n_real=500, temperature=0.0, lcs_filter="written", n_boot=1000, seed=0,
        n_mia_lab=PAPER_MIN_DI_SAMPLES, n_mia_real=500,
    ),
    # The source's setup for the real models (|p| = 100, |s| = 50, n = 1,500 per set,
    # temperature 0.8); the lab keeps 32 + 16, the length of its injected sequences.
    "paper": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "deep-40"],
        lab_popular_sets=3, lab_heldout_sets=3,
        lab_prefix_tokens=32, lab_suffix_tokens=16, n_lab=20_000, n_di_lab=PAPER_MIN_DI_SAMPLES,
        n_strategy=6000, lab_suffix_lengths=(8, 16, 24, 32),
        strategies=tuple(name for name, _ in PAPER_STRATEGIES), sample_sizes=PAPER_SAMPLE_SIZES,
        repeats=20, models=["smollm2-135m-instruct", "gemma3-270m"], prefix_tokens=PAPER_PREFIX_TOKENS,
        suffix_tokens=PAPER_SUFFIX_TOKENS, n_real=PAPER_MIN_DI_SAMPLES, temperature=PAPER_TEMPERATURE,
        lcs_filter="written", n_boot=1000, seed=0, n_mia_lab=PAPER_MIN_DI_SAMPLES,
        n_mia_real=PAPER_MIN_DI_SAMPLES,
    ),
}



class EntropyError(ValueError):
    """Bad input to the entropy chapter's computations, raised before any work."""



def load_paper_table(name: str) -> pd.DataFrame:
    """One of the source's tables transcribed into ``data/`` (see the file's note)."""
    if name not in PAPER_TABLES:
        raise EntropyError(f"name must be one of {sorted(PAPER_TABLES)}, got {name!r}")
    return pd.read_csv(DATA_DIR / PAPER_TABLES[name], comment="#")


def _check_lab_model(value, settings):
    check_runs("lab_model", value, settings["lab_profile"])



PARAMS = Declaration(
    "entropy",
    PROFILES,
    (
        lab_profile_param(),
        Param("lab_model", "the lab run of the linearity study, such as pert-l2x", kind="str",
              check=_check_lab_model),
        Param("lab_popular_sets", "dataset inference: sets the lab's popular excerpts are cut into "
              "(by copies)", kind="int", lo=1),
        Param("lab_heldout_sets", "dataset inference: sets the lab's held-out popular-text windows are "
              "dealt into", kind="int", lo=1),
        Param("models", "models of the real-data section: local, or api: models on a server that gives "
              "prompt log-probabilities and its tokenizer (vLLM, llama.cpp; checked in the chapter's first "
              "cell)", kind="models"),
        Param("n_lab", "pairs in the lab model's main sample", kind="int", lo=1),
        Param("n_real", "pairs per set for each real model", kind="int", lo=1),
        Param("prefix_tokens", "|p| for the real models", kind="int", lo=1),
        Param("suffix_tokens", "|s| for the real models", kind="int", lo=1),
        Param("temperature", "sampling temperature of the main runs; 0 means greedy", kind="float",
              lo=0.0, hi=2.0),
        Param("lcs_filter", "which LCS the trivial-pair filter uses", kind="choice", choices=LCS_FILTERS),
        Param("n_boot", "bootstrap resamples", kind="int", lo=1),
        Param("seed", "seed of the samples, the sampling and the bootstrap", kind="int", lo=0),
    ),
    profile_help={"smoke": "the smoke lab and a handful of pairs (CI)",
                  "default": "the book's lab and 500 pairs per set for each real model",
                  "paper": "the source's |p| = 100, |s| = 50, 1,500 pairs per set at temperature 0.8"},
)
