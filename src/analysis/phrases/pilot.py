"""The source's own completions at commit ``fc444b0``, rescored by the book's scorer.

The data mirror holds ``state_media/completions_pilot_fc444b0.json``: the study's
early, partial completions file (785 rows from eight frontier models) as its
repository held it at commit ``fc444b0``, each row with the prompt, the expected
ending, the completion and the study's own ``matched`` flag and edit distance.
Those flags came from the scorer of that commit (``scripts/query_memorization.py``'s
``fuzzy_match`` then), which the study changed afterwards; the book follows the
later scorer (:mod:`.method`). This module:

* transcribes the ``fc444b0`` scorer (:func:`pilot_fuzzy_match`), so that a test can
  check that it gives back every stored flag;
* rescores each row with the book's scorer (:func:`rescore_pilot`) and explains each
  disagreement by the rule that differs (:data:`RULES`): which of the three steps
  from the old scorer to the new one, applied alone, turns the old flag into the
  new one (:func:`variant_match`);
* counts agreement per model (:func:`agreement_table`) and gives each model's rates
  on the sample the study drew before it saw any output (:func:`pilot_sample`):
  the first :data:`SAMPLE_PER_TYPE` phrases of each type in the phrase list (its
  ``MAX_PHRASES`` at that commit). The 12 phrases it took from its paper's SI table
  (and the SI table's own 13 rows) were chosen as examples, so they count toward
  agreement but not toward the rates.

Pure functions on frames; the file is read through the data registry.
"""

from __future__ import annotations

import itertools
import re

import pandas as pd
from rapidfuzz.distance import Levenshtein

from analysis.core.data import fetch
from analysis.phrases.files import read_completions
from analysis.phrases.method import _best_window, clean
from analysis.phrases.method_rates import rates, score
from analysis.phrases.source import PROMPT_PREFIX, THRESHOLD

#: the registry name of the file and the commit of the study's repository it comes from
PILOT_FILE = "state_media/completions_pilot_fc444b0.json"
PILOT_COMMIT = "fc444b0"
#: phrases per type of the study's sample at that commit (``MAX_PHRASES``)
SAMPLE_PER_TYPE = 50
#: the model whose rows are the paper's own SI-table examples (no sample of its own)
SI_MODEL = "gpt-3.5-instruct (paper)"

# fc444b0's ``norm``: r'[\s，。、；：""' '！？·…—（）【】《》\u3000]' (two adjacent
# literals: the quotes it meant as “” and ‘’ are ASCII " and the end of a literal)
_PILOT_NORM_RE = re.compile('[\\s，。、；：""！？·…—（）【】《》\u3000]')

#: the three steps from the fc444b0 scorer to the later one, in words
RULES = {
    "characters": ("characters removed: the later scorer drops every punctuation mark (curly quotes, "
                   "markdown asterisks, ASCII commas) and newlines but keeps spaces; fc444b0 dropped all "
                   "whitespace and a fixed list of Chinese marks"),
    "echo": ("prompt echo: the later scorer cuts the first echo of the phrase's start out of the "
             "completion before matching; fc444b0 matched the whole completion"),
    "windows": ("windows: the later scorer also compares windows that run past the completion's end "
                "(at least half the ending long); fc444b0 compared full-length windows only"),
}


def pilot_normalize(text: str | None) -> str:
    """fc444b0's ``norm``: all whitespace and ``，。、；："！？·…—（）【】《》`` and the
    ideographic space removed; everything else (curly quotes, ``*``, ASCII ``,``) kept."""
    return _PILOT_NORM_RE.sub("", text or "")


def _pilot_windows(cleaned: str, expected: str) -> float:
    """fc444b0's windows: the whole completion when shorter than the ending, else every
    full-length window, the lowest distance (1.0 when none is lower)."""
    n = len(expected)
    if len(cleaned) < n:
        return Levenshtein.normalized_distance(cleaned, expected)
    best = 1.0
    for i in range(len(cleaned) - n + 1):
        best = min(best, Levenshtein.normalized_distance(cleaned[i:i + n], expected))
        if best == 0.0:
            break
    return best


