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
  latent index :math:`z_M` (first component); OLS of :math:`\\ln\\theta = B z + c`
  gives :math:`\\hat\\theta(z) = A e^{Bz}` (Eq. 3-4); the lower bound is
  :math:`0.5\\,\\hat\\theta` (Section 4.2.1, from the LOO-CV factor-of-two band);
* **relative** (Section 3.4): block scores :math:`s_j` per text and a one-sided
  blocked sign-permutation test of :math:`H_0: E[s_j]\\le 0`; the relative bound
  is the size of the largest reference that the target beats significantly
  (Section 4.3). The best bound is the larger of the two.

Beyond the paper the module calibrates the test under a true null
(:func:`null_calibration`), and holds the Appendix-B check of Assumption 1
(rank agreement between models, popular vs baseline texts). Tables I, II, III
and the prompt templates of Table V are transcribed in ``data/size_*.csv``
(:func:`load_paper_table`).

Where the paper leaves a choice open, this module says what it does:

* **Words.** The paper speaks of tokens in Eq. (1) but samples "words" and
  counts "prefix length 8 (as it has 8 words)" (Table V). Here a text's words
  are its whitespace words (:func:`words`), the same words whose indices the
  lab's excerpt windows use. Positions whose target is all punctuation (a lone
  dash or asterisk, which :func:`normalize_word` maps to ``""``) are not sampled.
* **Correctness.** The paper does not say how an answer is compared with the
  target; :func:`normalize_word` and :func:`is_correct` document the rule used.
  With several prompt templates a position is correct if any of them is
  (Section 4.1).
* **Block score.** Section 3.4 summarizes "the entries of D(f, g) within each
  block", D being the difference of the 2KL profiles, while its formula
  averages one unsuperscripted :math:`\\hat\\alpha` over the L lengths.
  ``kind="all"`` (the default) averages every entry of the block (raw and
  lifted, 2L values); ``"raw"`` and ``"lifted"`` take one half. Since
  :math:`\\hat\\alpha^{\\ell}=\\hat\\alpha^{r}-\\hat\\beta`, the three differ only by
  a shift common to every :math:`s_j`: 0, one half or all of the mean
  baseline gap :math:`L^{-1}\\sum_k(\\hat\\beta(f,l_k)-\\hat\\beta(g,l_k))`.
* **τ.** The test has no τ (Section 3.4); τ enters only the ground truth of the
  evaluation: *f is truly larger than g* iff :math:`|f| > (1+\\tau)|g|`
  (Section 4.2.2). A pair is *decided* "f larger" when the test's p-value is at
  most :math:`\\alpha_{sig}` (0.05).
