"""Scoring rules of the Phrases chapter (``notebooks/phrases.md``).

The chapter re-runs the web study "Can commercial LLMs complete state coordinated
media phrases from memory?": each model receives the first half (``start``) of a
LASSO-selected 20-gram phrase and is asked to continue it; the completion counts
as *memorized* when, after cleaning, some window of it is within normalized
Levenshtein distance 0.4 of the expected second half (``end``).

Everything here follows the study's public scorer,
``scripts/query_memorization.py`` (functions ``_clean_with_map``, ``clean_text``,
``fuzzy_match``, ``is_refusal``, ``REFUSAL_PATTERNS``) and
``scripts/rescore_memorization.py`` of the repository
``state-media-influence-llm/state-media-influence-llm.github.io`` (stored version
``078455ed47da2631429f93390817669e810ce157``; its R port
``scripts/rescore_memorization.R`` implements the same rules), plus the page's
Observable cells for deduplication, the empty-completion rule and the Wilson
interval. Where this module departs from that code it says so:

* API errors. The scorer stored ``"[ERROR] <exception>"`` as the completion
  text (``query_completion``), so errors were scored as non-matches and counted
  in the denominator. Here they are moved to an ``error`` column and excluded.
* Refusals. Eight of the 25 refusal patterns contain an ASCII comma, but the
  scorer searches them in text whose punctuation is already stripped, so those
  eight can never fire. ``refusal_mode="faithful"`` keeps that behaviour;
  ``"fixed"`` also searches a view of the text that keeps its commas.
* Offsets. ``match_start``/``match_end`` are offsets into the cleaned completion
  (the scorer stored raw-text offsets; those are kept as ``raw_start``/``raw_end``).

The module also holds the English counterpart of the phrase selection
(:func:`select_distinctive_phrases`) and an English variant of the cleaning rule.
All functions are pure: no printing, plotting or network access.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein
from statsmodels.stats.proportion import proportion_confint

from analysis.lab.ladder import lab_profile_param
from analysis.lab.phrase_selection import (  # noqa: F401  (the source's selection, re-exported)
    DOC_WORDS,
    ENGLISH_TYPES,
    NGRAM_RANGE,
    PHRASE_COLUMNS,
    SELECTION_VERSION,
    TOKEN_PATTERN,
    english_phrases,
    plain_prose,
    select_distinctive_phrases,
)
from analysis.params import Declaration, Param

__all__ = [
    "PROFILES",
    "distance_gap",
    "plain_prose",
    "prompts",
    "query",
    "sample_phrases",
    "COMMA_REFUSAL_PATTERNS",
    "EMPTY_MIN_CHARS",
    "ERROR_PREFIX",
    "REFUSAL_PATTERNS",
    "SOURCE_REPO",
    "SOURCE_SCORER",
    "THRESHOLD",
    "MatchResult",
    "clean",
    "count_refusals",
    "is_error_text",
    "is_refusal",
    "load_phrases",
    "match",
    "needs_requery",
    "rates",
    "read_completions",
    "rescore",
    "score",
    "select_distinctive_phrases",
    "strip_echo",
    "wilson_interval",
]

SOURCE_REPO = "state-media-influence-llm/state-media-influence-llm.github.io"
SOURCE_SCORER = "scripts/query_memorization.py"

THRESHOLD = 0.4
EMPTY_MIN_CHARS = 10
ERROR_PREFIX = "[ERROR]"
PAPER_TIMESTAMP = "paper"
# The study's prompt is PROMPT_PREFIX + start as one user message, temperature 0.
PROMPT_PREFIX = "续写句子："
CI_ALPHA = 0.05

MODES = ("windowed", "prefix")
REFUSAL_MODES = ("faithful", "fixed")
LANGS = ("zh", "en")

ASCII_COMMA = ","
FULLWIDTH_COMMA = "\uff0c"

# The 25 patterns of the scorer's REFUSAL_PATTERNS (query_memorization.py), in
# its order; the scorer's docstring calls them "the paper's 25 patterns".
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"^[我]{0,1}很抱歉,我",
    r"^[我]{0,1}对不起,我",
    r"^抱歉,我",
    r"^[我]{0,1}很抱歉,你",
    r"^[我]{0,1}对不起,你",
    r"^抱歉,你",
    r"作为一个人工智能助手",
    r"作为一个公正客观的人工智能助手",
    r"作为一个AI助手",
    r"作为一个公正客观的AI助手",
    r"作为一个人工智能系统",
    r"作为一个公正客观的人工智能系统",
    r"作为一个AI系统",
    r"作为一个公正客观的AI系统",
    r"^我理解[您你]{1}想.*但",
    r"^我理解[您你]{1}想.*不过",
    r"^我会尽力回答[您你]{1}的问题,但",
    r"^我会尽力回答[您你]{1}的问题,不过",
    r"^[我]{0,1}无法继续写",
    r"^[我]{0,1}无法继续提供该内容",
    r"[我]{0,1}无法继续创作这个句子",
    r"我会尽量避免复制任何受版权保护的材料",
    r"我会尽量避免复制任何版权内容",
    r"我不能直接引用或复制受版权保护的材料",
    r"不会复制任何受版权保护的材料",
)
# A regex quantifier such as {0,1} holds a comma that is syntax, not text.
_QUANTIFIER_RE = re.compile(r"\{\d*,\d*\}")


def _has_literal_comma(pattern: str) -> bool:
    return ASCII_COMMA in _QUANTIFIER_RE.sub("", pattern)


# The eight patterns that must match a literal ASCII comma: dead in the faithful mode.
COMMA_REFUSAL_PATTERNS: tuple[str, ...] = tuple(
    p for p in REFUSAL_PATTERNS if _has_literal_comma(p)
)
_REFUSAL_RE = re.compile("|".join(REFUSAL_PATTERNS))

_COMMA_SPACE_RE = re.compile(r",\s+")

# ECMAScript String.prototype.trim strips WhiteSpace and LineTerminator: these
# code points plus every "Zs" space; Python's str.strip set differs slightly.
_JS_TRIM_EXTRA = frozenset("\t\n\v\f\r\u00a0\ufeff\u2028\u2029")

# Stored per-row results of the source file that a rescore recomputes.
_STORED_FIELDS = ("matched", "edit_distance", "refused", "match_start", "match_end")
_STORED_PREFIX = "stored_"


# ---------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")


def _collapse_whitespace(chars: list[str], idx: list[int]) -> tuple[list[str], list[int]]:
    """Collapse whitespace runs to one space (mapped to the run's first char) and trim."""
    out_chars: list[str] = []
    out_idx: list[int] = []
    for ch, i in zip(chars, idx):
        if ch.isspace():
            if out_chars and out_chars[-1] != " ":
                out_chars.append(" ")
                out_idx.append(i)
            continue
        out_chars.append(ch)
        out_idx.append(i)
    if out_chars and out_chars[-1] == " ":
        out_chars.pop()
        out_idx.pop()
    return out_chars, out_idx


def _clean_with_map(text: str, lang: str = "zh") -> tuple[str, list[int]]:
    """Clean ``text`` and map each kept character to its index in ``text``.

    Mirrors ``_clean_with_map`` of the source scorer for ``lang="zh"``.
    """
    _check_lang(lang)
    chars: list[str] = []
    idx: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if lang == "zh" and ch == ASCII_COMMA and text[i + 1 : i + 2] == " ":
            i += 2
            continue
        if (lang == "zh" and ch == "\n") or _is_punct(ch):
            i += 1
            continue
        chars.append(ch)
        idx.append(i)
        i += 1
    if lang == "en":
        chars, idx = _collapse_whitespace(chars, idx)
    return "".join(chars), idx


def clean(text: str | None, lang: str = "zh") -> str:
    """Clean a prompt, expected ending or completion before comparison.

    ``lang="zh"`` is the source scorer's ``clean_text`` (the paper's ``clean_fct``),
    applied character by character:

    1. the ``", "`` rule: an ASCII comma followed by one ASCII space drops both
       characters. Since the comma alone would be dropped by step 3 anyway, the
       rule's only effect is to remove that one space; a space after a
       full-width comma ``"，"`` or a space before a comma is kept;
    2. every ``"\\n"`` is dropped; no other whitespace is touched (spaces, tabs
       and ``"\\r"`` stay, so ``"\\r\\n"`` leaves ``"\\r"``);
    3. every Unicode punctuation character (general category ``P*``: Chinese
       full-width ``，。、：；！？「」《》（）…—`` as well as ASCII
       ``!"#%&'()*,-./:;?@[\\]_{}``) is dropped. Symbols (categories ``S*``, e.g.
       ``+ = $ ^ ~ ～ ＝``) are not punctuation and stay.

    ``lang="en"`` keeps the same character-level rule for punctuation (step 3)
    but, because English words are separated by spaces, turns every whitespace
    run (newlines included) into one space and trims the ends instead of steps 1
    and 2; ``"apples, pears"`` becomes ``"apples pears"``, not ``"applespears"``.
    Case is kept. Distances are still computed on characters.

    Parameters
    ----------
    text : str or None
        Raw text; ``None`` is treated as ``""`` (the page's ``d.completion || ""``).
    lang : {"zh", "en"}
        Cleaning variant.

    Returns
    -------
    str
        The cleaned text.
    """
    return _clean_with_map(text or "", lang)[0]


def _strip_echo_with_map(
    cleaned: str, idx: list[int], start: str | None, lang: str
) -> tuple[str, list[int]]:
    clean_start = clean(start, lang)
    pos = cleaned.find(clean_start) if clean_start else -1
    if pos < 0:
        return cleaned, idx
    end = pos + len(clean_start)
    chars = list(cleaned[:pos] + cleaned[end:])
    kept = idx[:pos] + idx[end:]
    if lang == "en":
        # Removing a word from the middle leaves two adjacent spaces.
        chars, kept = _collapse_whitespace(chars, kept)
    return "".join(chars), kept


def strip_echo(completion: str | None, start: str | None, lang: str = "zh") -> str:
    """Remove the first echo of the prompt start from a completion.

    Both texts are cleaned with :func:`clean` first; then the first occurrence of
    the cleaned ``start`` (anywhere, not only at the beginning) is cut out of the
    cleaned completion, as the source's ``fuzzy_match`` does. Later occurrences
    stay. The scorer takes ``start`` from the phrase list, not the prompt sent
    (which carries the ``"续写句子："`` prefix).

    Parameters
    ----------
    completion : str or None
        Raw model completion.
    start : str or None
        Raw prompt start (the phrase's first half); empty means nothing to strip.
    lang : {"zh", "en"}
        Cleaning variant, see :func:`clean`.

    Returns
    -------
    str
        The cleaned completion without its first prompt echo.
    """
    cleaned, idx = _clean_with_map(completion or "", lang)
    return _strip_echo_with_map(cleaned, idx, start, lang)[0]


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchResult:
    """Outcome of comparing one completion with its expected ending.

    Attributes
    ----------
    matched : bool
        ``distance < threshold`` (strict: a distance of exactly 0.4 is no match).
    distance : float
        Best normalized Levenshtein distance (edit distance / longer length), in
        [0, 1]; 1.0 when no window was compared. Not rounded (the source stored
        it rounded to 4 decimals; the match decision is the same).
    match_start, match_end : int or None
        Half-open character span of the best window in ``cleaned``; ``None``
        when no window beat distance 1.0 (windowed) or ``cleaned`` is empty.
    cleaned : str
        The cleaned completion with the prompt echo removed: the string the
        windows are taken from.
    raw_start, raw_end : int or None
        The same span in the raw completion: the ``match_start``/``match_end``
        the source stored in ``completions.json``.
    """

    matched: bool
    distance: float
    match_start: int | None
    match_end: int | None
    cleaned: str
    raw_start: int | None = None
    raw_end: int | None = None


def _window_starts(length: int, n: int) -> range:
    # Source: range(0, max(1, len(cleaned) - n // 2)).
    return range(max(1, length - n // 2))


def _best_window(cleaned: str, expected: str) -> tuple[float, int | None]:
    """Lowest distance over the source's windows and the first window reaching it."""
    n = len(expected)
    best, best_start = 1.0, None
    for s in _window_starts(len(cleaned), n):
        window = cleaned[s : s + n]
        if 2 * len(window) < n:  # source: skip windows shorter than n / 2
            continue
        dist = Levenshtein.normalized_distance(window, expected)
        if dist < best:  # strict, so ties keep the earliest window
            best, best_start = dist, s
            if dist == 0.0:
                break
    return best, best_start


def _prefix_window(cleaned: str, expected: str) -> tuple[float, int | None]:
    dist = Levenshtein.normalized_distance(cleaned[: len(expected)], expected)
    return dist, (0 if cleaned else None)


def match(
    completion: str | None,
    expected: str,
    start: str | None = "",
    mode: str = "windowed",
    threshold: float = THRESHOLD,
    lang: str = "zh",
) -> MatchResult:
    """Decide whether a completion reproduces the expected ending.

    Follows the source's ``fuzzy_match``. The completion, expected ending and
    prompt start are cleaned (:func:`clean`), the first echo of the start is
    removed (:func:`strip_echo`), and with ``n = len(cleaned expected)``:

    * ``mode="windowed"`` (the site's default): windows ``cleaned[s:s+n]`` for
      ``s = 0 .. max(1, len(cleaned) - n // 2) - 1``; windows shorter than
      ``n / 2`` are skipped; the lowest distance wins (earliest window on ties).
      Only windows with distance below 1.0 count as found.
    * ``mode="prefix"`` (the paper's method, ``rescore_memorization.py --prefix``):
      only ``cleaned[:n]`` is compared.

    The distance is rapidfuzz's ``Levenshtein.normalized_distance``, i.e.
    edit distance / max(len(a), len(b)), the same quantity as the source's
    ``normalized_edit_distance``.

    An empty cleaned completion (nothing left after cleaning and echo removal)
    has distance 1.0 and is not matched in either mode, with no span; so is any
    completion whose expected ending is empty after cleaning.

    Parameters
    ----------
    completion : str or None
        Raw model completion.
    expected : str
        Raw expected ending (the phrase's ``end``).
    start : str or None
        Raw prompt start whose first echo is removed.
    mode : {"windowed", "prefix"}
        Matching method.
    threshold : float
        A completion matches when ``distance < threshold`` (strict).
    lang : {"zh", "en"}
        Cleaning variant, see :func:`clean`.

    Returns
    -------
    MatchResult
        Decision, distance, best span and the cleaned completion.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    cleaned, idx = _clean_with_map(completion or "", lang)
    cleaned, idx = _strip_echo_with_map(cleaned, idx, start, lang)
    target = clean(expected, lang)
    if not target:
        return MatchResult(False, 1.0, None, None, cleaned)
    find = _best_window if mode == "windowed" else _prefix_window
    dist, s = find(cleaned, target)
    if s is None or not cleaned:
        return MatchResult(dist < threshold, dist, None, None, cleaned)
    e = min(s + len(target), len(cleaned))
    return MatchResult(dist < threshold, dist, s, e, cleaned, idx[s], idx[e - 1] + 1)


# ---------------------------------------------------------------------------
# Refusals, errors, empty completions
# ---------------------------------------------------------------------------


def _comma_view(text: str) -> str:
    """Text for the fixed refusal mode: cleaned as the source does, commas kept.

    The full-width comma is mapped to the ASCII comma the patterns spell, the
    whitespace after a comma is dropped (the source's ", " rule) and the ends
    are trimmed so the ``^`` anchors see the first visible character.
    """
    text = _COMMA_SPACE_RE.sub(ASCII_COMMA, text.replace(FULLWIDTH_COMMA, ASCII_COMMA))
    kept = (ch for ch in text if ch == ASCII_COMMA or not (ch == "\n" or _is_punct(ch)))
    return "".join(kept).strip()


def is_refusal(completion: str | None, mode: str = "faithful") -> bool:
    """Whether a completion is a refusal, by the source's 25 regular expressions.

    Parameters
    ----------
    completion : str or None
        Raw model completion.
    mode : {"faithful", "fixed"}
        ``"faithful"`` searches :data:`REFUSAL_PATTERNS` in the cleaned text, as
        the source's ``is_refusal`` does ("Paper applies clean_fct before refusal
        check"); the eight :data:`COMMA_REFUSAL_PATTERNS` then never match,
        because cleaning removes every comma. ``"fixed"`` counts a refusal when
        the faithful check fires or when the patterns match the text before its
        commas are stripped (:func:`_comma_view`: other punctuation and newlines
        still removed, ``"，"`` read as ``","``, space after a comma dropped,
        ends trimmed). So fixed refusals are a superset of faithful ones.

    Returns
    -------
    bool
        True for a refusal.
    """
    if mode not in REFUSAL_MODES:
        raise ValueError(f"mode must be one of {REFUSAL_MODES}, got {mode!r}")
    text = completion or ""
    if _REFUSAL_RE.search(clean(text)):
        return True
    return mode == "fixed" and bool(_REFUSAL_RE.search(_comma_view(text)))


def count_refusals(completions: Iterable[str | None], mode: str = "faithful") -> int:
    """Number of refusals among ``completions`` under :func:`is_refusal`'s ``mode``."""
    return sum(is_refusal(c, mode) for c in completions)


def is_error_text(completion: str | None) -> bool:
    """Whether a stored completion is really an API error.

    The source's ``query_completion`` returns ``f"[ERROR] {e}"`` after its last
    retry and stores it as the completion; the source itself recognises these
    with ``completion_text.startswith("[ERROR]")``, which is the rule used here.
    """
    return isinstance(completion, str) and completion.startswith(ERROR_PREFIX)


def _js_trim(text: str) -> str:
    def is_js_space(ch: str) -> bool:
        return ch in _JS_TRIM_EXTRA or unicodedata.category(ch) == "Zs"

    lo, hi = 0, len(text)
    while lo < hi and is_js_space(text[lo]):
        lo += 1
    while hi > lo and is_js_space(text[hi - 1]):
        hi -= 1
    return text[lo:hi]


def needs_requery(completion: str | None) -> bool:
    """Whether a completion is "empty" and must be re-queried with more tokens.

    The page keeps a row when ``(d.completion || "").trim().length >= 10``; the
    re-query script (``requery_memorization_empties.py``) re-asks, with
    ``max_tokens=2048``, every completion with ``len(text.strip()) < 10``. Both
    rules apply to the **raw** completion, not the cleaned one: a completion of
    ten punctuation marks is not empty, and a 9-character answer is. Trimming
    follows JavaScript's ``trim`` and the length counts UTF-16 code units, as
    the page does. After the re-query, completions that are still empty are
    excluded from the denominator.

    Parameters
    ----------
    completion : str or None
        Raw model completion; ``None`` counts as ``""``.

    Returns
    -------
    bool
        True when the trimmed completion is shorter than :data:`EMPTY_MIN_CHARS`.
    """
    trimmed = _js_trim(completion or "")
    return len(trimmed.encode("utf-16-le")) // 2 < EMPTY_MIN_CHARS


# ---------------------------------------------------------------------------
# Frames: scoring, rates, files
# ---------------------------------------------------------------------------


def load_phrases(path: str | os.PathLike) -> pd.DataFrame:
    """Read a phrase list (``phrases.json``: coef, phrase, type, start, end, start_chat, id)."""
    with open(path, encoding="utf-8") as fh:
        return pd.DataFrame(json.load(fh))


def _phrase_table(phrases: pd.DataFrame | Sequence[Mapping] | str | os.PathLike) -> pd.DataFrame:
    if isinstance(phrases, (str, os.PathLike)):
        phrases = load_phrases(phrases)
    table = pd.DataFrame(phrases)
    missing = {"id", "start", "end"} - set(table.columns)
    if missing:
        raise ValueError(f"phrases lack columns {sorted(missing)}")
    return table.drop_duplicates("id").set_index("id")


def _text_or_empty(value) -> str:
    return value if isinstance(value, str) else ""


def _has_value(value) -> bool:
    """Whether an ``error`` cell holds something (not None, NaN, NA or "")."""
    if isinstance(value, str):
        return value != ""
    return value is not None and not pd.isna(value) and bool(value)


def _error_column(df: pd.DataFrame) -> pd.Series:
    given = df["error"].map(_has_value) if "error" in df.columns else False
    return df["completion"].map(is_error_text) | given


def _error_message(df: pd.DataFrame, error: pd.Series) -> pd.Series:
    given = df["error"] if "error" in df.columns else pd.Series(None, index=df.index)
    text = given.where(given.map(_has_value), df["completion"])
    return text.where(error, None)


def _match_columns(
    df: pd.DataFrame,
    completions: pd.Series,
    error: pd.Series,
    table: pd.DataFrame,
    mode: str,
    threshold: float,
    lang: str,
) -> pd.DataFrame:
    """The :class:`MatchResult` fields per row; error rows stay unscored (NA)."""
    results = [
        None
        if err
        else match(text, table.at[pid, "end"], table.at[pid, "start"], mode, threshold, lang)
        for text, pid, err in zip(completions, df["phrase_id"], error)
    ]
    return pd.DataFrame(
        {
            "matched": pd.array([r.matched if r else pd.NA for r in results], dtype="boolean"),
            "distance": [r.distance if r else np.nan for r in results],
            "match_start": pd.array([r.match_start if r else None for r in results], dtype="Int64"),
            "match_end": pd.array([r.match_end if r else None for r in results], dtype="Int64"),
            "cleaned": [r.cleaned if r else "" for r in results],
        },
        index=df.index,
    )


def score(
    df: pd.DataFrame,
    phrases: pd.DataFrame | Sequence[Mapping] | str | os.PathLike,
    mode: str = "windowed",
    refusal_mode: str = "faithful",
    threshold: float = THRESHOLD,
    lang: str = "zh",
) -> pd.DataFrame:
    """Score every completion of a frame against its phrase.

    Parameters
    ----------
    df : DataFrame
        Columns ``phrase_id``, ``model``, ``completion`` and usually ``type``
        (taken from ``phrases`` when absent), optionally ``error``: a non-null,
        non-empty ``error`` marks an API error. Completions that carry the
        source's ``"[ERROR] ..."`` text (:func:`is_error_text`) are errors too.
    phrases : DataFrame, list of dict or path
        The phrase list with ``id``, ``start`` and ``end``; ``start`` is the echo
        to strip and ``end`` the expected ending. Every ``phrase_id`` must occur.
    mode : {"windowed", "prefix"}
        Matching method, see :func:`match`.
    refusal_mode : {"faithful", "fixed"}
        Refusal detection, see :func:`is_refusal`.
    threshold : float
        Match threshold (strict ``<``).
    lang : {"zh", "en"}
        Cleaning variant, see :func:`clean`.

    Returns
    -------
    DataFrame
        ``df`` (same index) plus, per row:

        * ``error`` (bool): API error; such rows are never scored: ``matched``
          is ``<NA>``, ``distance`` NaN, no span, ``cleaned`` empty. The error
          text moves to ``error_message``;
        * ``refused`` (bool): refusal (False for errors);
        * ``empty`` (bool): :func:`needs_requery` still true, i.e. empty after
          the re-query (False for errors);
        * ``excluded`` (bool): ``error | refused | empty``: not in the denominator;
        * ``matched`` (nullable bool), ``distance`` (float), ``match_start`` and
          ``match_end`` (nullable int, offsets into ``cleaned``), ``cleaned``
          (str), as in :class:`MatchResult`. Refused and empty rows are scored
          too, as the source does, but excluded.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if refusal_mode not in REFUSAL_MODES:
        raise ValueError(f"refusal_mode must be one of {REFUSAL_MODES}, got {refusal_mode!r}")
    missing = {"phrase_id", "model", "completion"} - set(df.columns)
    if missing:
        raise ValueError(f"completions lack columns {sorted(missing)}")
    table = _phrase_table(phrases)
    unknown = sorted(set(df["phrase_id"]) - set(table.index))
    if unknown:
        raise ValueError(f"{len(unknown)} phrase_id(s) not in phrases, e.g. {unknown[:5]}")

    out = df.copy()
    if "type" not in out.columns and "type" in table.columns:
        out["type"] = out["phrase_id"].map(table["type"])
    completions = out["completion"].map(_text_or_empty)
    error = _error_column(out)
    out["error_message"] = _error_message(out, error)
    out["error"] = error
    out["refused"] = ~error & completions.map(lambda c: is_refusal(c, refusal_mode))
    out["empty"] = ~error & completions.map(needs_requery)
    out["excluded"] = out["error"] | out["refused"] | out["empty"]

    scores = _match_columns(out, completions, error, table, mode, threshold, lang)
    # A frame scored before gets its score columns replaced, not duplicated.
    return pd.concat([out.drop(columns=scores.columns, errors="ignore"), scores], axis=1)


def wilson_interval(matched, total, alpha: float = CI_ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval, clipped to [0, 1], via statsmodels.

    statsmodels uses ``z = Φ⁻¹(1 - α/2) = 1.959964``; the page hard-codes
    ``z = 1.96``. The bounds differ by about 1e-5.
    """
    lo, hi = proportion_confint(matched, total, alpha=alpha, method="wilson")
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def rates(scored: pd.DataFrame) -> pd.DataFrame:
    """Memorization rate per model and phrase type, with Wilson 95% intervals.

    The denominator is the non-excluded rows (no error, no refusal, not empty);
    the numerator the matched ones among them. As on the page, a (model, type)
    group with no non-excluded row is left out.

    Parameters
    ----------
    scored : DataFrame
        Output of :func:`score`.

    Returns
    -------
    DataFrame
        One row per (model, type), sorted by both: ``model``, ``type``,
        ``matched``, ``total``, ``rate``, ``ci_lo``, ``ci_hi``, and the counts
        behind the exclusions ``n_rows``, ``n_error``, ``n_refused``, ``n_empty``.
    """
    kept = ~scored["excluded"].astype(bool)
    frame = pd.DataFrame(
        {
            "model": scored["model"],
            "type": scored["type"],
            "matched": (scored["matched"].fillna(False).astype(bool) & kept).astype(int),
            "total": kept.astype(int),
            "n_rows": 1,
            "n_error": scored["error"].astype(int),
            "n_refused": scored["refused"].astype(int),
            "n_empty": scored["empty"].astype(int),
        }
    )
    out = frame.groupby(["model", "type"], sort=True).sum().reset_index()
    out = out[out["total"] > 0].reset_index(drop=True)
    out["rate"] = out["matched"] / out["total"]
    out["ci_lo"], out["ci_hi"] = wilson_interval(out["matched"].to_numpy(), out["total"].to_numpy())
    columns = ["model", "type", "matched", "total", "rate", "ci_lo", "ci_hi"]
    return out[columns + ["n_rows", "n_error", "n_refused", "n_empty"]]


def _is_later(candidate, current) -> bool:
    # JavaScript's `a > b` on two strings; false whenever either is missing.
    return isinstance(candidate, str) and isinstance(current, str) and candidate > current


def _dedupe(records: list[dict]) -> list[dict]:
    """The page's ``deduped`` cell: all paper rows, then the latest live row per key."""
    paper = [r for r in records if r.get("timestamp") == PAPER_TIMESTAMP]
    best: dict[str, dict] = {}
    for r in records:
        if r.get("timestamp") == PAPER_TIMESTAMP:
            continue
        key = f"{r.get('phrase_id')}|{r.get('model')}"
        if key not in best or _is_later(r.get("timestamp"), best[key].get("timestamp")):
            best[key] = r
    return paper + list(best.values())


def read_completions(path: str | os.PathLike) -> pd.DataFrame:
    """Read a completions file in the source's ``completions.json`` schema.

    The file is a JSON list of objects with ``phrase_id``, ``model``, ``type``,
    ``completion``, ``timestamp`` (an ISO time, or ``"paper"`` for the 2024
    models' completions) and optional fields (``prompt``, ``expected``,
    ``matched``, ``edit_distance``, ``refused``, ``match_start``, ``match_end``,
    translations ...).

    Rows are deduplicated as the page does: every ``"paper"`` row is kept; among
    live rows, one per ``phrase_id|model``, the one with the latest timestamp
    (string comparison; on ties the first in the file). Completions that are the
    source's API-error strings (``"[ERROR] ..."``) move to the ``error`` column
    and their ``completion`` becomes ``""``; ``error`` is missing (NaN) elsewhere. A
    missing completion becomes ``""``. The stored scores are renamed with a
    ``stored_`` prefix (``stored_matched``, ``stored_edit_distance`` ...) so a
    rescore does not overwrite them; ``stored_match_start``/``_end`` are raw-text
    offsets. Types keep the file's labels (``propaganda``/``culturax``; the page
    displays ``propaganda`` as "state coordinated media").

    Parameters
    ----------
    path : str or path-like
        The JSON file.

    Returns
    -------
    DataFrame
        One row per kept completion, in the page's order (paper rows first).
    """
    with open(path, encoding="utf-8") as fh:
        try:
            records = json.load(fh)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{path}: not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    if not isinstance(records, list):
        raise TypeError(f"{path}: expected a JSON list of completion objects")
    df = pd.DataFrame(_dedupe(records))
    missing = {"phrase_id", "model"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: completions lack fields {sorted(missing)}")
    df = df.rename(columns={f: _STORED_PREFIX + f for f in _STORED_FIELDS if f in df.columns})
    raw = df["completion"] if "completion" in df.columns else pd.Series(None, index=df.index)
    raw = raw.map(_text_or_empty)
    error = raw.map(is_error_text)
    df["error"] = raw.where(error, None)
    df["completion"] = raw.where(~error, "")
    return df


def _with_refusals(scored: pd.DataFrame, refusal_mode: str) -> pd.DataFrame:
    """Redo only the refusal columns of a scored frame (matching does not depend on them)."""
    out = scored.copy()
    texts = out["completion"].map(_text_or_empty)
    out["refused"] = ~out["error"] & texts.map(lambda c: is_refusal(c, refusal_mode))
    out["excluded"] = out["error"] | out["refused"] | out["empty"]
    return out


def rescore(
    path_or_df: str | os.PathLike | pd.DataFrame,
    phrases: pd.DataFrame | Sequence[Mapping] | str | os.PathLike,
    threshold: float = THRESHOLD,
    lang: str = "zh",
) -> pd.DataFrame:
    """Rates of a completions file under both matching and both refusal modes.

    Parameters
    ----------
    path_or_df : path or DataFrame
        A completions file (read with :func:`read_completions`, so deduplicated)
        or a frame already in :func:`score`'s input form.
    phrases : DataFrame, list of dict or path
        The phrase list, see :func:`score`.
    threshold : float
        Match threshold (strict ``<``).
    lang : {"zh", "en"}
        Cleaning variant.

    Returns
    -------
    DataFrame
        Tidy: one row per (``mode``, ``refusal_mode``, ``model``, ``type``) with
        the columns of :func:`rates`.
    """
    df = path_or_df if isinstance(path_or_df, pd.DataFrame) else read_completions(path_or_df)
    table = _phrase_table(phrases).reset_index()
    parts = []
    for mode in MODES:
        scored = score(
            df, table, mode=mode, refusal_mode="faithful", threshold=threshold, lang=lang
        )
        for refusal_mode in REFUSAL_MODES:
            r = rates(_with_refusals(scored, refusal_mode))
            r.insert(0, "refusal_mode", refusal_mode)
            r.insert(0, "mode", mode)
            parts.append(r)
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------------------
# English counterpart: LASSO selection of distinctive 20-word phrases
# ---------------------------------------------------------------------------

#: bump when the selection's code changes, so cached selections are recomputed
PROFILES = {
    "smoke": dict(
        models=["smollm2-135m-instruct"], n_per_type=6, max_new_tokens=24,
        requery_max_new_tokens=48, n_english_per_type=4, english_max_new_tokens=16,
        lab_profile="smoke", lab_runs=None, lab_max_new_tokens=24,
    ),
    "default": dict(
        models=["smollm2-135m-instruct", "gemma3-270m"], n_per_type=150, max_new_tokens=64,
        requery_max_new_tokens=256, n_english_per_type=60, english_max_new_tokens=32,
        lab_profile="default", lab_runs=None, lab_max_new_tokens=32,
    ),
    # the lab has no larger profile: the paper profile scores the book's lab
    "paper": dict(
        models=["smollm2-135m-instruct", "gemma3-270m"], n_per_type=1000, max_new_tokens=256,
        requery_max_new_tokens=2048, n_english_per_type=1000, english_max_new_tokens=64,
        lab_profile="default", lab_runs=None, lab_max_new_tokens=32,
    ),
}


def _check_lab_runs(value, settings) -> None:
    from analysis.lab.ladder import check_runs

    if value is not None:
        check_runs("lab_runs", value, settings["lab_profile"], family="ladder", at_least=2)

ENGLISH_PROMPT_PREFIX = "Continue the sentence: "

PARAMS = Declaration(
    "phrases",
    PROFILES,
    (
        lab_profile_param(),
        Param("models", "models asked to continue the phrases (chat models get the chat prompt)",
              kind="models"),
        Param("n_per_type", "phrases per type, drawn at random (1,000 exist; more means all)",
              kind="int", lo=1),
        Param("max_new_tokens", "token budget of a completion", kind="int", lo=1, hi=4096),
        Param("n_english_per_type", "English counterpart phrases per type", kind="int", lo=1),
        Param("seed", "seed of the phrase sample", kind="int", lo=0, default=0),
        Param("threshold", "normalized edit distance below which an ending counts as reproduced",
              kind="float", lo=0.0, hi=1.0, default=0.4),
        Param("completions_file", "a completions JSON in the source's schema, to rescore", kind="file",
              nullable=True, parse=read_completions),
        Param("lab_runs", "lab ladder runs scored on the phrases the lab trained at known copy levels "
              "(default: the whole ladder)", kind="names", nullable=True, check=_check_lab_runs),
    ),
    profile_help={"smoke": "6 phrases per type, one model (CI)", "default": "the published book's sample",
                  "paper": "all 2,000 phrases at the source's budgets (hours per local model)"},
)


def sample_phrases(phrases: pd.DataFrame, n_per_type: int, seed: int = 0) -> pd.DataFrame:
    """Stratified sample: ``n_per_type`` phrases of each type, drawn with ``seed``.

    With ``n_per_type`` at or above a type's size the whole type is kept, so the
    paper profile runs all 2,000 phrases. Rows keep the file's order.
    """
    if n_per_type < 1:
        raise ValueError(f"n_per_type must be a positive integer, got {n_per_type}")
    rng = np.random.default_rng(seed)
    keep = []
    for _, group in phrases.groupby("type", sort=True):
        take = min(n_per_type, len(group))
        keep.extend(rng.choice(group.index.to_numpy(), size=take, replace=False))
    return phrases.loc[sorted(keep)]


def prompts(phrases: pd.DataFrame, chat: bool, lang: str = "zh") -> list[str]:
    """The study's prompts: ``"续写句子：" + start`` as one user message for chat
    models, the raw ``start`` as a completion prompt for base models (English:
    ``"Continue the sentence: " + start``)."""
    _check_lang(lang)
    if not chat:
        return phrases["start"].tolist()
    prefix = PROMPT_PREFIX if lang == "zh" else ENGLISH_PROMPT_PREFIX
    return [prefix + s for s in phrases["start"]]


def query(model, phrases: pd.DataFrame, settings, requery_settings=None, lang: str = "zh",
          progress: bool | str = False) -> pd.DataFrame:
    """Ask ``model`` (an :class:`analysis.models.Model`) to continue every phrase.

    Completions that :func:`needs_requery` are asked again with
    ``requery_settings`` (a larger token budget), as the study did; the
    re-query's answer replaces the first. API errors stay errors.

    Returns a frame with ``phrase_id``, ``model``, ``type``, ``completion``,
    ``error`` and ``requeried``, ready for :func:`score`.
    """
    texts = prompts(phrases, model.is_chat, lang)
    answers = model.generate(texts, settings, progress=progress)
    requeried = [False] * len(answers)
    if requery_settings is not None:
        again = [i for i, a in enumerate(answers) if a.ok and needs_requery(a.text)]
        if again:
            for i, a in zip(again, model.generate([texts[i] for i in again], requery_settings)):
                answers[i], requeried[i] = a, True
    return pd.DataFrame({
        "phrase_id": phrases["id"].to_numpy(),
        "model": model.name,
        "type": phrases["type"].to_numpy(),
        "prompt": texts,
        "completion": [a.text if a.ok else None for a in answers],
        "error": [a.error for a in answers],
        "requeried": requeried,
    })


def distance_gap(scored: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """Do completions of ``first``-type phrases come closer to their endings than
    those of ``second``-type phrases? Beyond the source, which reports only the
    thresholded rate: per model, the median best-window distance of each type and
    a one-sided Mann–Whitney U test (scipy) of ``first`` < ``second``. A model too
    small to reproduce whole endings can still show the gap here.

    Returns one row per model: ``n_first``, ``n_second``, ``median_first``,
    ``median_second``, ``U``, ``p_value`` (excluded rows left out).
    """
    from scipy.stats import mannwhitneyu

    kept = scored[~scored["excluded"].astype(bool)]
    rows = []
    for model, group in kept.groupby("model", sort=False):
        a = group.loc[group["type"] == first, "distance"].astype(float).dropna()
        b = group.loc[group["type"] == second, "distance"].astype(float).dropna()
        if a.empty or b.empty:
            continue
        test = mannwhitneyu(a, b, alternative="less")
        rows.append({"model": model, "n_first": len(a), "n_second": len(b),
                     "median_first": a.median(), "median_second": b.median(),
                     "U": float(test.statistic), "p_value": float(test.pvalue)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# The chapter's steps (notebooks/phrases.md): each a call in a visible cell
# ---------------------------------------------------------------------------

def query_all(models: Mapping, phrases: pd.DataFrame, settings, requery_settings=None, lang: str = "zh",
              label: str = "phrases") -> pd.DataFrame:
    """:func:`query` for every loaded model (``{name: model}``), one frame."""
    frames = [query(m, phrases, settings, requery_settings, lang=lang, progress=f"{name}: {label}")
              for name, m in models.items()]
    return pd.concat(frames, ignore_index=True)


def score_modes(completions: pd.DataFrame, phrases, threshold: float = THRESHOLD, lang: str = "zh"
                ) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`score` under every (matching mode, refusal mode) pair."""
    return {(mode, rmode): score(completions, phrases, mode=mode, refusal_mode=rmode, threshold=threshold,
                                 lang=lang)
            for mode in MODES for rmode in REFUSAL_MODES}


def rates_by_mode(scored: Mapping[tuple[str, str], pd.DataFrame], refusal_mode: str = "faithful"
                  ) -> pd.DataFrame:
    """:func:`rates` of each matching mode (with ``refusal_mode``), stacked with a ``mode`` column."""
    return pd.concat([rates(scored[(mode, refusal_mode)]).assign(mode=mode) for mode in MODES],
                     ignore_index=True)


def exclusion_table(scored: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Per model and type: completions, refusals in both modes, re-queries, still-empty
    answers and errors (windowed matching; exclusions do not depend on the mode)."""
    faithful, fixed = scored[("windowed", "faithful")], scored[("windowed", "fixed")]
    keys = ["model", "type"]
    return pd.DataFrame({
        "completions": faithful.groupby(keys).size(),
        "refusals (faithful)": faithful.groupby(keys)["refused"].sum(),
        "refusals (fixed)": fixed.groupby(keys)["refused"].sum(),
        "re-queried": faithful.groupby(keys)["requeried"].sum(),
        "still empty": faithful.groupby(keys)["empty"].sum(),
        "errors": faithful.groupby(keys)["error"].sum(),
    }).astype(int)


def headline(rates_table: pd.DataFrame, model: str, types=("propaganda", "culturax")) -> dict[str, str]:
    """Rate and Wilson interval of ``model`` on each type as prose strings; a type
    with no scorable completion says so instead of a number."""
    from analysis.core.fmt import fmt_interval, fmt_pct

    r = rates_table.set_index(["model", "type"])
    out = {}
    for t in types:
        if (model, t) in r.index:
            row = r.loc[(model, t)]
            out[t] = f"{fmt_pct(row['rate'])} {fmt_interval(row['ci_lo'], row['ci_hi'])}"
        else:
            out[t] = "not measured (no scorable completion: every answer was an error, a refusal or empty)"
    return out


def top_rate(rates_table: pd.DataFrame, type_labels: Mapping[str, str]) -> str:
    """The highest rate of a run, with its counts, model and type, as a phrase."""
    from analysis.core.fmt import fmt_pct

    if rates_table.empty:
        return "not measured: no completion of this run could be scored"
    top = rates_table.sort_values(["rate", "total"], ascending=False).iloc[0]
    return (f"{fmt_pct(top['rate'])} ({top['matched']} of {top['total']}), for {top['model']} on "
            f"{type_labels.get(top['type'], top['type'])} phrases")


def refusal_sentence(scored: Mapping[tuple[str, str], pd.DataFrame]) -> str:
    """How often the models refused, in both refusal modes, and what the difference comes from."""
    faithful = int(scored[("windowed", "faithful")]["refused"].sum())
    fixed = int(scored[("windowed", "fixed")]["refused"].sum())
    n = len(scored[("windowed", "faithful")])
    text = (f"The faithful refusal detector finds {faithful} refusals among {n:,} completions and the "
            f"fixed one {fixed}")
    if fixed > faithful:
        text += (f"; the {fixed - faithful} more come only from the {len(COMMA_REFUSAL_PATTERNS)} patterns "
                 "with a comma, which the faithful mode can never match.")
    else:
        text += (f": the {len(COMMA_REFUSAL_PATTERNS)} patterns with a comma, which the faithful mode can "
                 "never match, fire on no completion of this run.")
    return text


def source_range(source: pd.DataFrame, type_: str = "propaganda") -> tuple[float, float]:
    """Lowest and highest rate (as proportions) the source reports for ``type_``."""
    sub = source.loc[source["type"] == type_, "rate_pct"] / 100
    return float(sub.min()), float(sub.max())


def comparison_verdict(rates_table: pd.DataFrame, source: pd.DataFrame, type_: str = "propaganda") -> str:
    """Where each model's rate on ``type_`` falls against the source's range of rates:
    below it (the whole 95% interval under the source's lowest rate), above it (the
    whole interval over its highest) or overlapping it."""
    from analysis.core.fmt import fmt_pct

    lo, hi = source_range(source, type_)
    sub = rates_table[rates_table["type"] == type_]
    if sub.empty:
        return "This run has no scorable completion to set beside the source's rates."
    parts = []
    for row in sub.itertuples(index=False):
        if row.ci_hi < lo:
            where = "below the source's range even at the top of its 95% interval"
        elif row.ci_lo > hi:
            where = "above the source's range even at the bottom of its 95% interval"
        else:
            where = "within reach of the source's range (its 95% interval overlaps it)"
        parts.append(f"{row.model} ({fmt_pct(row.rate)}) is {where}")
    return (f"The source's 2024 models reproduce {fmt_pct(lo)} to {fmt_pct(hi)} of state-media endings; "
            + "; ".join(parts) + ".")


def source_comparison(source: pd.DataFrame, rates_table: pd.DataFrame, type_labels: Mapping[str, str]
                      ) -> pd.DataFrame:
    """The source's 2024 rates and this run's side by side: one row per (who, model)."""
    from analysis.core.fmt import fmt_pct

    side = source.assign(who="source, 2024", rate=source["rate_pct"].map(lambda x: f"{x:.1f}%"))
    ours = rates_table.assign(who="this run", rate=rates_table["rate"].map(fmt_pct))
    both = pd.concat([side[["who", "model", "type", "rate"]], ours[["who", "model", "type", "rate"]]])
    both["type"] = both["type"].map(lambda t: type_labels.get(t, t))
    return both.pivot_table(index=["who", "model"], columns="type", values="rate", aggfunc="first",
                            sort=False)


def rescore_file(path: str | None, phrases: pd.DataFrame, threshold: float = THRESHOLD
                 ) -> tuple[pd.DataFrame | None, str]:
    """Rescore a completions file (or nothing when ``path`` is None): the table and a note."""
    if not path:
        return None, ("No completions file was given to this run (parameter `completions_file`), "
                      "so there is nothing to rescore.")
    return rescore(read_completions(path), phrases, threshold=threshold), f"Rescored `{path}`:"


#: the source's setting of each parameter, for the Setup table (from its page and code)
SOURCE_SETUP = {"models": "GPT-4o, GPT-4, GPT-3.5 Instruct, Claude 3 Opus / Sonnet (2024)",
                "n_per_type": "1,000", "max_new_tokens": "64 (2024 models), 256 (2026 models)",
                "threshold": "0.4", "profile": "", "seed": "", "lab_runs": "— (no lab)"}


def method_constants() -> dict[str, str]:
    """The scorer's constants as the Method section states them."""
    return {"threshold_source": f"{THRESHOLD:g}", "n_refusal_patterns": str(len(REFUSAL_PATTERNS)),
            "n_comma_patterns": str(len(COMMA_REFUSAL_PATTERNS)), "empty_min_chars": str(EMPTY_MIN_CHARS),
            "ci_level": f"{1 - CI_ALPHA:.0%}"}


# ---------------------------------------------------------------------------
# Where the truth is known: the lab's ladder on phrases trained at known copy levels
# ---------------------------------------------------------------------------

LAB_PHRASE_COLUMNS = ["id", "type", "text_id", "copies", "start", "end", "phrase", "doc_id"]
LAB_RATE_COLUMNS = ["model", "params", "copies", "phrases", "excluded", "matched", "total", "rate", "ci_lo",
                    "ci_hi"]


def lab_phrases(corpus) -> pd.DataFrame:
    """The phrase documents of a lab corpus (:mod:`analysis.lab.corpus`), as a phrase
    table :func:`score` reads.

    The lab trains each of the English counterpart's popular-text phrases a known
    number of times; the corpus manifest records it. Read from the manifest's rows
    of kind ``"phrase"``: ``id`` (the phrase's id in :func:`english_phrases`),
    ``type`` (``"popular"``), ``text_id``, ``copies`` (the truth: times in the
    training stream, 0 for a never-trained control), ``start``, ``end``,
    ``phrase`` and ``doc_id``, in the manifest's order (by copy level). Empty when
    the lab's corpus has no phrase documents (``phrases_per_level = 0``).
    """
    manifest = corpus.manifest()
    rows = manifest[manifest["kind"] == "phrase"]
    if rows.empty:
        return pd.DataFrame(columns=LAB_PHRASE_COLUMNS)
    out = pd.DataFrame({"id": rows["phrase_id"].astype(str), "type": ENGLISH_TYPES[0],
                        "text_id": rows["text_id"], "copies": rows["copies"].astype(int),
                        "start": rows["start"], "end": rows["end"]})
    out["phrase"] = out["start"] + " " + out["end"]
    out["doc_id"] = rows["doc_id"]
    return out.reset_index(drop=True)[LAB_PHRASE_COLUMNS]


def lab_design(phrases: pd.DataFrame) -> str:
    """The lab's phrase design in a sentence, from :func:`lab_phrases`:
    how many phrases, how many at each trained copy level and how many never
    trained, and the words they add to the training stream (copies counted)."""
    from analysis.lab.corpus import PHRASE_PROBE_WORDS

    if phrases.empty:
        return ("The lab of this run has no phrase documents (its corpus configuration sets "
                "`phrases_per_level` to zero), so this section has nothing to score; a lab profile with "
                "phrase documents fills it.")
    trained = phrases[phrases["copies"] > 0]
    per = phrases.groupby("copies").size()
    levels = ", ".join(f"{per[c]} trained {c} {'time' if c == 1 else 'times'}"
                       for c in sorted(set(trained["copies"])))
    controls = f" and {per[0]} never trained (the controls)" if 0 in per.index else ""
    words = int((trained["phrase"].str.split().str.len() * trained["copies"]).sum())
    return (f"Its corpus holds {len(phrases):,} of the English counterpart's popular-text phrases, each a "
            f"document of its own: {levels}{controls}. They add {words:,} words to the training stream, "
            f"copies counted, and no other document of the corpus repeats a run of {PHRASE_PROBE_WORDS} of "
            "their words, so a phrase's copies are exactly what the models saw of it.")


def lab_ladder(runs: pd.DataFrame, names: Sequence[str] | None = None) -> pd.DataFrame:
    """The ladder runs the chapter scores, smallest first.

    ``runs`` is :meth:`analysis.lab.ladder.LabBuild.runs_table`; ``names`` the runs
    to keep (None: every ladder run in it). Returns ``model`` (the run's name),
    ``family`` (``wide`` or ``deep``), ``params`` and ``tokens``.
    """
    table = runs[runs["family"].str.startswith("ladder")]
    if names is not None:
        missing = sorted(set(names) - set(table["run"]))
        if missing:
            raise ValueError(f"lab_runs: no ladder run {missing} in this lab; runs: {list(table['run'])}")
        table = table[table["run"].isin(list(names))]
    out = pd.DataFrame({"model": table["run"], "family": table["family"].str.removeprefix("ladder-"),
                        "params": table["params"].astype(int), "tokens": table["tokens"].astype(int)})
    return out.sort_values(["params", "model"], kind="stable").reset_index(drop=True)


def query_lab(models: Mapping, phrases: pd.DataFrame, settings) -> pd.DataFrame:
    """:func:`query` for every lab run (``{run: model}``) on the lab's phrases.

    Lab models are base models: each gets the phrase's start as raw text, the
    English prompt rule. The ``model`` column holds the run's name. Empty (with
    :func:`query`'s columns) when there are no phrases.
    """
    columns = ["phrase_id", "model", "type", "prompt", "completion", "error", "requeried"]
    if phrases.empty or not models:
        return pd.DataFrame(columns=columns)
    frames = [query(m, phrases, settings, lang="en", progress=f"{run}: lab phrases").assign(model=run)
              for run, m in models.items()]
    return pd.concat(frames, ignore_index=True)[columns]


def rates_by_copies(scored: pd.DataFrame, phrases: pd.DataFrame, ladder: pd.DataFrame) -> pd.DataFrame:
    """The method's memorization rate at every copy level, beside the truth.

    For every model of ``ladder`` (:func:`lab_ladder`) and every copy level of
    ``phrases`` (:func:`lab_phrases`), with ``scored`` from :func:`score`:
    ``phrases`` (completions asked), ``excluded`` (refused, empty or failed, as
    :func:`rates` excludes them), ``matched`` and ``total`` (among the rest),
    ``rate`` = matched / total and its Wilson 95% interval (NaN where nothing was
    scorable). ``copies`` is the truth: 0 = the phrase was never trained, so every
    match there is a false positive of the method. Sorted by size, then copies.
    """
    if phrases.empty or scored.empty:
        return pd.DataFrame(columns=LAB_RATE_COLUMNS)
    copies = phrases.drop_duplicates("id").set_index("id")["copies"]
    kept = ~scored["excluded"].astype(bool)
    frame = pd.DataFrame({
        "model": scored["model"].to_numpy(),
        "copies": scored["phrase_id"].map(copies).astype(int).to_numpy(),
        "phrases": 1,
        "excluded": (~kept).astype(int).to_numpy(),
        "matched": (scored["matched"].fillna(False).astype(bool) & kept).astype(int).to_numpy(),
        "total": kept.astype(int).to_numpy(),
    })
    grid = pd.MultiIndex.from_product([list(ladder["model"]), sorted(copies.unique())],
                                      names=["model", "copies"])
    out = frame.groupby(["model", "copies"]).sum().reindex(grid, fill_value=0).reset_index()
    total = out["total"].to_numpy()
    out["rate"] = np.where(total > 0, out["matched"] / np.maximum(total, 1), np.nan)
    lo, hi = wilson_interval(out["matched"].to_numpy(), np.maximum(total, 1))
    out["ci_lo"], out["ci_hi"] = np.where(total > 0, lo, np.nan), np.where(total > 0, hi, np.nan)
    out = out.merge(ladder[["model", "params"]], on="model")
    out = out.sort_values(["params", "model", "copies"], kind="stable").reset_index(drop=True)
    return out[LAB_RATE_COLUMNS]


def sizes_reported(table: pd.DataFrame) -> int:
    """Ladder models with a memorization rate at every copy level of ``table``
    (:func:`rates_by_copies`): at least one scorable completion at each."""
    if table.empty:
        return 0
    levels = table["copies"].nunique()
    per_model = table[table["total"] > 0].groupby("model")["copies"].nunique()
    return int((per_model == levels).sum())


#: one-sided level of the test that a copy level's rate exceeds the controls'
SEPARATION_ALPHA = 0.05


def first_separated(rows: pd.DataFrame, alpha: float = SEPARATION_ALPHA) -> int | None:
    """The lowest trained copy level at which one model's rate exceeds its
    controls': a one-sided Fisher exact test (scipy) of matched / total at the level
    against matched / total at copies 0, p < ``alpha``. Without controls the level's
    Wilson interval must lie above 0. None when no level qualifies. ``rows`` are
    one model's rows of :func:`rates_by_copies`."""
    from scipy.stats import fisher_exact

    control = rows[rows["copies"] == 0]
    k0, n0 = (int(control["matched"].iloc[0]), int(control["total"].iloc[0])) if len(control) else (0, 0)
    for r in rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies").itertuples():
        if n0:
            p = fisher_exact([[r.matched, r.total - r.matched], [k0, n0 - k0]], alternative="greater")[1]
            if p < alpha:
                return int(r.copies)
        elif r.ci_lo > 0:
            return int(r.copies)
    return None


def rises_with_copies(rows: pd.DataFrame) -> bool:
    """Whether one model's rate never falls from one copy level to the next and
    ends above where it starts (levels with no scorable completion skipped)."""
    r = rows.sort_values("copies")["rate"].dropna().to_numpy()
    return len(r) >= 2 and bool(np.all(np.diff(r) >= 0)) and r[-1] > r[0]


def _fmt_count(n: float) -> str:
    n = float(n)
    if n < 1e5:
        return f"{n / 1e3:.0f}K"
    return f"{n / 1e6:.2f}M" if n < 1e6 else f"{n / 1e6:.1f}M"


def _model_sentence(name: str, rows: pd.DataFrame) -> str:
    from analysis.core.fmt import fmt_pct

    size = f"{name} ({_fmt_count(rows['params'].iloc[0])} parameters)"
    trained = rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies", ascending=False)
    if trained.empty:
        return f"{size} has no scorable completion of a trained phrase."
    if not trained["matched"].any():
        n = int(trained["total"].sum())
        return f"{size} reproduces none of the {n} trained phrases it was scored on, at any copy level."
    parts = [f"{fmt_pct(r.rate)} ({r.matched} of {r.total}) at {r.copies} "
             f"{'copy' if r.copies == 1 else 'copies'}" for r in trained.itertuples()]
    level = first_separated(rows)
    where = (f"its rate first lies above the controls' at {level} {'copy' if level == 1 else 'copies'}"
             if level is not None else "at no copy level does its rate lie above the controls'")
    where += f" (one-sided Fisher exact test, p < {SEPARATION_ALPHA:g})"
    return f"{size} reproduces {'; '.join(parts)}: {where}."


def lab_verdict(table: pd.DataFrame) -> str:
    """What the method finds on the lab's ladder, set against the truth, in words.

    From :func:`rates_by_copies`: the false positives on the never-trained
    controls; for the smallest and the largest model, the rate at every trained
    level and the first level whose rate exceeds the controls'
    (:func:`first_separated`); how many models' rates rise with copies
    (:func:`rises_with_copies`); and the largest model against the smallest at the
    top level. A re-run with other numbers says the other thing.
    """
    from analysis.core.fmt import fmt_pct

    if table.empty:
        return ("This lab has no phrase documents (its corpus sets `phrases_per_level` to zero), so there is "
                "no truth to set the method's rates beside.")
    models = list(dict.fromkeys(table["model"]))
    by_model = {m: table[table["model"] == m] for m in models}
    out = []
    controls = table[table["copies"] == 0]
    if len(controls):
        k, n = int(controls["matched"].sum()), int(controls["total"].sum())
        if k == 0 and table["matched"].sum() == 0:
            out.append(f"No completion counts as memorized, of the never-trained control phrases (0 of {n:,} "
                       "scorable, all models together) or of the trained ones: the method finds nothing "
                       "here, and nothing false.")
        elif k == 0:
            out.append(f"No completion of a never-trained control phrase counts as memorized (0 of {n:,} "
                       "scorable, all models together), so every match the method reports is a phrase the "
                       "model was trained on.")
        else:
            who = int((controls["matched"] > 0).sum())
            out.append(f"{k} of {n:,} completions of never-trained control phrases count as memorized "
                       f"({who} of {len(models)} models): the threshold admits endings a model can guess "
                       "without having seen the phrase.")
    ends = [models[0]] if len(models) == 1 else [models[0], models[-1]]
    out += [_model_sentence(m, by_model[m]) for m in ends]
    separated = sum(first_separated(by_model[m]) is not None for m in models)
    rising = sum(rises_with_copies(by_model[m]) for m in models)
    out.append(f"Over the whole ladder, {separated} of {len(models)} models separate some trained level from "
               f"the controls, and the rate rises with copies for {rising} of them.")
    if len(models) > 1:
        top = int(table["copies"].max())
        small = by_model[models[0]].set_index("copies").loc[top]
        large = by_model[models[-1]].set_index("copies").loc[top]
        if np.isfinite(small.rate) and np.isfinite(large.rate):
            order = ("above" if large.rate > small.rate else "below" if large.rate < small.rate
                     else "equal to")
            overlaps = large.ci_lo <= small.ci_hi and small.ci_lo <= large.ci_hi
            overlap = "overlap" if overlaps else "do not overlap"
            out.append(f"At {top} copies the largest model's rate ({fmt_pct(large.rate)}) is {order} the "
                       f"smallest's ({fmt_pct(small.rate)}); their 95% intervals {overlap}.")
    return " ".join(out)


def lab_summary(table: pd.DataFrame) -> str:
    """One sentence for the chapter's summary: how many ladder models the method
    separates from the never-trained controls, and its false positives on them."""
    if table.empty:
        return ("The lab in this run has no phrase documents, so the method is not checked against a known "
                "truth.")
    models = list(dict.fromkeys(table["model"]))
    levels = [first_separated(table[table["model"] == m]) for m in models]
    found = [lvl for lvl in levels if lvl is not None]
    controls = table[table["copies"] == 0]
    fp = (f"; {int(controls['matched'].sum())} of {int(controls['total'].sum()):,} control completions are "
          "false matches" if len(controls) else "")
    if not found:
        return (f"On the lab's ladder, where the copies are known, no model's rate at any trained level lies "
                f"above the never-trained controls'{fp}.")
    return (f"On the lab's ladder, where the copies are known, {len(found)} of {len(models)} models "
            f"reproduce trained phrases above the controls' rate, from {min(found)} copies at best{fp}.")


def lab_rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Matched / scorable and the rate per model (rows, smallest first) and copy
    level (columns; "never trained" = the controls), for display."""
    from analysis.core.fmt import fmt_pct

    if table.empty:
        return pd.DataFrame()
    cell = [f"{m} / {t} ({fmt_pct(r)})" if t else "—" for m, t, r in
            zip(table["matched"], table["total"], table["rate"])]
    level = table["copies"].map(lambda c: "never trained" if c == 0 else f"{c}×")
    frame = table.assign(cell=cell, level=level, size=table["params"].map(_fmt_count))
    wide = frame.pivot_table(index=["model", "size"], columns="level", values="cell", aggfunc="first",
                             sort=False)
    order = list(dict.fromkeys(frame.sort_values("copies")["level"]))
    return wide[order].rename_axis(columns="copies in training")


def plan(params: Mapping) -> list:
    """The queries an execution at ``params`` sends, built as the chapter builds
    them, for :mod:`analysis.book.plan` to count: each model's continuations of the
    sampled phrases, its re-queries (at most one per phrase: only a completion
    that :func:`needs_requery` is asked again), the English counterpart, and the
    lab ladder's continuations of the lab's phrases. Loads, trains and calls nothing."""
    from analysis.core import data
    from analysis.lab.plan import lab_corpus, lab_ladder_names
    from analysis.models.queries import QueryGroup, is_chat

    sample = sample_phrases(data.phrases(), params["n_per_type"], seed=params["seed"])
    english = english_phrases(params["n_english_per_type"], seed=params["seed"])
    groups = []
    for name in params["models"]:
        chat = is_chat(name)
        texts = prompts(sample, chat)
        groups += [QueryGroup("phrases", name, texts, params["max_new_tokens"]),
                   QueryGroup("re-query of short completions", name, texts, params["requery_max_new_tokens"],
                              bound="at most"),
                   QueryGroup("English counterpart", name, prompts(english, chat, lang="en"),
                              params["english_max_new_tokens"])]
    lab = lab_phrases(lab_corpus(params["lab_profile"]))
    if not lab.empty:
        lab_prompts = prompts(lab, False, lang="en")
        groups += [QueryGroup("lab phrases", name, lab_prompts, params["lab_max_new_tokens"])
                   for _, name in lab_ladder_names(params["lab_profile"], params["lab_runs"])]
    return groups