def pilot_fuzzy_match(completion: str | None, expected: str) -> tuple[bool, float]:
    """fc444b0's ``fuzzy_match``: (distance < 0.4, distance) over :func:`pilot_normalize`d
    texts, no echo removed; an ending empty after normalizing is (False, 1.0)."""
    target = pilot_normalize(expected)
    if not target:
        return False, 1.0
    dist = _pilot_windows(pilot_normalize(completion), target)
    return dist < THRESHOLD, dist


def _cut_first(text: str, part: str) -> str:
    pos = text.find(part) if part else -1
    return text if pos < 0 else text[:pos] + text[pos + len(part):]


def variant_match(completion: str | None, expected: str, start: str | None, *, characters: bool,
                  echo: bool, windows: bool, threshold: float = THRESHOLD) -> tuple[bool, float]:
    """The scorer with each step of :data:`RULES` taken (True: the later scorer's rule) or
    not (False: fc444b0's). All three False is :func:`pilot_fuzzy_match`; all three True
    is :func:`.method.match` in windowed mode (the tests check both)."""
    norm = clean if characters else pilot_normalize
    target = norm(expected)
    if not target:
        return False, 1.0
    text = norm(completion)
    if echo:
        text = _cut_first(text, norm(start))
    if windows:
        dist = _best_window(text, target)[0] if text else 1.0
    else:
        dist = _pilot_windows(text, target)
    return dist < threshold, dist


def cause_of(completion: str | None, expected: str, start: str | None, book_flag: bool) -> str:
    """The fewest steps of :data:`RULES` that, taken alone from fc444b0's scorer, give the
    book's flag: their names joined by ``+`` (``"characters"``, ``"echo+windows"``), or
    ``"all three"``."""
    names = list(RULES)
    for k in (1, 2):
        for combo in itertools.combinations(names, k):
            steps = {n: n in combo for n in names}
            if variant_match(completion, expected, start, **steps)[0] == book_flag:
                return "+".join(combo)
    return "all three"


def sample_ids(phrases: pd.DataFrame, per_type: int = SAMPLE_PER_TYPE) -> set[str]:
    """The ids of the first ``per_type`` phrases of each type in the phrase list (its
    order: by the absolute LASSO coefficient within a type)."""
    return set(phrases.groupby("type", sort=False)["id"].head(per_type))


def load_pilot(path, phrases: pd.DataFrame) -> pd.DataFrame:
    """The file's rows (:func:`.files.read_completions`: deduplicated as the study's
    page does), each with its phrase's ``start`` (the prompt without
    :data:`~.source.PROMPT_PREFIX`) and ``end`` (the row's ``expected``), a ``key``
    unique per row (``phrase_id|model``) and ``in_sample`` (a phrase of
    :func:`sample_ids`, on a model other than :data:`SI_MODEL`). ``path`` None reads
    :data:`PILOT_FILE` through the data registry."""
    if path is None:
        path = fetch(PILOT_FILE)
    df = read_completions(path).reset_index(drop=True)
    df["start"] = df["prompt"].map(lambda p: str(p).removeprefix(PROMPT_PREFIX))
    df["end"] = df["expected"].astype(str)
    df["key"] = df["phrase_id"].astype(str) + "|" + df["model"].astype(str)
    df["in_sample"] = df["phrase_id"].isin(sample_ids(phrases)) & (df["model"] != SI_MODEL)
    df["stored_matched"] = df["stored_matched"].map(lambda v: v if isinstance(v, bool) else str(v) == "True")
    return df


def rescore_pilot(df: pd.DataFrame, threshold: float = THRESHOLD) -> pd.DataFrame:
    """Each row of :func:`load_pilot` scored by the book's scorer (windowed, faithful
    refusals, against the row's own start and end) and by the transcribed fc444b0 scorer.

    Adds ``book_matched`` (the book's flag, an excluded row's flag included),
    ``book_distance``, ``excluded`` (refused, empty or an error: out of the rates'
    denominators) with ``refused``, ``empty`` and ``error``, ``pilot_matched`` and
    ``pilot_distance`` (:func:`pilot_fuzzy_match`),
    ``agree`` (the book's flag is the stored one) and ``cause`` (:func:`cause_of`
    for a disagreement, else empty)."""
    table = df[["key", "start", "end", "type"]].rename(columns={"key": "id"})
    frame = df.rename(columns={"phrase_id": "source_phrase_id"}).assign(phrase_id=df["key"])
    scored = score(frame, table, mode="windowed", refusal_mode="faithful", threshold=threshold)
    out = df.copy()
    out["book_matched"] = scored["matched"].astype("boolean").fillna(False).astype(bool).to_numpy()
    out["book_distance"] = scored["distance"].to_numpy()
    for column in ("excluded", "refused", "empty", "error"):
        out[column] = scored[column].astype(bool).to_numpy()
    old = [pilot_fuzzy_match(c, e) for c, e in zip(df["completion"], df["end"])]
    out["pilot_matched"] = [m for m, _ in old]
    out["pilot_distance"] = [d for _, d in old]
    out["agree"] = out["book_matched"] == out["stored_matched"]
    columns = zip(out["agree"], out["completion"], out["end"], out["start"], out["book_matched"])
    out["cause"] = ["" if a else cause_of(c, e, s, b) for a, c, e, s, b in columns]
    return out


