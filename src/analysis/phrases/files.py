"""Files in the source's schemas: phrase lists and completions to rescore.

:func:`read_completions` reads a ``completions.json`` as the source's page does
(deduplicated, errors moved out of the text); :func:`rescore` scores such a file
under both matching modes and both refusal modes, as the source's
``scripts/rescore_memorization.py`` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.phrases.errors import PhrasesError
from analysis.phrases.method import is_error_text
from analysis.phrases.method_rates import phrase_table, rates, score, text_or_empty, with_refusals
from analysis.phrases.source import (
    MODES,
    PAPER_TIMESTAMP,
    REFUSAL_MODES,
    STORED_FIELDS,
    STORED_PREFIX,
    THRESHOLD,
)


def load_phrases(path: str | os.PathLike) -> pd.DataFrame:
    """Read a phrase list (``phrases.json``: coef, phrase, type, start, end, start_chat, id)."""
    with open(path, encoding="utf-8") as fh:
        return pd.DataFrame(json.load(fh))



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
            raise PhrasesError(
                f"{path}: not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    if not isinstance(records, list):
        raise PhrasesError(f"{path}: expected a JSON list of completion objects")
    df = pd.DataFrame(_dedupe(records))
    missing = {"phrase_id", "model"} - set(df.columns)
    if missing:
        raise PhrasesError(f"{path}: completions lack fields {sorted(missing)}")
    df = df.rename(columns={f: STORED_PREFIX + f for f in STORED_FIELDS if f in df.columns})
    raw = df["completion"] if "completion" in df.columns else pd.Series(None, index=df.index)
    raw = raw.map(text_or_empty)
    error = raw.map(is_error_text)
    df["error"] = raw.where(error, None)
    df["completion"] = raw.where(~error, "")
    return df



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
    if isinstance(phrases, (str, os.PathLike)):
        phrases = load_phrases(phrases)
    table = phrase_table(phrases).reset_index()
    parts = []
    for mode in MODES:
        scored = score(
            df, table, mode=mode, refusal_mode="faithful", threshold=threshold, lang=lang
        )
        for refusal_mode in REFUSAL_MODES:
            r = rates(with_refusals(scored, refusal_mode))
            r.insert(0, "refusal_mode", refusal_mode)
            r.insert(0, "mode", mode)
            parts.append(r)
    return pd.concat(parts, ignore_index=True)


def rescore_file(path: str | os.PathLike | None, phrases: pd.DataFrame, threshold: float = THRESHOLD
                 ) -> pd.DataFrame | None:
    """:func:`rescore` of the completions file at ``path``, or None when no file
    was given (the parameter ``completions_file`` unset)."""
    if not path:
        return None
    return rescore(read_completions(path), phrases, threshold=threshold)