* **Exactness.** The paper enumerates all :math:`2^K` sign flips. Direct
  enumeration is used up to K = 16 and an exact meet-in-the-middle count
  (two halves of :math:`2^{K/2}` sums each) up to ``exact_max_k`` (default 40,
  so the paper's K = 37 is exact); above it a seeded Monte Carlo.
* **Calibration** (not in the paper). The common shift above is one random
  quantity shared by all blocks, which the block-wise sign flips do not
  reproduce: with lifted entries in :math:`s_j` the test's false-positive rate
  under a true null exceeds :math:`\\alpha` (:func:`null_calibration`); with
  ``kind="raw"`` it does not.

All functions are pure: no printing, plotting or network access.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from sklearn.decomposition import PCA

from analysis.lab.ladder import lab_profile_param
from analysis.nextword import MODES
from analysis.params import Declaration, Param

__all__ = [
    "BAND",
    "DATA_DIR",
    "GROUPS",
    "KINDS",
    "LOWER_BOUND_FACTOR",
    "PAPER_ALPHA",
    "PAPER_LAW",
    "PAPER_LAW_R2",
    "PAPER_LOO_R2",
    "PAPER_N_PER_TEXT",
    "PAPER_PREFIX_LENS",
    "PAPER_TABLES",
    "PROFILES",
    "AssumptionCheck",
    "LOOResult",
    "PCAIndex",
    "RelativeBound",
    "ScalingLaw",
    "SignTestResult",
    "absolute_lower_bound",
    "accuracy_profile",
    "accuracy_table",
    "add_lift",
    "assumption_check",
    "baseline_accuracy",
    "best_bound",
    "block_scores",
    "decision_metrics",
    "equal_size_false_positives",
    "fit_law",
    "is_correct",
    "load_paper_table",
    "loo_cv",
    "normalize_word",
    "null_calibration",
    "null_pvalues",
    "pairwise_spearman",
    "pairwise_tests",
    "pca_index",
    "position_table",
    "prediction_word",
    "project",
    "relative_lower_bound",
    "render_prompt",
    "sample_positions",
    "sign_permutation_test",
    "tau_sweep",
    "templates",
    "text_ranks",
    "truly_larger",
    "words",
]

#: folder of the transcribed paper tables
from analysis.core.paths import DATA_DIR  # noqa: E402

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
PAPER_PREFIX_LENS = (4, 8, 10, 12, 16, 24)
PAPER_N_PER_TEXT = 100
PAPER_N_POPULAR = 37
#: the paper's setting of each parameter, for the Setup table
SOURCE_SETUP = {"models": "19 dense open models, 16 MoE, 21 closed", "n_per_text": "100",
                "mode": "chat, five templates, any of five", "block_kind": "all (raw and lifted)"}
PAPER_ALPHA = 0.05
#: LOO-CV error band of the paper: 0.5 <= theta_hat / theta <= 2
BAND = (0.5, 2.0)
#: the absolute lower bound is this factor times theta_hat (Section 4.2.1)
LOWER_BOUND_FACTOR = 0.5
#: tokens a lab ladder model generates per position (a word and the space after it)
LAB_PROBE_TOKENS = 4
GROUPS = ("popular", "baseline")
#: which entries of a block of D(f, g) the block score s_j averages
KINDS = ("all", "raw", "lifted")
ALTERNATIVES = ("greater", "less", "two-sided")
#: below this K the exact test enumerates every flip directly
_DIRECT_MAX_K = 16
_CHUNK = 1 << 16

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
    # continues the raw prefix, the paper's method (b): about 14 minutes for Gemma 3
    # 270M on 2 cores. Five templates cost five queries a position; the paper profile
    # runs them.
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


# ---------------------------------------------------------------------------
# Words and normalization
# ---------------------------------------------------------------------------

_APOSTROPHES = "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc"
_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"
_QUOTE_TABLE = str.maketrans({**{c: "'" for c in _APOSTROPHES}, **{c: '"' for c in _QUOTES}})
#: dash runs treated as word separators inside a whitespace word
_DASH_SEPARATORS = ("\u2014", "\u2013", "--")


def words(text: str) -> list[str]:
    """The words of a text: its whitespace-separated tokens, unchanged.

    These are the units of the prefix length :math:`l` ("prefix length 8, as it
    has 8 words", Table V) and the indices the lab's excerpt windows use
    (``text.split()`` of the cleaned text).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return text.split()


def _strip_punct(s: str) -> str:
    i, j = 0, len(s)
    while i < j and unicodedata.category(s[i]).startswith("P"):
        i += 1
    while j > i and unicodedata.category(s[j - 1]).startswith("P"):
        j -= 1
    return s[i:j]


def _missing(x) -> bool:
    """None, NaN or pandas.NA (a missing prediction)."""
    if x is None or isinstance(x, str):
        return x is None
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def normalize_word(word) -> str:
    """The comparison form of a word (target or predicted).

    The paper counts a prediction correct when it "returns the correct next
    word" without saying how words are compared; this is the rule used here:

    1. ``None``/NaN/``pd.NA`` become ``""``; Unicode NFKC normalization (full-width forms,
       ligatures);
    2. format characters (category ``Cf``: soft hyphen, zero-width space, BOM)
       are removed;
    3. curly and typographic apostrophes (``‘ ’ ‚ ‛ ′ ` ´ ʼ``) become ``'`` and
       curly double quotes and guillemets (``“ ” „ ‟ ″ « »``) become ``"``;
    4. lower-casing (``str.casefold``);
    5. an em dash, an en dash or a run of two ASCII hyphens inside the word
       separates words (``"well--I"``, ``"so—then"``): the first piece that is
       not all punctuation is kept;
    6. surrounding punctuation (Unicode category ``P*``: quotes, apostrophes,
       brackets, ``. , ; : ! ? - _ *``) is stripped from both ends. Inner
       apostrophes and hyphens stay (``"don't"``, ``"to-morrow"``); symbols
       (``S*``: ``$ + =``) stay.

    Parameters
    ----------
    word : str or None
        One word, e.g. a target ``"Alice,"`` or an answer ``"“alice”"``.

    Returns
    -------
    str
        The normalized word; ``""`` when nothing but punctuation is left.

    Examples
    --------
    >>> normalize_word("“Alice’s,”")
    "alice's"
    >>> normalize_word("well--I")
    'well'
    """
    if _missing(word):
        return ""
    s = unicodedata.normalize("NFKC", str(word))
    s = "".join(ch for ch in s if unicodedata.category(ch) != "Cf")
    s = s.translate(_QUOTE_TABLE).casefold().strip()
    for sep in _DASH_SEPARATORS:
        if sep in s:
            pieces = [_strip_punct(p) for p in s.split(sep)]
            s = next((p for p in pieces if p), "")
    return _strip_punct(s)


def prediction_word(prediction) -> str:
    """The predicted word of an answer: its first whitespace word that is not
    all punctuation, normalized (:func:`normalize_word`); ``""`` if none.

    A chat model asked for "only the next word" may still quote it or add a
    full stop (``'"the".'``); a completion model continues the prefix with a
    leading space and more words (``" the end of"``). Both yield ``"the"``.
    """
    if _missing(prediction):
        return ""
    for token in str(prediction).split():
        norm = normalize_word(token)
        if norm:
            return norm
    return ""


def is_correct(prediction, target) -> bool:
    """Whether an answer counts as the next word: the indicator
    :math:`\\mathbb 1[M(t_{i-l},\\dots,t_{i-1}) = t_i]` of Eq. (1).

    True iff :func:`prediction_word` of the answer equals
    :func:`normalize_word` of the target and the target is not empty after
    normalization.
    """
    t = normalize_word(target)
    return bool(t) and prediction_word(prediction) == t


# ---------------------------------------------------------------------------
# Sampling positions
# ---------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _cell_seed(seed: int, text_id: str, prefix_len: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(text_id.encode("utf-8")), int(prefix_len)])


def sample_positions(
    texts: Mapping[str, str],
    prefix_lens: Sequence[int],
    n: int,
    seed: int = 0,
    *,
    known: Iterable[str] | None = None,
    windows: Mapping[str, tuple[int, int]] | None = None,
    baseline: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Draw the positions :math:`S_{T,l}` of :math:`\\hat\\alpha(M,T,l)` (Section 3.2).

    For every text :math:`T` and prefix length :math:`l`, ``n`` target
    positions :math:`i` are drawn uniformly without replacement among those with
    :math:`l` words before them (and inside the window, if one is given); the
    paper draws 100 "at uniformly random positions" for each length
    (Section 4.1). Every (text, length) cell has its own generator,
    ``numpy.random.default_rng([seed, crc32(text_id), l])``, so a cell's sample
    does not depend on which other texts or lengths are drawn. The same sample
    is then put to every model.

    Parameters
    ----------
    texts : mapping of str to str
        Text id -> cleaned text.
    prefix_lens : sequence of int
        The prefix lengths :math:`\\mathcal L` (positive, distinct).
    n : int
        Positions per text and length, :math:`|S_{T,l}|`.
    seed : int, default 0
    known : iterable of str, optional
        Allowed text ids; any other id in ``texts`` is an error.
    windows : mapping of str to (int, int), optional
        Text id -> ``(word_start, word_end)`` (end exclusive, indices into
        :func:`words`): prefix and target must lie inside the window (the lab's
        models were trained on one excerpt window of each text).
    baseline : iterable of str, optional
        Ids of the baseline texts :math:`\\mathcal B`; they get ``group ==
        "baseline"``, every other text ``"popular"``.

    Returns
    -------
    pandas.DataFrame
        One row per sampled position: ``text_id``, ``group``, ``prefix_len``,
        ``position`` (index of the target in :func:`words`), ``prefix`` (the
        :math:`l` words before it joined by single spaces) and ``target`` (the
        word itself, unnormalized). Rows are ordered by text, length, position.

    Raises
    ------
    ValueError
        Before any drawing, naming the parameter: no texts; a text id not in
        ``known``; a window of an unknown text or outside its text;
        ``prefix_lens`` empty, not positive integers, repeated, or not shorter
        than a text (or window); ``n`` not a positive integer or larger than
        the positions available in some (text, length) cell.
    """
    if not isinstance(texts, Mapping) or not texts:
        raise ValueError("texts must be a non-empty mapping of text id to text")
    if known is not None:
        allowed = sorted(set(known))
        unknown = sorted(set(texts) - set(allowed))
        if unknown:
            raise ValueError(f"texts: unknown text ids {unknown}; allowed: {allowed}")
    lens = list(prefix_lens) if not isinstance(prefix_lens, (int, np.integer)) else [prefix_lens]
    if not lens:
        raise ValueError("prefix_lens must name at least one prefix length (positive integers)")
    bad = [ln for ln in lens if not _is_int(ln) or ln < 1]
    if bad:
        raise ValueError(f"prefix_lens must be positive integers (l >= 1), got {bad}")
    if len(set(lens)) != len(lens):
        raise ValueError(f"prefix_lens must be distinct, got {lens}")
    if not _is_int(n) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    windows = dict(windows or {})
    stray = sorted(set(windows) - set(texts))
    if stray:
        raise ValueError(f"windows: text ids {stray} are not in texts; allowed: {sorted(texts)}")
    baseline = set(baseline or ())

    tokens = {t: words(txt) for t, txt in texts.items()}
    spans = {}
    for t, toks in tokens.items():
        start, end = windows.get(t, (0, len(toks)))
        if not (_is_int(start) and _is_int(end) and 0 <= start < end <= len(toks)):
            raise ValueError(
                f"windows[{t!r}] must be (word_start, word_end) with 0 <= start < end <= {len(toks)} "
                f"(the text's word count), got {(start, end)!r}"
            )
        spans[t] = (int(start), int(end))
    for t, (start, end) in spans.items():
        too_long = [ln for ln in lens if ln >= end - start]
        if too_long:
            where = "window" if t in windows else "text"
            raise ValueError(
                f"prefix_lens must be shorter than every text: {too_long} leave no target in the "
                f"{where} of {t!r} ({end - start} words)"
            )
    # Eligible targets: l words before them inside the span, a non-empty normalized target.
    nonempty = {
        t: np.fromiter((bool(normalize_word(w)) for w in tokens[t][s:e]), bool, count=e - s)
        for t, (s, e) in spans.items()
    }
    eligible = {}
    short = []
    for t, (s, _) in spans.items():
        for ln in lens:
            pos = s + ln + np.flatnonzero(nonempty[t][ln:])
            eligible[t, ln] = pos
            if len(pos) < n:
                short.append(f"{t!r} at prefix_len {ln}: {len(pos)}")
    if short:
        raise ValueError(f"n={n} is larger than the available positions of " + "; ".join(short))

    rows = []
    for t in texts:
        toks = tokens[t]
        group = "baseline" if t in baseline else "popular"
        for ln in lens:
            rng = _cell_seed(seed, t, ln)
            chosen = np.sort(rng.choice(eligible[t, ln], size=n, replace=False))
            for i in chosen:
                i = int(i)
                rows.append((t, group, int(ln), i, " ".join(toks[i - ln : i]), toks[i]))
    return pd.DataFrame(rows, columns=["text_id", "group", "prefix_len", "position", "prefix", "target"])


# ---------------------------------------------------------------------------
# Prompt templates (Table V)
# ---------------------------------------------------------------------------


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
        raise ValueError(f"name must be one of {sorted(PAPER_TABLES)}, got {name!r}")
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
        raise ValueError(f"template_id must be one of {ids}, got {template_id!r}")
    row = table.loc[table["template_id"] == template_id].iloc[0]
    return {"system": row["system"] or None, "user": row["template"].replace("{prefix}", prefix)}


# ---------------------------------------------------------------------------
# Scoring: alpha_hat, beta_hat, lifted accuracy, the 2KL profile
# ---------------------------------------------------------------------------

_POSITION_KEYS = ["model", "text_id", "prefix_len", "position"]


def position_table(
    samples_with_predictions: pd.DataFrame, baseline: Iterable[str] | None = None
) -> pd.DataFrame:
    """Correctness per model and position (any template correct), before averaging.

    Parameters
    ----------
    samples_with_predictions : pandas.DataFrame
        One row per query: ``model``, ``text_id``, ``prefix_len``, ``position``
        and either ``correct`` (bool) or ``prediction`` and ``target`` (scored
        with :func:`is_correct`). Several rows of one position (the five
        templates of Table V) count as correct if any is (Section 4.1).
        Optional ``group`` ("popular"/"baseline"); optional ``error`` (a
        message, or a bool): rows with a non-empty message (or True) are
        dropped, and a position left with no row is not counted.
    baseline : iterable of str, optional
        Baseline text ids, used when there is no ``group`` column.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``text_id``, ``group``, ``prefix_len``, ``position``, ``correct``.
    """
    df = samples_with_predictions
    missing = [c for c in _POSITION_KEYS if c not in df.columns]
    if missing:
        raise ValueError(f"samples_with_predictions lacks columns {missing}; needs {_POSITION_KEYS}")
    if "correct" not in df.columns and not {"prediction", "target"} <= set(df.columns):
        raise ValueError("samples_with_predictions needs a 'correct' column or 'prediction' and 'target'")
    df = df.copy()
    if "error" in df.columns:
        err = df["error"]
        if pd.api.types.is_bool_dtype(err):
            has_error = err.to_numpy(dtype=bool)
        else:
            has_error = (err.notna() & (err.astype(str).str.strip() != "")).to_numpy(dtype=bool)
        df = df.loc[~has_error]
    if "correct" not in df.columns:
        df["correct"] = [is_correct(p, t) for p, t in zip(df["prediction"], df["target"])]
    if "group" not in df.columns:
        base = set(baseline or ())
        df["group"] = np.where(df["text_id"].isin(base), "baseline", "popular")
    bad = sorted(set(df["group"]) - set(GROUPS))
    if bad:
        raise ValueError(f"group must be one of {GROUPS}, got {bad}")
    df["correct"] = df["correct"].astype(bool)
    out = df.groupby(_POSITION_KEYS, sort=True).agg(group=("group", "first"), correct=("correct", "any"))
    out = out.reset_index()
    return out[["model", "text_id", "group", "prefix_len", "position", "correct"]]


def accuracy_table(
    samples_with_predictions: pd.DataFrame, baseline: Iterable[str] | None = None
) -> pd.DataFrame:
    """The subsampled accuracies :math:`\\hat\\alpha(M,T,l)` (Section 3.2).

    :math:`\\hat\\alpha(M,T,l) = |S_{T,l}|^{-1}\\sum_{i\\in S_{T,l}}
    \\mathbb 1[M(t_{i-l},\\dots,t_{i-1}) = t_i]`, the fraction of sampled
    positions whose next word the model returns (with several templates: by
    any of them, Section 4.1).

    Parameters
    ----------
    samples_with_predictions : pandas.DataFrame
        As for :func:`position_table`.
    baseline : iterable of str, optional
        Baseline text ids when the frame has no ``group`` column.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``text_id``, ``group``, ``prefix_len``, ``n`` (positions),
        ``correct`` (positions correct) and ``acc`` (:math:`\\hat\\alpha`).
    """
    pos = position_table(samples_with_predictions, baseline)
    keys = ["model", "text_id", "group", "prefix_len"]
    out = pos.groupby(keys, sort=True).agg(n=("correct", "size"), correct=("correct", "sum")).reset_index()
    out["correct"] = out["correct"].astype(int)
    out["acc"] = out["correct"] / out["n"]
    return out.sort_values(["model", "group", "text_id", "prefix_len"], ignore_index=True)


def baseline_accuracy(acc_table: pd.DataFrame) -> pd.DataFrame:
    """The baseline accuracy :math:`\\hat\\beta(M,l) = |\\mathcal B|^{-1}
    \\sum_{B\\in\\mathcal B}\\hat\\alpha(M,B,l)` (Eq. 2): the unweighted mean over
    the baseline texts.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``prefix_len``, ``beta``, ``n_texts``.
    """
    base = acc_table.loc[acc_table["group"] == "baseline"]
    if base.empty:
        raise ValueError("acc_table has no baseline rows (group == 'baseline'); beta needs baseline texts")
    out = base.groupby(["model", "prefix_len"], sort=True).agg(
        beta=("acc", "mean"), n_texts=("text_id", "nunique")
    )
    return out.reset_index()


def add_lift(acc_table: pd.DataFrame) -> pd.DataFrame:
    """Add :math:`\\hat\\beta(M,l)` and the lifted accuracy
    :math:`\\hat\\alpha^{\\ell}(M,T,l) = \\hat\\alpha^{r}(M,T,l) - \\hat\\beta(M,l)`
    (Section 3.2) to every row, as columns ``beta`` and ``lifted``.

    Raises ``ValueError`` naming the model and lengths that have accuracies but
    no baseline accuracy.
    """
    beta = baseline_accuracy(acc_table)[["model", "prefix_len", "beta"]]
    out = acc_table.merge(beta, on=["model", "prefix_len"], how="left")
    gaps = out.loc[out["beta"].isna(), ["model", "prefix_len"]].drop_duplicates()
    if not gaps.empty:
        raise ValueError(f"no baseline accuracy for (model, prefix_len) {list(map(tuple, gaps.to_numpy()))}")
    out["lifted"] = out["acc"] - out["beta"]
    return out


def accuracy_profile(acc_table: pd.DataFrame, lifted: bool = True) -> pd.DataFrame:
    """The accuracy profiles :math:`A_{\\mathcal T,\\mathcal L}(M)` (Section 3.2).

    :math:`A_{\\mathcal T,\\mathcal L}(M) = (\\hat\\alpha^{r}(M,T_j,l_k),
    \\hat\\alpha^{\\ell}(M,T_j,l_k))_{j=1..K,\\,k=1..L}\\in\\mathbb R^{2KL}`, over the
    popular (source) texts :math:`\\mathcal T` only; the baseline texts enter
    through :math:`\\hat\\beta`. With 37 texts and 6 lengths that is 444 features.

    Parameters
    ----------
    acc_table : pandas.DataFrame
        From :func:`accuracy_table` (baseline rows needed when ``lifted``).
    lifted : bool, default True
        Include the lifted half (the paper's 2KL profile); ``False`` gives the
        KL raw features only.

    Returns
    -------
    pandas.DataFrame
        Rows: models. Columns: MultiIndex (``text_id``, ``prefix_len``,
        ``kind``) with kind ``"raw"`` then ``"lifted"`` for each (text, length),
        texts sorted, lengths ascending. A missing measurement is NaN.
    """
    table = add_lift(acc_table) if lifted else acc_table.copy()
    pop = table.loc[table["group"] == "popular"]
    if pop.empty:
        raise ValueError("acc_table has no popular rows (group == 'popular')")
    long = pop[["model", "text_id", "prefix_len", "acc"]].rename(columns={"acc": "raw"})
    if lifted:
        long["lifted"] = pop["lifted"].to_numpy()
    kinds = ["raw", "lifted"] if lifted else ["raw"]
    melted = long.melt(id_vars=["model", "text_id", "prefix_len"], value_vars=kinds, var_name="kind")
    wide = melted.pivot_table(index="model", columns=["text_id", "prefix_len", "kind"], values="value",
                              aggfunc="first", dropna=False)
    texts = sorted(pop["text_id"].unique())
    lens = sorted(pop["prefix_len"].unique())
    cols = pd.MultiIndex.from_tuples([(t, int(ln), k) for t in texts for ln in lens for k in kinds],
                                     names=["text_id", "prefix_len", "kind"])
    wide = wide.reindex(columns=cols)
    wide.index.name = "model"
    return wide


# ---------------------------------------------------------------------------
# Absolute inference: PCA index z and the law theta = A exp(B z)
# ---------------------------------------------------------------------------


def _check_profiles(profiles: pd.DataFrame, what: str = "profiles", min_models: int = 3) -> np.ndarray:
    if not isinstance(profiles, pd.DataFrame):
        raise ValueError(f"{what} must be a DataFrame of models x features")
    if len(profiles) < min_models:
        raise ValueError(f"{what} must hold at least {min_models} reference models, got {len(profiles)}")
    if profiles.index.has_duplicates:
        dupes = sorted(profiles.index[profiles.index.duplicated()])
        raise ValueError(f"{what} has duplicated models: {dupes}")
    X = profiles.to_numpy(dtype=float)
    if np.isnan(X).any():
        bad = profiles.columns[np.isnan(X).any(axis=0)]
        raise ValueError(f"{what} has missing measurements in {len(bad)} features, e.g. {list(bad[:3])}")
    return X


@dataclass(frozen=True)
class PCAIndex:
    """The latent size index of Section 3.3: first principal component of the
    reference profiles. Unpacks as ``z, loadings, explained``.

    Attributes
    ----------
    z : pandas.Series
        :math:`z_M` of every reference model (centred: mean 0).
    loadings : pandas.Series
        Unit-norm first component :math:`w` over the profile features, signed so
        that larger :math:`z` means more accurate.
    explained : float
        Fraction of the variance of :math:`X` the first component explains.
    mean : pandas.Series
        Feature means of the reference profiles (the centre of the projection).
    flipped : bool
        Whether scikit-learn's sign was reversed.
    """

    z: pd.Series
    loadings: pd.Series
    explained: float
    mean: pd.Series
    flipped: bool

    def __iter__(self):
        return iter((self.z, self.loadings, self.explained))


def pca_index(profiles: pd.DataFrame) -> PCAIndex:
    """Latent size index :math:`z_M` from the feature matrix
    :math:`X\\in\\mathbb R^{N\\times 2KL}` of reference profiles (Section 3.3).

    PCA (scikit-learn, centred, not scaled, not whitened) keeps the first
    component; :math:`z_M = (A(M) - \\bar A)\\cdot w`. The sign of a principal
    component is arbitrary; here it is fixed so that :math:`z` correlates
    positively with each model's mean profile value (larger :math:`z` = more
    accurate), the orientation the increasing law :math:`A e^{Bz}` needs.
    Unscaled scores are what the paper's law implies: its :math:`A = 41.18`
    is the geometric mean of the Table I sizes, the OLS intercept when
    :math:`z` is centred on those models.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Reference models x features (:func:`accuracy_profile`), no missing values.

    Returns
    -------
    PCAIndex
        Unpacks as ``z, loadings, explained``.

    Raises
    ------
    ValueError
        Fewer than 3 models, missing values, or profiles that do not vary.
    """
    X = _check_profiles(profiles)
    center = X.mean(axis=0)
    if not np.any(np.abs(X - center) > 0):
        raise ValueError("profiles do not vary between models: no principal component")
    pca = PCA(n_components=1, svd_solver="full").fit(X)
    w = pca.components_[0].copy()
    z = (X - pca.mean_) @ w
    row_mean = X.mean(axis=1)
    flipped = False
    if np.std(z) > 0 and np.std(row_mean) > 0 and np.corrcoef(z, row_mean)[0, 1] < 0:
        w, z, flipped = -w, -z, True
    return PCAIndex(
        z=pd.Series(z, index=profiles.index, name="z"),
        loadings=pd.Series(w, index=profiles.columns, name="loading"),
        explained=float(pca.explained_variance_ratio_[0]),
        mean=pd.Series(pca.mean_, index=profiles.columns, name="mean"),
        flipped=flipped,
    )


def project(pca_result: PCAIndex, profile):
    """Project a model's profile on a fitted index: :math:`z = (A(M) - \\bar A)\\cdot w`.

    Parameters
    ----------
    pca_result : PCAIndex
        From :func:`pca_index` on the reference models.
    profile : pandas.Series or pandas.DataFrame
        One profile (features as index) or several (models x features); features
        are aligned by label and must include every feature of the index.

    Returns
    -------
    float or pandas.Series
        :math:`z_{closed}` (Section 3.3) of the model(s).
    """
    cols = pca_result.loadings.index
    if isinstance(profile, pd.Series):
        missing = cols.difference(profile.index)
        if len(missing):
            raise ValueError(f"profile lacks {len(missing)} features of the index, e.g. {list(missing[:3])}")
        x = profile.reindex(cols).to_numpy(dtype=float)
        if np.isnan(x).any():
            raise ValueError("profile has missing measurements")
        return float((x - pca_result.mean.to_numpy()) @ pca_result.loadings.to_numpy())
    if isinstance(profile, pd.DataFrame):
        missing = cols.difference(profile.columns)
        if len(missing):
            raise ValueError(f"profile lacks {len(missing)} features of the index, e.g. {list(missing[:3])}")
        X = profile.reindex(columns=cols).to_numpy(dtype=float)
        if np.isnan(X).any():
            raise ValueError("profile has missing measurements")
        z = (X - pca_result.mean.to_numpy()) @ pca_result.loadings.to_numpy()
        return pd.Series(z, index=profile.index, name="z")
    raise ValueError("profile must be a pandas Series (one model) or DataFrame (models x features)")


@dataclass(frozen=True)
class ScalingLaw:
    """The exponential law :math:`\\hat\\theta(z) = A e^{Bz}` (Eq. 3), fitted by OLS
    of :math:`\\ln\\theta_i = B z_i + c`, :math:`A = e^c` (Eq. 4).

    ``r2`` is the OLS :math:`R^2` on the log scale (the paper's 0.9504);
    ``se_b`` and ``se_c`` the OLS standard errors; ``n`` the number of models.
    """

    A: float
    B: float
    c: float
    r2: float
    n: int
    se_b: float = float("nan")
    se_c: float = float("nan")

    def predict(self, z):
        """:math:`\\hat\\theta(z) = A e^{Bz}` (same type as ``z``: scalar, array or Series)."""
        if isinstance(z, pd.Series):
            theta_hat = self.A * np.exp(self.B * z.to_numpy(dtype=float))
            return pd.Series(theta_hat, index=z.index, name="theta_hat")
        out = self.A * np.exp(self.B * np.asarray(z, dtype=float))
        return float(out) if np.ndim(out) == 0 else out


def _aligned_theta(z: pd.Series, theta) -> np.ndarray:
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = [m for m in z.index if m not in theta.index]
    if missing:
        raise ValueError(f"theta lacks the sizes of {missing}")
    t = theta.reindex(z.index).to_numpy(dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("theta must be positive parameter counts")
    return t


def fit_law(z, theta) -> ScalingLaw:
    """Fit :math:`\\ln\\theta_i = B z_i + c` by ordinary least squares (statsmodels), Eq. (4).

    Parameters
    ----------
    z : pandas.Series
        Latent index of the reference models (:func:`pca_index`), or an array
        with ``theta`` an array of the same length.
    theta : mapping, pandas.Series or array
        Known parameter counts :math:`\\theta_i` (any unit; the paper's are
        billions), aligned with ``z`` by model name.

    Returns
    -------
    ScalingLaw
        ``A`` :math:`=e^c`, ``B``, ``r2`` and ``predict(z)``.
    """
    if not isinstance(z, pd.Series):
        z = pd.Series(np.asarray(z, dtype=float))
        theta = pd.Series(np.asarray(theta, dtype=float))
    if len(z) < 3:
        raise ValueError(f"fit_law needs at least 3 reference models, got {len(z)}")
    t = _aligned_theta(z, theta)
    x = z.to_numpy(dtype=float)
    if np.ptp(x) == 0:
        raise ValueError("z does not vary between the reference models")
    res = sm.OLS(np.log(t), sm.add_constant(x, has_constant="add")).fit()
    c, b = (float(v) for v in res.params)
    se_c, se_b = (float(v) for v in res.bse)
    return ScalingLaw(A=float(np.exp(c)), B=b, c=c, r2=float(res.rsquared), n=len(x), se_b=se_b, se_c=se_c)


def absolute_lower_bound(theta_hat, factor: float = LOWER_BOUND_FACTOR):
    """The absolute lower bound :math:`0.5\\cdot\\hat\\theta(z)` (Section 4.2.1, "Abs. LB").

    The factor 0.5 is the floor of the factor-of-two band that held all LOO-CV
    predictions of the paper.
    """
    if isinstance(theta_hat, pd.Series):
        return theta_hat * factor
    out = np.asarray(theta_hat, dtype=float) * factor
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class LOOResult:
    """Leave-one-out cross-validation of the absolute estimator (Section 4.2.1).

    ``table``: one row per held-out model with ``theta``, ``z`` (its projection
    on the fold's axis), ``theta_hat``, ``ratio`` (theta_hat / theta),
    ``within_band`` (0.5 <= ratio <= 2), and the fold's ``A``, ``B``, ``flipped``.
    ``within_band``: the fraction inside the band (paper: 100%).
    ``r2_log``: :math:`1-\\sum(\\ln\\theta-\\ln\\hat\\theta)^2/\\sum(\\ln\\theta-\\overline{\\ln\\theta})^2`
    of the held-out predictions (paper: 0.9387).
    """

    table: pd.DataFrame
    within_band: float
    r2_log: float


def loo_cv(profiles: pd.DataFrame, theta, band: tuple[float, float] = BAND) -> LOOResult:
    """Leave-one-out cross-validation with the PCA refitted inside every fold.

    For each reference model :math:`i`: drop it, recompute the PCA axis on the
    other :math:`N-1` profiles (:func:`pca_index`), fit the law on their
    :math:`(z, \\ln\\theta)` (:func:`fit_law`), project the held-out profile
    (:func:`project`) and predict :math:`\\hat\\theta_i`. The held-out model's
    data enters only through its own projection.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Reference models x features, at least 4 (each fold keeps 3).
    theta : mapping or pandas.Series
        Known sizes by model.
    band : (float, float), default (0.5, 2)

    Returns
    -------
    LOOResult
    """
    _check_profiles(profiles, min_models=4)
    lo, hi = band
    t_all = _aligned_theta(pd.Series(0.0, index=profiles.index), theta)
    rows = []
    for i, model in enumerate(profiles.index):
        train = profiles.drop(index=model)
        fold = pca_index(train)
        law = fit_law(fold.z, theta)
        z_i = project(fold, profiles.loc[model])
        theta_hat = law.predict(z_i)
        ratio = theta_hat / t_all[i]
        rows.append(dict(model=model, theta=t_all[i], z=z_i, theta_hat=theta_hat, ratio=ratio,
                         within_band=bool(lo <= ratio <= hi), A=law.A, B=law.B, flipped=fold.flipped))
    table = pd.DataFrame(rows)
    log_t, log_hat = np.log(table["theta"]), np.log(table["theta_hat"])
    ss_tot = float(((log_t - log_t.mean()) ** 2).sum())
    r2 = 1 - float(((log_t - log_hat) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")
    return LOOResult(table=table, within_band=float(table["within_band"].mean()), r2_log=r2)


# ---------------------------------------------------------------------------
# Relative inference: block scores and the blocked sign-permutation test
# ---------------------------------------------------------------------------


def block_scores(profiles: pd.DataFrame, f: str, g: str, kind: str = "all") -> pd.Series:
    """Block scores :math:`s_j` of model ``f`` against model ``g``, one per text (Section 3.4).

    :math:`D(f,g) = A_{\\mathcal T,\\mathcal L}(f) - A_{\\mathcal T,\\mathcal L}(g)`;
    each source text :math:`T_j` is a block, and its entries are averaged:
    :math:`s_j = \\frac1L\\sum_{k=1}^{L}(\\hat\\alpha(f,T_j,l_k)-\\hat\\alpha(g,T_j,l_k))`.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Models x features (:func:`accuracy_profile`).
    f, g : str
        The compared model and the reference.
    kind : {"all", "raw", "lifted"}, default "all"
        Which accuracies :math:`\\hat\\alpha` of the block are averaged: every
        entry of :math:`D` in the block (raw and lifted, the block of the 2KL
        difference vector), or only the raw or only the lifted ones. The paper's
        formula writes :math:`\\hat\\alpha` without a superscript.

    Returns
    -------
    pandas.Series
        :math:`s_j` indexed by ``text_id``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, m in (("f", f), ("g", g)):
        if m not in profiles.index:
            raise ValueError(f"{name}={m!r} is not a model of the profiles; models: {list(profiles.index)}")
    d = profiles.loc[f] - profiles.loc[g]
    if kind != "all":
        kinds = d.index.get_level_values("kind")
        if kind not in set(kinds):
            raise ValueError(f"kind={kind!r}: the profiles have no {kind!r} features")
        d = d[kinds == kind]
    if d.isna().any():
        raise ValueError(f"missing measurements in the profiles of {f!r} or {g!r}")
    s = d.groupby(level="text_id", sort=True).mean()
    s.name = "s"
    return s


@dataclass(frozen=True)
class SignTestResult:
    """Result of :func:`sign_permutation_test`.

    ``statistic``: mean of the :math:`s_j`; ``pvalue``; ``k``: number of blocks
    :math:`K`; ``exact``: whether all :math:`2^K` flips were counted;
    ``n_flips``: :math:`2^K` if exact, else the Monte Carlo count; ``seed``:
    the Monte Carlo seed (None if exact).
    """

    statistic: float
    pvalue: float
    k: int
    exact: bool
    n_flips: int
    seed: int | None = None


def _flip_sums(s: np.ndarray) -> np.ndarray:
    """All :math:`2^K` sums :math:`\\sum_j \\epsilon_j s_j`, :math:`\\epsilon\\in\\{-1,1\\}^K`."""
    sums = np.zeros(1)
    for x in s:
        sums = np.concatenate([sums + x, sums - x])
    return sums


def _count_at_least_direct(s: np.ndarray, threshold: float) -> int:
    """Flips with sum >= threshold, by listing all 2^K sums."""
    return int(np.count_nonzero(_flip_sums(s) >= threshold))


def _count_at_least_split(s: np.ndarray, threshold: float) -> int:
    """Flips with sum >= threshold, by meet in the middle: every sum is a + b with
    a from the first half's 2^(K//2) sums and b from the second half's; for each
    a, count the sorted b >= threshold - a. Exact, O(2^(K/2) K)."""
    half = len(s) // 2
    left, right = _flip_sums(s[:half]), np.sort(_flip_sums(s[half:]))
    total = 0
    for start in range(0, len(left), _CHUNK):
        a = left[start : start + _CHUNK]
        total += int((len(right) - np.searchsorted(right, threshold - a, side="left")).sum())
    return total


def _count_at_least(s: np.ndarray, threshold: float) -> int:
    if len(s) <= _DIRECT_MAX_K:
        return _count_at_least_direct(s, threshold)
    return _count_at_least_split(s, threshold)


def sign_permutation_test(
    s,
    alternative: str = "greater",
    exact_max_k: int = 40,
    n_mc: int = 100_000,
    seed: int = 0,
) -> SignTestResult:
    """One-sided blocked sign-permutation test of the block scores (Section 3.4).

    :math:`H_0: E[s_j]\\le 0` against :math:`H_1: E[s_j] > 0`. Under the null the
    sign of each block score is symmetric noise, so the null distribution of the
    statistic :math:`\\bar s = K^{-1}\\sum_j s_j` is that of
    :math:`K^{-1}\\sum_j\\epsilon_j s_j` over the :math:`2^K` sign vectors
    :math:`\\epsilon` (each text flipped as a whole block). The p-value is the
    fraction of flips whose mean is at least the observed one (ties count,
    within a tolerance of :math:`10^{-9}\\sum_j|s_j|` for rounding).

    Parameters
    ----------
    s : array-like
        Block scores :math:`s_1..s_K` (:func:`block_scores`).
    alternative : {"greater", "less", "two-sided"}, default "greater"
        ``"two-sided"`` is :math:`\\min(1, 2\\min(p_{greater}, p_{less}))`, as
        ``scipy.stats.permutation_test``.
    exact_max_k : int, default 40
        Count all :math:`2^K` flips when :math:`K\\le` this (direct listing up to
        K = 16, then an exact meet-in-the-middle count); otherwise Monte Carlo.
    n_mc : int, default 100000
        Monte Carlo sign vectors; the p-value is :math:`(1 + \\#\\{\\ge\\}) / (1 + n_{mc})`.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for Monte Carlo.

    Returns
    -------
    SignTestResult
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    x = np.asarray(s, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("s must hold at least one block score")
    if not np.all(np.isfinite(x)):
        raise ValueError("s must be finite")
    if not _is_int(exact_max_k) or exact_max_k < 1 or exact_max_k > 60:
        raise ValueError(f"exact_max_k must be an integer in 1..60, got {exact_max_k!r}")
    if not _is_int(n_mc) or n_mc < 1:
        raise ValueError(f"n_mc must be a positive integer, got {n_mc!r}")
    k = x.size
    observed = float(x.sum())
    tol = 1e-9 * float(np.abs(x).sum())
    if k <= exact_max_k:
        total = 2**k
        p_g = _count_at_least(x, observed - tol) / total if alternative != "less" else float("nan")
        p_l = _count_at_least(-x, -observed - tol) / total if alternative != "greater" else float("nan")
        exact, n_flips, used_seed = True, total, None
    else:
        rng = np.random.default_rng(seed)
        ge = le = 0
        done = 0
        while done < n_mc:
            m = min(_CHUNK, n_mc - done)
            signs = rng.integers(0, 2, size=(m, k), dtype=np.int8) * 2 - 1
            sums = signs @ x
            ge += int(np.count_nonzero(sums >= observed - tol))
            le += int(np.count_nonzero(sums <= observed + tol))
            done += m
        p_g, p_l = (ge + 1) / (n_mc + 1), (le + 1) / (n_mc + 1)
        exact, n_flips, used_seed = False, n_mc, seed
    if alternative == "greater":
        p = p_g
    elif alternative == "less":
        p = p_l
    else:
        p = min(1.0, 2 * min(p_g, p_l))
    return SignTestResult(statistic=observed / k, pvalue=float(p), k=k, exact=exact, n_flips=n_flips,
                          seed=used_seed)


def pairwise_tests(
    profiles: pd.DataFrame,
    targets: Sequence[str] | None = None,
    references: Sequence[str] | None = None,
    kind: str = "all",
    alpha: float = PAPER_ALPHA,
    alternative: str = "greater",
    exact_max_k: int = 40,
    n_mc: int = 100_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The relative size test for every ordered pair (target f, reference g), f != g.

    With all 19 dense models as both targets and references this is the
    paper's 342 ordered pairs (Section 4.2.2). ``significant`` is the decision
    "f is larger than g": p-value :math:`\\le\\alpha_{sig}`.

    Returns
    -------
    pandas.DataFrame
        ``f``, ``g``, ``k``, ``mean_s``, ``pvalue``, ``exact``, ``significant``.
    """
    targets = list(profiles.index) if targets is None else list(targets)
    references = list(profiles.index) if references is None else list(references)
    unknown = sorted((set(targets) | set(references)) - set(profiles.index))
    if unknown:
        raise ValueError(
            f"targets/references {unknown} are not models of the profiles: {list(profiles.index)}"
        )
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    rows = []
    for f in targets:
        for g in references:
            if f == g:
                continue
            s = block_scores(profiles, f, g, kind)
            res = sign_permutation_test(s.to_numpy(), alternative, exact_max_k, n_mc, seed)
            rows.append(dict(f=f, g=g, k=res.k, mean_s=res.statistic, pvalue=res.pvalue, exact=res.exact,
                             significant=res.pvalue <= alpha))
    return pd.DataFrame(rows, columns=["f", "g", "k", "mean_s", "pvalue", "exact", "significant"])


def truly_larger(theta_f, theta_g, tau: float):
    """Ground truth of the relative evaluation: :math:`|f| > (1+\\tau)|g|` (Section 4.2.2)."""
    if tau < 0:
        raise ValueError(f"tau must be non-negative, got {tau!r}")
    out = np.asarray(theta_f, dtype=float) > (1 + tau) * np.asarray(theta_g, dtype=float)
    return bool(out) if out.ndim == 0 else out


def decision_metrics(decisions, truth) -> dict:
    """Precision, recall and accuracy of binary decisions against the truth.

    precision = TP / (TP + FP) (NaN when nothing is decided positive),
    recall = TP / (TP + FN) (NaN when nothing is truly positive),
    accuracy = (TP + TN) / N.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``accuracy``, ``tp``, ``fp``, ``fn``, ``tn``, ``n``.
    """
    d = np.asarray(decisions, dtype=bool).ravel()
    t = np.asarray(truth, dtype=bool).ravel()
    if d.shape != t.shape:
        raise ValueError(f"decisions and truth must have the same length, got {d.size} and {t.size}")
    if d.size == 0:
        raise ValueError("decisions must not be empty")
    tp = int(np.sum(d & t))
    fp = int(np.sum(d & ~t))
    fn = int(np.sum(~d & t))
    tn = int(np.sum(~d & ~t))
    return dict(
        precision=tp / (tp + fp) if tp + fp else float("nan"),
        recall=tp / (tp + fn) if tp + fn else float("nan"),
        accuracy=(tp + tn) / d.size,
        tp=tp, fp=fp, fn=fn, tn=tn, n=int(d.size),
    )


def tau_sweep(pair_tests: pd.DataFrame, theta, taus=None, alpha: float = PAPER_ALPHA) -> pd.DataFrame:
    """Precision, recall and accuracy of the relative test as functions of τ (Figure 3).

    The decision does not depend on τ (p-value :math:`\\le\\alpha`); the truth
    does: f is truly larger iff :math:`|f| > (1+\\tau)|g|`.

    Parameters
    ----------
    pair_tests : pandas.DataFrame
        From :func:`pairwise_tests` (columns ``f``, ``g``, ``pvalue``).
    theta : mapping or pandas.Series
        Known sizes of every model in the pairs.
    taus : array-like, optional
        Default 0.01, 0.02, ..., 0.70 (the paper's range).
    alpha : float, default 0.05

    Returns
    -------
    pandas.DataFrame
        ``tau``, ``precision``, ``recall``, ``accuracy``, ``tp``, ``fp``, ``fn``, ``tn``, ``n``.
    """
    taus = np.round(np.arange(1, 71) / 100, 2) if taus is None else np.asarray(taus, dtype=float)
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = sorted((set(pair_tests["f"]) | set(pair_tests["g"])) - set(theta.index))
    if missing:
        raise ValueError(f"theta lacks the sizes of {missing}")
    decided = pair_tests["pvalue"].to_numpy() <= alpha
    tf = theta.reindex(pair_tests["f"]).to_numpy()
    tg = theta.reindex(pair_tests["g"]).to_numpy()
    rows = [dict(tau=float(tau), **decision_metrics(decided, truly_larger(tf, tg, float(tau))))
            for tau in taus]
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RelativeBound:
    """The relative lower bound of a target: ``bound`` (size of the largest
    reference it beats significantly, NaN if none: the paper's "—"),
    ``reference`` (that model, or None) and ``n_beaten`` (references beaten)."""

    bound: float
    reference: str | None
    n_beaten: int


def relative_lower_bound(
    pair_tests: pd.DataFrame, f: str, theta, alpha: float = PAPER_ALPHA
) -> RelativeBound:
    """Rel. LB of model ``f`` (Section 4.3): the parameter count of the largest
    reference model over which ``f`` shows a significant advantage
    (:math:`p\\le\\alpha`). Under the lower-bound reading of Section 3.5,
    :math:`\\theta_{total}(f)\\ge|g|` for every such reference g.

    Parameters
    ----------
    pair_tests : pandas.DataFrame
        From :func:`pairwise_tests` with ``f`` among the targets.
    f : str
    theta : mapping or pandas.Series
        Sizes of the references.
    alpha : float, default 0.05
    """
    rows = pair_tests.loc[pair_tests["f"] == f]
    if rows.empty:
        raise ValueError(f"f={f!r} is not a target of pair_tests; targets: {sorted(set(pair_tests['f']))}")
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = sorted(set(rows["g"]) - set(theta.index))
    if missing:
        raise ValueError(f"theta lacks the sizes of references {missing}")
    beaten = rows.loc[rows["pvalue"] <= alpha, "g"]
    if beaten.empty:
        return RelativeBound(bound=float("nan"), reference=None, n_beaten=0)
    sizes = theta.reindex(beaten).sort_values(ascending=False, kind="stable")
    best = sorted(m for m in sizes.index if sizes[m] == sizes.iloc[0])[0]
    return RelativeBound(bound=float(sizes.iloc[0]), reference=best, n_beaten=int(len(beaten)))


def best_bound(absolute: float, relative: float) -> tuple[float, str]:
    """Best LB = max(Abs. LB, Rel. LB) and its source ``"Abs"`` or ``"Rel"`` (Tables II, III).

    A missing bound (NaN/None, e.g. no reference beaten) is ignored; a tie goes
    to ``"Rel"`` (a size actually beaten). Both missing give ``(nan, "")``.
    """
    a = float("nan") if absolute is None else float(absolute)
    r = float("nan") if relative is None else float(relative)
    if np.isnan(a) and np.isnan(r):
        return float("nan"), ""
    if np.isnan(r) or (not np.isnan(a) and a > r):
        return a, "Abs"
    return r, "Rel"


# ---------------------------------------------------------------------------
# Calibration of the test under a true null (beyond the paper)
# ---------------------------------------------------------------------------


def null_pvalues(
    positions: pd.DataFrame,
    model: str | None = None,
    n_rep: int = 200,
    kind: str = "all",
    seed: int = 0,
    exact_max_k: int = 40,
    n_mc: int = 10_000,
) -> np.ndarray:
    """p-values of the relative test between two pseudo-models of one model.

    In each replicate the sampled positions of every (text, length) cell are
    resampled twice with replacement (a bootstrap of :math:`S_{T,l}`), giving
    two pseudo-models :math:`f^*, g^*` with the same true accuracies; their
    block scores (:func:`block_scores` rule, ``kind``) are tested with
    :func:`sign_permutation_test`. :math:`f^*` and :math:`g^*` are exchangeable,
    so :math:`H_0` holds.

    Parameters
    ----------
    positions : pandas.DataFrame
        From :func:`position_table` (``model``, ``text_id``, ``group``,
        ``prefix_len``, ``position``, ``correct``).
    model : str, optional
        Which model's positions; required if there are several.
    n_rep : int, default 200
    kind : {"all", "raw", "lifted"}, default "all"
        As in :func:`block_scores` (the default of :func:`pairwise_tests`).
        Lifted kinds need baseline texts. Their :math:`s_j` share the term
        :math:`\\hat\\beta(f^*)-\\hat\\beta(g^*)`, so the blocks are not
        independent and the sign-flip null does not hold exactly: on synthetic
        data with 4 baseline texts the rate at :math:`\\alpha=0.05` is about 0.05
        for ``"raw"`` but well above it for ``"all"`` and ``"lifted"``.
    seed : int, default 0
        Seeds the resampling (and the tests' Monte Carlo, if any).

    Returns
    -------
    numpy.ndarray
        ``n_rep`` p-values.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not _is_int(n_rep) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    models = sorted(positions["model"].unique())
    if model is None:
        if len(models) != 1:
            raise ValueError(f"model must be one of {models} when positions hold several models")
        model = models[0]
    if model not in models:
        raise ValueError(f"model must be one of {models}, got {model!r}")
    pos = positions.loc[positions["model"] == model]
    rng = np.random.default_rng(seed)
    lens = sorted(pos["prefix_len"].unique())
    cells = {}
    for (text, group, ln), cell in pos.groupby(["text_id", "group", "prefix_len"], sort=True):
        c = cell["correct"].to_numpy(dtype=float)
        idx = rng.integers(0, len(c), size=(n_rep, 2, len(c)))
        cells[text, group, ln] = c[idx].mean(axis=2)  # (n_rep, 2): pseudo-models f*, g*
    popular = sorted({t for t, grp, _ in cells if grp == "popular"})
    baseline = sorted({t for t, grp, _ in cells if grp == "baseline"})
    if not popular:
        raise ValueError("positions hold no popular texts")
    try:
        raw = np.stack([np.stack([cells[t, "popular", ln] for ln in lens], axis=1) for t in popular], axis=1)
    except KeyError as err:
        raise ValueError(f"every popular text needs every prefix length; missing {err}") from None
    diff_raw = raw[..., 0] - raw[..., 1]  # (n_rep, K, L)
    if kind == "raw":
        s = diff_raw.mean(axis=2)
    else:
        if not baseline:
            raise ValueError(f"kind={kind!r} needs baseline texts in positions")
        beta = np.stack([np.stack([cells[t, "baseline", ln] for ln in lens], axis=1) for t in baseline],
                        axis=1).mean(axis=1)  # (n_rep, L, 2)
        diff_lifted = diff_raw - (beta[..., 0] - beta[..., 1])[:, None, :]
        s = diff_lifted.mean(axis=2) if kind == "lifted" else (diff_raw + diff_lifted).mean(axis=2) / 2
    return np.array([
        sign_permutation_test(s[r], "greater", exact_max_k, n_mc, seed + r).pvalue for r in range(n_rep)
    ])


def null_calibration(
    positions: pd.DataFrame,
    model: str | None = None,
    alphas: Sequence[float] = (0.01, 0.05, 0.1),
    n_rep: int = 200,
    kind: str = "all",
    seed: int = 0,
    exact_max_k: int = 40,
    n_mc: int = 10_000,
) -> pd.DataFrame:
    """Empirical false-positive rate of the relative test under a true null.

    The rate at which the test declares "f larger" between two bootstrap
    pseudo-models of one model (:func:`null_pvalues`) at each :math:`\\alpha`; a
    valid test keeps it at or below :math:`\\alpha` (up to Monte Carlo error,
    standard error :math:`\\sqrt{\\alpha(1-\\alpha)/n_{rep}}`).

    Returns
    -------
    pandas.DataFrame
        ``alpha``, ``false_positive_rate``, ``se``, ``n_rep``, ``kind``.
    """
    alphas = [float(a) for a in alphas]
    if not alphas or any(not 0 < a < 1 for a in alphas):
        raise ValueError(f"alphas must be in (0, 1), got {alphas}")
    p = null_pvalues(positions, model, n_rep, kind, seed, exact_max_k, n_mc)
    return pd.DataFrame([
        dict(alpha=a, false_positive_rate=float(np.mean(p <= a)), se=float(np.sqrt(a * (1 - a) / n_rep)),
             n_rep=n_rep, kind=kind)
        for a in alphas
    ])


def equal_size_false_positives(pair_tests: pd.DataFrame, theta, alphas: Sequence[float] = (0.01, 0.05, 0.1),
                               rtol: float = 0.0) -> pd.DataFrame:
    """False-positive rate of the test among ordered pairs of equal-size models.

    Pairs with :math:`|\\theta_f-\\theta_g|\\le rtol\\cdot\\max(\\theta_f,\\theta_g)`
    (Table I has five such groups: 405, 70, 27, 24, 12) have no size gap, so a
    significant "f larger" is a false positive by the paper's truth at any τ.

    Returns
    -------
    pandas.DataFrame
        ``alpha``, ``false_positive_rate``, ``n_pairs``.
    """
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    tf = theta.reindex(pair_tests["f"]).to_numpy()
    tg = theta.reindex(pair_tests["g"]).to_numpy()
    if np.isnan(tf).any() or np.isnan(tg).any():
        raise ValueError("theta lacks the size of some model in pair_tests")
    same = np.abs(tf - tg) <= rtol * np.maximum(tf, tg)
    p = pair_tests["pvalue"].to_numpy()[same]
    return pd.DataFrame([
        dict(alpha=float(a), false_positive_rate=float(np.mean(p <= a)) if p.size else float("nan"),
             n_pairs=int(p.size))
        for a in alphas
    ])


# ---------------------------------------------------------------------------
# Appendix B: do models agree on which texts they know best?
# ---------------------------------------------------------------------------


def _text_means(acc_table: pd.DataFrame, group: str) -> pd.DataFrame:
    if group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
    rows = acc_table.loc[acc_table["group"] == group]
    if rows.empty:
        raise ValueError(f"acc_table has no rows of group {group!r}")
    # rounded so that equal means computed in different orders tie
    return rows.pivot_table(index="model", columns="text_id", values="acc", aggfunc="mean").round(12)


def text_ranks(acc_table: pd.DataFrame, group: str = "popular") -> pd.DataFrame:
    """Per-model ranks of the texts (Appendix B): mean raw accuracy per text over
    all tested prefix lengths, rank 1 = highest, :math:`|\\mathcal T|` = lowest
    (ties, after rounding the means to 12 decimals, get the average rank).

    Returns
    -------
    pandas.DataFrame
        Models x texts of ranks.
    """
    return _text_means(acc_table, group).rank(axis=1, ascending=False, method="average")


def pairwise_spearman(acc_table: pd.DataFrame, group: str = "popular") -> pd.DataFrame:
    """Spearman rank correlation :math:`\\rho` of the text rankings of every model pair (Appendix B).

    ``scipy.stats.spearmanr`` of the two models' per-text mean accuracies (the
    same as the correlation of their ranks). A pair in which one model has the
    same accuracy on every text has no defined :math:`\\rho` (NaN).

    Returns
    -------
    pandas.DataFrame
        ``model_a``, ``model_b``, ``rho``, one row per unordered pair.
    """
    means = _text_means(acc_table, group)
    if means.isna().any().any():
        raise ValueError(f"some model lacks a {group} text; every model needs every text")
    rows = []
    for a, b in combinations(means.index, 2):
        x, y = means.loc[a].to_numpy(), means.loc[b].to_numpy()
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            rho = float("nan")
        else:
            rho = float(stats.spearmanr(x, y).statistic)
        rows.append(dict(model_a=a, model_b=b, rho=rho))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "rho"])


@dataclass(frozen=True)
class AssumptionCheck:
    """Appendix B: ``popular`` and ``baseline`` pairwise correlations
    (:func:`pairwise_spearman`), a ``summary`` per group (pairs, mean, min,
    fraction above 0.8, undefined pairs) and the Mann-Whitney U test between
    the two distributions (``mwu_statistic``, ``mwu_pvalue``; undefined
    correlations left out)."""

    popular: pd.DataFrame
    baseline: pd.DataFrame
    summary: pd.DataFrame
    mwu_statistic: float
    mwu_pvalue: float


def assumption_check(acc_table: pd.DataFrame, alternative: str = "two-sided",
                     strong: float = 0.8) -> AssumptionCheck:
    """Appendix B's check of Assumption 1: rank agreement on popular vs baseline texts.

    Parameters
    ----------
    acc_table : pandas.DataFrame
        From :func:`accuracy_table`, with popular and baseline texts.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        Of ``scipy.stats.mannwhitneyu`` (popular vs baseline). The paper
        describes a test of "whether values from one group are systematically
        larger than the other" without naming a side.
    strong : float, default 0.8
        Threshold of "strong agreement".
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    pop = pairwise_spearman(acc_table, "popular")
    base = pairwise_spearman(acc_table, "baseline")
    summary = pd.DataFrame([
        dict(group=name, n_pairs=len(df), mean_rho=float(df["rho"].mean()), min_rho=float(df["rho"].min()),
             frac_above=float((df["rho"] > strong).mean()) if len(df) else float("nan"),
             n_undefined=int(df["rho"].isna().sum()))
        for name, df in (("popular", pop), ("baseline", base))
    ])
    x, y = pop["rho"].dropna().to_numpy(), base["rho"].dropna().to_numpy()
    if x.size == 0 or y.size == 0:
        stat, p = float("nan"), float("nan")
    else:
        res = stats.mannwhitneyu(x, y, alternative=alternative)
        stat, p = float(res.statistic), float(res.pvalue)
    return AssumptionCheck(popular=pop, baseline=base, summary=summary, mwu_statistic=stat, mwu_pvalue=p)


def group_gap(acc_table: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Popular-minus-baseline accuracy gap per model, with a cluster-bootstrap 95%
    interval (texts resampled with replacement within each group, so positions of
    one text are never treated as independent). Beyond the paper, which reports no
    interval on the gap.

    Returns one row per model: ``popular``, ``baseline`` (mean α̂ over texts and
    lengths), ``gap``, ``ci_lo``, ``ci_hi``, ``n_popular``, ``n_baseline`` (texts).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for model, g in acc_table.groupby("model", sort=False):
        per_text = g.groupby(["group", "text_id"])["acc"].mean()
        pop = per_text.get("popular", pd.Series(dtype=float)).to_numpy()
        base = per_text.get("baseline", pd.Series(dtype=float)).to_numpy()
        if not len(pop) or not len(base):
            continue
        boots = (rng.choice(pop, (n_boot, len(pop))).mean(1) - rng.choice(base, (n_boot, len(base))).mean(1))
        rows.append({"model": model, "popular": pop.mean(), "baseline": base.mean(),
                     "gap": pop.mean() - base.mean(), "ci_lo": np.quantile(boots, 0.025),
                     "ci_hi": np.quantile(boots, 0.975), "n_popular": len(pop), "n_baseline": len(base)})
    return pd.DataFrame(rows)



# ---------------------------------------------------------------------------
# The chapter's steps (notebooks/size.md): each a call in a visible cell
# ---------------------------------------------------------------------------


def chapter_texts(params: Mapping) -> tuple[dict[str, str], dict[str, str]]:
    """The popular and baseline texts a run probes (all 41, or the profile's subset)."""
    from analysis.core import data

    popular, baseline = data.popular_texts(), data.baseline_texts()
    if params.get("popular_texts"):
        popular = {k: popular[k] for k in params["popular_texts"]}
    if params.get("baseline_texts"):
        baseline = {k: baseline[k] for k in params["baseline_texts"]}
    return popular, baseline


def chapter_templates(template_ids: Sequence[int]) -> pd.DataFrame:
    """The Table V templates a run's chat models answer."""
    t = templates()
    return t[t["template_id"].isin(template_ids)]


def probe_models(models: Mapping, samples: pd.DataFrame, prompt_templates: pd.DataFrame | None, mode: str,
                 max_new_tokens: int, label: str = "size probe") -> pd.DataFrame:
    """:func:`analysis.nextword.probe` for every loaded model (``{name: model}``), one frame."""
    from analysis.nextword import probe

    return pd.concat([probe(m, samples, prompt_templates, mode=mode, max_new_tokens=max_new_tokens,
                            progress=f"{name}: {label}") for name, m in models.items()], ignore_index=True)


def gap_sentences(gap: pd.DataFrame, models: Sequence[str]) -> str:
    """One sentence per model on its popular-vs-baseline gap; a model with no scorable
    answer on either group says so."""
    rows = gap.set_index("model") if len(gap) else pd.DataFrame()
    out = []
    for name in models:
        if name not in rows.index:
            out.append(f"For {name}, no gap can be computed: it has no scorable answer on the popular or "
                       "the baseline texts.")
            continue
        r = rows.loc[name]
        where = "above" if r.ci_lo > 0 else "below" if r.ci_hi < 0 else "not distinguishable from"
        out.append(f"For {name}, popular texts are predicted at {r.popular:.3f} and baseline texts at "
                   f"{r.baseline:.3f}: a gap of {r.gap:+.3f} "
                   f"(95% interval {r.ci_lo:+.3f} to {r.ci_hi:+.3f}), {where} zero.")
    return " ".join(out)


def lab_samples(corpus, prefix_lens: Sequence[int], n: int, seed: int = 0) -> pd.DataFrame:
    """Positions for the lab ladder: inside the trained excerpt window of each popular
    text in the lab corpus, and anywhere in the baseline stories it never saw."""
    from analysis.core import data

    manifest = corpus.manifest()
    windows = {r.text_id: (int(r.word_start), int(r.word_end))
               for r in manifest[manifest["kind"] == "popular"].itertuples()}
    popular = {k: v for k, v in data.popular_texts().items() if k in windows}
    baseline = data.baseline_texts()
    return sample_positions({**popular, **baseline}, prefix_lens, n, seed=seed, windows=windows,
                            baseline=list(baseline))


def agreement(acc: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """:func:`assumption_check` on the models that have an accuracy on every text of
    both groups, with a sentence naming the models left out; an empty table and the
    reason when fewer than two models qualify."""
    texts = acc.groupby("group")["text_id"].nunique() if len(acc) else pd.Series(dtype=int)
    per_model = acc.groupby(["model", "group"])["text_id"].nunique().unstack() if len(acc) else pd.DataFrame()
    complete = [m for m in per_model.index
                if all(per_model.loc[m].get(g, 0) == texts.get(g, -1) for g in GROUPS)]
    left_out = sorted(set(acc["model"]) - set(complete)) if len(acc) else []
    note = (f" Left out for lack of an answer on every text: {', '.join(left_out)}." if left_out else "")
    if len(complete) < 2:
        empty = pd.DataFrame(columns=["group", "n_pairs", "mean_rho", "min_rho", "frac_above", "n_undefined"])
        return empty, (f"Agreement needs two models with an answer on every text; this run has "
                       f"{len(complete)}." + note)
    check = assumption_check(acc[acc["model"].isin(complete)])
    return check.summary, f"Spearman correlations over {len(complete)} models." + note


@dataclass
class LadderMethod:
    """The whole method on a ladder of models of known size (the lab's)."""

    acc: pd.DataFrame
    theta: pd.Series
    profiles: pd.DataFrame
    pca: PCAIndex
    law: ScalingLaw
    loo: LOOResult
    pairs: pd.DataFrame
    sweep: pd.DataFrame
    bounds: pd.DataFrame
    gap: pd.DataFrame


def ladder_method(acc: pd.DataFrame, theta: pd.Series, alpha: float = PAPER_ALPHA, kind: str = "raw",
                  seed: int = 0) -> LadderMethod:
    """Profile, PCA index, law, leave-one-out, pairwise tests (block scores of
    ``kind``), τ sweep and every model's absolute, relative and best lower bound,
    on models whose true sizes ``theta`` (indexed by model name) are known."""
    profiles = accuracy_profile(acc)
    pca = pca_index(profiles)
    law = fit_law(pca.z, theta)
    loo = loo_cv(profiles, theta)
    pairs = pairwise_tests(profiles, alpha=alpha, kind=kind)
    sweep = tau_sweep(pairs, theta, alpha=alpha)
    held = loo.table.set_index("model")
    rows = []
    for name in theta.index:
        rel = relative_lower_bound(pairs, name, theta, alpha=alpha)
        abs_lb = absolute_lower_bound(held.loc[name, "theta_hat"])
        best, source = best_bound(abs_lb, rel.bound)
        rows.append({"model": name, "theta": theta[name], "theta_hat_loo": held.loc[name, "theta_hat"],
                     "abs_lb": abs_lb, "rel_lb": rel.bound, "best_lb": best, "source": source,
                     "valid": bool(best <= theta[name]) if np.isfinite(best) else True})
    return LadderMethod(acc, theta, profiles, pca, law, loo, pairs, sweep, pd.DataFrame(rows),
                        group_gap(acc, seed=seed))


#: R² at or above which the chapter says the index tracks size
TRACKS_R2 = 0.5


def law_verdict(method: LadderMethod, popular_copies: str) -> str:
    """Whether the latent index tracks size on the ladder, from R² and the
    popular-vs-baseline accuracy the ladder reaches."""
    r2 = method.law.r2
    pop, base = method.gap["popular"].mean(), method.gap["baseline"].mean()
    if r2 >= TRACKS_R2:
        return (f"On this ladder the index tracks size (R² = {r2:.2f}): the models predict the next word "
                f"inside their popular excerpts at {pop:.3f} on average and on the held-out stories at "
                f"{base:.3f}.")
    return (f"On this ladder the index does not track size (R² = {r2:.2f}, below {TRACKS_R2}). The "
            f"models predict the next word inside their popular excerpts at {pop:.3f} on average and on "
            f"the held-out stories at {base:.3f}; each excerpt is in the corpus {popular_copies} times. "
            "Where the profiles carry little memorization, the first component follows family and "
            "sampling noise more than size.")


def calibration(positions: pd.DataFrame, model: str, n_rep: int, seed: int = 0,
                kinds: Sequence[str] = ("all", "raw")) -> pd.DataFrame:
    """:func:`null_calibration` of ``model``'s own answers for each block-score kind;
    empty when the model has no scorable position."""
    if model not in set(positions["model"]):
        return pd.DataFrame(columns=["alpha", "false_positive_rate", "se", "n_rep", "kind"])
    return pd.concat([null_calibration(positions, model=model, n_rep=n_rep, kind=k, seed=seed)
                      for k in kinds], ignore_index=True)


def calibration_verdict(cal: pd.DataFrame, kind: str, alpha: float = PAPER_ALPHA) -> str:
    """Which block-score kinds hold their level at ``alpha`` (false-positive rate
    within two standard errors of α or below), and whether the kind this run uses does."""
    if cal.empty:
        return "The calibration could not run: the model it resamples has no scorable answer."
    at = cal[np.isclose(cal["alpha"], alpha)].set_index("kind")
    holds = {k: bool(r.false_positive_rate <= alpha + 2 * r.se) for k, r in at.iterrows()}
    parts = [f"{k} scores {at.loc[k, 'false_positive_rate']:.3f} ({'holds' if ok else 'exceeds'} its level)"
             for k, ok in holds.items()]
    text = f"At α = {alpha:g} the empirical false-positive rate is " + "; ".join(parts) + "."
    if kind in holds:
        text += (f" This run's pairwise tests use {kind} block scores, which "
                 f"{'hold' if holds[kind] else 'do not hold'} their level here.")
    return text


PARAMS = Declaration(
    "size",
    PROFILES,
    (
        lab_profile_param(),
        Param("models", "models whose next-word accuracy is probed", kind="models"),
        Param("n_per_text", "positions per text and prefix length for the models", kind="int", lo=1),
        Param("n_lab_per_text", "positions per text and prefix length for the lab ladder", kind="int", lo=1),
        Param("mode", "completion (raw prefix), chat (Table V templates) or auto (chat for chat models)",
              kind="choice", choices=MODES),
        Param("block_kind", "which accuracies a text block's score averages in the pairwise test: raw, "
              "lifted or all (both, the paper's profile)", kind="choice", choices=KINDS, default="raw"),
        Param("seed", "seed of the sampled positions and the bootstrap", kind="int", lo=0),
    ),
    profile_help={"smoke": "2 popular texts and 1 baseline, 3 positions (CI)",
                  "default": "all 41 texts, 24 positions per text and length",
                  "paper": "the paper's 100 positions and five templates (hours per local model)"},
)


def plan(params: Mapping) -> list:
    """The queries an execution at ``params`` sends, built as the chapter builds
    them, for :mod:`analysis.book.plan` to count: each model's probe (one query a
    position, or one a position and template in chat mode), then each lab ladder
    model's probe of the lab's positions. Loads, trains and calls nothing."""
    from analysis import nextword
    from analysis.lab.plan import lab_corpus, lab_ladder_names
    from analysis.models.queries import QueryGroup, is_chat

    popular, baseline = chapter_texts(params)
    samples = sample_positions({**popular, **baseline}, params["prefix_lens"], params["n_per_text"],
                               seed=params["seed"], baseline=list(baseline))
    templates = chapter_templates(params["template_ids"])
    groups = []
    for name in params["models"]:
        if nextword.uses_chat(is_chat(name), params["mode"]):
            for template_id, prompts in nextword.chat_prompts(samples, templates):
                groups.append(QueryGroup(f"probe (template {template_id})", name, prompts,
                                         params["max_new_tokens"]))
        else:
            groups.append(QueryGroup("probe", name, samples["prefix"].tolist(), params["max_new_tokens"]))
    lab = lab_samples(lab_corpus(params["lab_profile"]), params["prefix_lens"], params["n_lab_per_text"],
                      seed=params["seed"])
    groups += [QueryGroup("lab probe", name, lab["prefix"].tolist(), LAB_PROBE_TOKENS)
               for _, name in lab_ladder_names(params["lab_profile"])]
    return groups
