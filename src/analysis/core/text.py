"""Text normalisation: the one home of the rules the book compares text by.

* :func:`collapse_whitespace`: whitespace words joined by single spaces (how the
  lab's corpus stores text);
* :func:`collapse_whitespace_mapped`: the same on a character list that keeps
  each character's index in the raw text (the phrases scorer's English rule);
* :func:`is_punct` / :func:`strip_punct`: Unicode punctuation (category ``P*``);
* :func:`normalize_word`: the comparison form of one word (the size chapter's
  next-word probe);
* :func:`answer_form`: lower case, ASCII punctuation dropped, whitespace
  collapsed (the distributional chapter's knowledge answers).

Each chapter documents which rule it uses and why; the rules live here so that
two chapters that compare text the same way share one function.
"""

from __future__ import annotations

import string
import unicodedata

import pandas as pd

_APOSTROPHES = "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc"
_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"
_QUOTE_TABLE = str.maketrans({**{c: "'" for c in _APOSTROPHES}, **{c: '"' for c in _QUOTES}})
#: dash runs treated as word separators inside a whitespace word
_DASH_SEPARATORS = ("\u2014", "\u2013", "--")
_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def collapse_whitespace(text: str) -> str:
    """``text``'s whitespace words joined by single spaces."""
    return " ".join(text.split())


def is_punct(ch: str) -> bool:
    """Whether ``ch`` is Unicode punctuation (general category ``P*``; symbols ``S*`` are not)."""
    return unicodedata.category(ch).startswith("P")


def strip_punct(s: str) -> str:
    """``s`` without the punctuation (:func:`is_punct`) at either end."""
    i, j = 0, len(s)
    while i < j and is_punct(s[i]):
        i += 1
    while j > i and is_punct(s[j - 1]):
        j -= 1
    return s[i:j]


def collapse_whitespace_mapped(chars: list[str], idx: list[int]) -> tuple[list[str], list[int]]:
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


def is_missing(x) -> bool:
    """None, NaN or pandas.NA (a missing prediction)."""
    if x is None or isinstance(x, str):
        return x is None
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def normalize_word(word) -> str:
    """The comparison form of a word (target or predicted).

    The source counts a prediction correct when it "returns the correct next
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
    if is_missing(word):
        return ""
    s = unicodedata.normalize("NFKC", str(word))
    s = "".join(ch for ch in s if unicodedata.category(ch) != "Cf")
    s = s.translate(_QUOTE_TABLE).casefold().strip()
    for sep in _DASH_SEPARATORS:
        if sep in s:
            pieces = [strip_punct(p) for p in s.split(sep)]
            s = next((p for p in pieces if p), "")
    return strip_punct(s)


def answer_form(text: str) -> str:
    """``text`` lower-cased, ASCII punctuation dropped, whitespace words joined by single spaces."""
    return " ".join(str(text).lower().translate(_ASCII_PUNCTUATION).split())
