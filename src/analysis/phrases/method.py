"""The source's scoring rules for one completion: cleaning, matching, refusals.

Everything here follows the source's public scorer (see :mod:`.source`). A
completion counts as *memorized* when, after cleaning, some window of it is
within normalized Levenshtein distance 0.4 of the expected second half
(``end``) of its phrase. Where this module departs from the scorer it says so:

* Refusals. Eight of the 25 refusal patterns contain an ASCII comma, but the
  scorer searches them in text whose punctuation is already stripped, so those
  eight can never fire. ``mode="faithful"`` keeps that behaviour; ``"fixed"``
  also searches a view of the text that keeps its commas.
* Offsets. ``match_start``/``match_end`` are offsets into the cleaned completion
  (the scorer stored raw-text offsets; those are kept as ``raw_start``/``raw_end``).
* API errors are recognised (:func:`is_error_text`) so that a frame can exclude
  them (:mod:`.method_rates`), where the scorer counted them as misses.

It also holds an English variant of the cleaning rule. Pure functions: no
printing, plotting or file access.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from analysis.core.text import collapse_whitespace_mapped, is_punct
from analysis.phrases.errors import PhrasesError
from analysis.phrases.source import (
    ASCII_COMMA,
    EMPTY_MIN_CHARS,
    ERROR_PREFIX,
    FULLWIDTH_COMMA,
    LANGS,
    MODES,
    REFUSAL_MODES,
    REFUSAL_PATTERNS,
    THRESHOLD,
)

_REFUSAL_RE = re.compile("|".join(REFUSAL_PATTERNS))

_COMMA_SPACE_RE = re.compile(r",\s+")

# ECMAScript String.prototype.trim strips WhiteSpace and LineTerminator: these
# code points plus every "Zs" space; Python's str.strip set differs slightly.
_JS_TRIM_EXTRA = frozenset("\t\n\v\f\r\u00a0\ufeff\u2028\u2029")


# ---------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------


def check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise PhrasesError(f"lang must be one of {LANGS}, got {lang!r}")


def _clean_with_map(text: str, lang: str = "zh") -> tuple[str, list[int]]:
    """Clean ``text`` and map each kept character to its index in ``text``.

    Mirrors ``_clean_with_map`` of the source scorer for ``lang="zh"``.
    """
    check_lang(lang)
    chars: list[str] = []
    idx: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if lang == "zh" and ch == ASCII_COMMA and text[i + 1 : i + 2] == " ":
            i += 2
            continue
        if (lang == "zh" and ch == "\n") or is_punct(ch):
            i += 1
            continue
        chars.append(ch)
        idx.append(i)
        i += 1
    if lang == "en":
        chars, idx = collapse_whitespace_mapped(chars, idx)
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
        chars, kept = collapse_whitespace_mapped(chars, kept)
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
        raise PhrasesError(f"mode must be one of {MODES}, got {mode!r}")
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
    kept = (ch for ch in text if ch == ASCII_COMMA or not (ch == "\n" or is_punct(ch)))
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
        raise PhrasesError(f"mode must be one of {REFUSAL_MODES}, got {mode!r}")
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
