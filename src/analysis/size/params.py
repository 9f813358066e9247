"""The size chapter's parameters, the source's transcribed constants and tables.

The source is "Inferring the Size of Large Language Models From Popular Text
Memorization". Its Tables I, II, III and the prompt templates of Table V are
transcribed in ``data/size_*.csv`` (:func:`load_paper_table`); the numbers it
states in its text are the ``PAPER_*`` constants below. ``PROFILES`` and
``PARAMS`` declare what a run of the chapter probes.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.paths import DATA_DIR
from analysis.lab.profiles import lab_profile_param
from analysis.nextword import MODES
from analysis.params import Declaration, Param
from analysis.stats.permutation import ALTERNATIVES

__all__ = [
    "ALTERNATIVES",
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
    "PAPER_LOO_BAND",
    "PAPER_LOO_R2",
    "PAPER_N_PER_TEXT",
    "PAPER_N_POPULAR",
    "PAPER_PRECISION_MIN",
    "PAPER_PREFIX_LENS",
    "PAPER_RATES_AT_TAU",
    "PAPER_RECALL_MIN",
    "PAPER_RHO_BASELINE",
    "PAPER_RHO_GROUPS",
    "PAPER_RHO_P",
    "PAPER_RHO_POPULAR",
    "PAPER_TABLES",
    "PAPER_TAUS",
    "PARAMS",
    "PROFILES",
    "SOURCE_SETUP",
    "TRACKS_R2",
    "SizeError",
    "load_paper_table",
    "render_prompt",
    "templates",
]


class SizeError(ValueError):
    """A size-chapter step asked of data or settings that cannot give it."""


#: table name -> file of :func:`load_paper_table`
PAPER_TABLES = {
    "table1": "size_table1.csv",
    "table2": "size_table2.csv",
    "table3": "size_table3.csv",
    "templates": "size_templates.csv",
}
#: the paper's fitted law (Section 4.2.1): theta_hat(z) = 41.18 * exp(0.62 z), theta in
#: billions of parameters (Table I's unit). A equals the geometric mean of the 19
#: Table I sizes (41.178), as it must when z is centred on those models.
PAPER_LAW = (41.18, 0.62)
PAPER_LAW_R2 = 0.9504
PAPER_LOO_R2 = 0.9387
#: share of the paper's LOO-CV predictions inside the factor-of-two band (Section 4.2.1)
PAPER_LOO_BAND = 1.0
PAPER_PREFIX_LENS = (4, 8, 10, 12, 16, 24)
PAPER_N_PER_TEXT = 100
PAPER_N_POPULAR = 37
#: Figure 3 at alpha_sig = 0.05: precision "remains above 0.83" and recall rises "from 0.87"
#: over tau in [0.01, 0.70] (Section 4.2.2): the lowest of each the source reports
PAPER_PRECISION_MIN = 0.83
PAPER_RECALL_MIN = 0.87
#: Appendix B: mean Spearman rho of the text ranks over model pairs, popular and
#: baseline texts, and the Mann-Whitney p-value between the two
PAPER_RHO_POPULAR = 0.906
PAPER_RHO_BASELINE = 0.428
PAPER_RHO_P = 3.0e-99
#: Appendix B: the mean rho within each of the source's three groups of models ("evaluating
#: these groups in isolation yields similarly high intra-group consistencies")
PAPER_RHO_GROUPS = {"open dense": 0.883, "open MoE": 0.955, "closed": 0.904}
#: the paper's setting of each parameter, for the Setup table
SOURCE_SETUP = {"models": "19 dense open models, 16 MoE, 21 closed", "n_per_text": "100",
                "mode": "chat, five templates, any of five",
                "block_kind": "one accuracy over the L lengths, raw or lifted not said"}
PAPER_ALPHA = 0.05
#: LOO-CV error band of the paper: 0.5 <= theta_hat / theta <= 2
BAND = (0.5, 2.0)
#: the absolute lower bound is this factor times theta_hat (Section 4.2.1)
LOWER_BOUND_FACTOR = 0.5
#: tokens a lab ladder model generates per position (a word and the space after it)
LAB_PROBE_TOKENS = 4
GROUPS = ("popular", "baseline")
#: which entries of a block of D(f, g) the block score s_j averages: "raw" or "lifted" is the
#: source's formula (Section 3.4: one accuracy averaged over the L lengths, its superscript left
#: unsaid); "all" is this book's reading of the sentence before it ("summarize the entries of
#: D(f, g) within each block"), raw and lifted averaged together
KINDS = ("all", "raw", "lifted")
#: the order in which the chapter reports the kinds: the source's formula first
KIND_ORDER = ("raw", "lifted", "all")
#: R² at or above which the chapter says the index tracks size
TRACKS_R2 = 0.5
#: the τ at which the chapter reports the pairwise test's precision and recall
PAIRWISE_TAU = 0.5
#: the two ends of the τ range of the source's Figure 3, where it states its precision and recall
PAPER_TAUS = (0.01, 0.70)
#: the source's precision and recall at each end of that range (Section 4.2.2): precision "starts at
#: 0.91 and slowly drops, but remains above 0.83 across the entire range" (so at τ = 0.70 only the
#: floor 0.83 is stated), recall "rises from 0.87 at τ = 0.01 to 0.97 at τ = 0.70"
PAPER_RATES_AT_TAU = {0.01: {"precision": 0.91, "recall": 0.87}, 0.70: {"precision": 0.83, "recall": 0.97}}

PROFILES = {
    # Two popular texts and one baseline text, 3 positions per text and length.
    "smoke": dict(
        models=["smollm2-135m-instruct"],
        lab_profile="smoke",
        popular_texts=["alice_in_wonderland", "hamlet"],
        baseline_texts=["chain_of_thought"],
        prefix_lens=(4, 8),
        n_per_text=3,
        n_lab_per_text=2,
        mode="auto",
        template_ids=(1,),
        max_new_tokens=6,
        seed=0,
        alpha=PAPER_ALPHA,
        n_calibration=20,
    ),
    # All 41 texts (None = all): 41 * 6 * 24 = 5,904 prefixes per model. A chat model
    # (SmolLM2, any API model) answers Table V's first template, a base model (Gemma 3)
    # continues the raw prefix (completion mode, the book's own adaptation: the source
    # queries chat models only): about 14 minutes for Gemma 3 270M on 2 cores. Five
    # templates cost five queries a position; the paper profile runs them.
    "default": dict(
        models=["smollm2-135m-instruct", "gemma3-270m"],
        lab_profile="default",
        popular_texts=None,
        baseline_texts=None,
        prefix_lens=PAPER_PREFIX_LENS,
        n_per_text=24,
        n_lab_per_text=8,
        mode="auto",
        template_ids=(1,),
        max_new_tokens=6,
        seed=0,
        alpha=PAPER_ALPHA,
        n_calibration=200,
    ),
    # The paper's design: 100 positions per text and length, five templates.
    "paper": dict(
        models=["smollm2-135m-instruct", "gemma3-270m"],
        lab_profile="default",
        popular_texts=None,
        baseline_texts=None,
        prefix_lens=PAPER_PREFIX_LENS,
        n_per_text=PAPER_N_PER_TEXT,
        n_lab_per_text=PAPER_N_PER_TEXT,
        mode="auto",
        template_ids=(1, 2, 3, 4, 5),
        max_new_tokens=6,
        seed=0,
        alpha=PAPER_ALPHA,
        n_calibration=1000,
    ),
}

PARAMS = Declaration(
    "size",
    PROFILES,
    (
        lab_profile_param(),
        Param("models", "models whose next-word accuracy is probed", kind="models"),
        Param("n_per_text", "positions per text and prefix length for the models", kind="int", lo=1),
        Param("n_lab_per_text", "positions per text and prefix length for the lab ladder", kind="int", lo=1),
        Param("mode", "completion (raw prefix; this book's adaptation, the source queries chat models "
              "only), chat (Table V templates) or auto (chat for chat models)", kind="choice", choices=MODES),
        Param("block_kind", "which accuracies a text block's score averages over the prefix lengths in the "
              "pairwise test: raw or lifted (the paper's formula, which does not say which) or all (both "
              "together, this book's reading of its 2KL profile)", kind="choice", choices=KINDS,
              default="raw"),
        Param("seed", "seed of the sampled positions and the bootstrap", kind="int", lo=0),
    ),
    profile_help={"smoke": "2 popular texts and 1 baseline, 3 positions (CI)",
                  "default": "all 41 texts, 24 positions per text and length",
                  "paper": "the paper's 100 positions and five templates (hours per local model)"},
)


def load_paper_table(name: str) -> pd.DataFrame:
    """A table of the paper, transcribed in ``data/``.

    Parameters
    ----------
    name : {"table1", "table2", "table3", "templates"}
        ``table1``: the 19 dense open-weight reference models and their sizes
        (billions); ``table2``: the 16 MoE models with size, Best LB, Tightness
        (percent), Source, Abs. Size, Abs. LB, Rel. LB; ``table3``: the 21
        closed-weight models (same columns without size and tightness; an empty
        ``rel_lb`` is the paper's "—"); ``templates``: the five prompts of Table V
        (``template_id``, ``system``, ``template`` with ``{prefix}``).

    Returns
    -------
    pandas.DataFrame
    """
    if name not in PAPER_TABLES:
        raise SizeError(f"name must be one of {sorted(PAPER_TABLES)}, got {name!r}")
    path = DATA_DIR / PAPER_TABLES[name]
    if name == "templates":
        return pd.read_csv(path, comment="#", keep_default_na=False)
    return pd.read_csv(path, comment="#")


def templates() -> pd.DataFrame:
    """The five prompt variants of Table V (``template_id``, ``system``, ``template``)."""
    return load_paper_table("templates")


def render_prompt(template_id: int, prefix: str) -> dict:
    """The system and user prompt of a Table V template for one prefix.

    Returns ``{"system": str or None, "user": str}``; ``{prefix}`` is replaced
    literally (a prefix with braces is safe). The paper's "System: None" is
    ``None``.
    """
    table = templates()
    ids = table["template_id"].tolist()
    if template_id not in ids:
        raise SizeError(f"template_id must be one of {ids}, got {template_id!r}")
    row = table.loc[table["template_id"] == template_id].iloc[0]
    return {"system": row["system"] or None, "user": row["template"].replace("{prefix}", prefix)}