def agreement_table(rescored: pd.DataFrame) -> pd.DataFrame:
    """Per model (the file's order): ``rows``, ``agree`` (rows whose stored flag the
    book's scorer reproduces), ``stored_matched`` and ``book_matched`` counts, and how many
    disagreements each rule explains (a column per :data:`RULES` name that occurs)."""
    out = []
    for model, g in rescored.groupby("model", sort=False):
        row = {"model": model, "rows": len(g), "agree": int(g["agree"].sum()),
               "stored_matched": int(g["stored_matched"].sum()), "book_matched": int(g["book_matched"].sum())}
        for cause, k in g.loc[~g["agree"], "cause"].value_counts().items():
            row[f"by {cause}"] = int(k)
        out.append(row)
    return pd.DataFrame(out).fillna(0).astype({c: int for c in pd.DataFrame(out).columns if c != "model"})


def _flags(matched, distance) -> list[str]:
    return [f"{'match' if m else 'no match'} ({x:.2f})" for m, x in zip(matched, distance)]


def disagreements(rescored: pd.DataFrame) -> pd.DataFrame:
    """Every row whose stored flag the book's scorer does not reproduce: model, phrase,
    both flags and distances, and the rule that explains it."""
    d = rescored[~rescored["agree"]]
    return pd.DataFrame({
        "model": d["model"], "phrase": d["phrase_id"], "type": d["type"],
        "study (fc444b0)": _flags(d["stored_matched"], pd.to_numeric(d["stored_edit_distance"])),
        "book": _flags(d["book_matched"], d["book_distance"]),
        "rule that differs": d["cause"],
    }).reset_index(drop=True)


def pilot_sample(rescored: pd.DataFrame) -> pd.DataFrame:
    """The rows of the sample the study drew before seeing any output (``in_sample``:
    the SI-table phrases and the SI model's rows left out), in
    :func:`.method_rates.score`'s columns, for :func:`.method_rates.rates`."""
    s = rescored[rescored["in_sample"]]
    return pd.DataFrame({"model": s["model"], "type": s["type"], "matched": s["book_matched"],
                         "excluded": s["excluded"], "error": s["error"], "refused": s["refused"],
                         "empty": s["empty"]}).reset_index(drop=True)


def pilot_rates(rescored: pd.DataFrame) -> pd.DataFrame:
    """:func:`.method_rates.rates` of :func:`pilot_sample` (Wilson 95% intervals), the
    excluded rows (refused or empty) out of the denominators."""
    return rates(pilot_sample(rescored))[["model", "type", "matched", "total", "rate", "ci_lo", "ci_hi"]]


def pilot_scored(rescored: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sample's rows in :func:`.method_rates.score`'s columns (``phrase_id`` the
    study's, ``distance`` the book's) and its phrase table (``id``, ``type``, ``start``,
    ``end``, one row per phrase): what :func:`.method_guess.guess_distances` takes."""
    s = rescored[rescored["in_sample"]]
    scored = pd.DataFrame({"model": s["model"], "phrase_id": s["phrase_id"], "completion": s["completion"],
                           "excluded": s["excluded"], "distance": s["book_distance"]}).reset_index(drop=True)
    table = s.drop_duplicates("phrase_id")[["phrase_id", "type", "start", "end"]]
    table = table.rename(columns={"phrase_id": "id"})
    return scored, table.reset_index(drop=True)
