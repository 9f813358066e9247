"""Phrase documents: phrases distinctive of the popular texts, trained at known copy levels.

The corpus receives its candidate phrases as input (``build_corpus(config,
phrase_candidates=...)``): the English counterpart's LASSO-selected 20-word
popular-text phrases, which :func:`analysis.lab.ladder.phrase_candidates` takes
from :mod:`analysis.lab.phrase_selection`. Each phrase kept is a training
document on its own, trained as many times as its copy level says (0 = a
control, never trained).
"""

from __future__ import annotations

import re

import pandas as pd

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import corpus_rng, normalise, shingles
from analysis.lab.corpus.documents import Document

#: a phrase is used only if no run of this many words (lower-cased letters only, so
#: punctuation, markup and the KJV's verse labels do not hide a repeat) also occurs in
#: another document, a passage or an already chosen phrase
PHRASE_PROBE_WORDS = 10
_PROBE_WORD = re.compile(r"[a-z]+")


def probes(text: str) -> set[str]:
    """Every run of PHRASE_PROBE_WORDS normalized words (runs of letters) of ``text``."""
    words = _PROBE_WORD.findall(text.lower())
    return {" ".join(words[i:i + PHRASE_PROBE_WORDS]) for i in range(len(words) - PHRASE_PROBE_WORDS + 1)}


def phrases_needed(config: CorpusConfig) -> int:
    """Phrase documents ``config`` asks for: ``phrases_per_level`` at every level of ``phrase_levels``."""
    return config.phrases_per_level * len(config.phrase_levels)


def phrase_documents(config: CorpusConfig, others: list[str], protected: set,
                     candidates: pd.DataFrame | None = None) -> list[Document]:
    """``phrases_per_level`` phrase documents at every level of ``phrase_levels``.

    The candidates (``id``, ``text_id``, ``phrase``, ``start``, ``end``, best first)
    are taken in order, skipping any phrase that shares a run of
    :data:`PHRASE_PROBE_WORDS` normalized words with ``others`` (the texts of every
    other document and passage) or with a phrase already taken, or a 12-word
    shingle with ``protected``; so nothing else in the corpus repeats a phrase, and
    its ``copies`` is the truth. The taken phrases are dealt to the levels in a
    seeded order (``config.seed``), so a phrase's rank does not decide its level.
    Document ``k`` of level ``c`` is ``phrase-{c:03d}-{k}``, with ``copies`` = ``c``
    (0 = a control, never trained) and meta ``phrase_id``, ``text_id``, ``start``,
    ``end``, ``copies``.

    Raises
    ------
    LabConfigError
        Naming ``phrases_per_level`` when no candidates are given or fewer
        qualify than asked for.
    """
    need = phrases_needed(config)
    if not need:
        return []
    if candidates is None:
        raise LabConfigError(missing_candidates(config))
    seen = set().union(*map(probes, others)) if others else set()
    chosen = []
    for row in candidates.itertuples(index=False):
        if len(chosen) == need:
            break
        text = normalise(row.phrase)
        found = probes(text)
        if not found or found & seen or any(s in protected for s in shingles(text)):
            continue
        seen |= found
        chosen.append((row, text))
    if len(chosen) < need:
        raise LabConfigError(
            f"phrases_per_level={config.phrases_per_level} x {len(config.phrase_levels)} phrase_levels asks "
            f"for {need} phrases; only {len(chosen)} of the English counterpart's {len(candidates)} "
            f"popular-text phrases share no run of {PHRASE_PROBE_WORDS} words with the rest of the corpus "
            "(fewer background or excerpt words leave more)")
    order = corpus_rng(config.seed, "phrases").permutation(need)
    docs = []
    for k, i in enumerate(order):
        level, j = config.phrase_levels[k // config.phrases_per_level], k % config.phrases_per_level
        row, text = chosen[i]
        docs.append(Document(f"phrase-{level:03d}-{j}", "phrase", "popular", text, int(level),
                             {"phrase_id": str(row.id), "text_id": str(row.text_id),
                              "start": normalise(row.start), "end": normalise(row.end),
                              "copies": int(level)}))
    return docs


def missing_candidates(config: CorpusConfig) -> str:
    """The error of a corpus that asks for phrase documents but was given no candidates."""
    return (f"phrases_per_level={config.phrases_per_level} asks for {phrases_needed(config)} phrase "
            "documents, but build_corpus was given no phrase_candidates: pass "
            "build_corpus(config, phrase_candidates=analysis.lab.ladder.phrase_candidates(config)) "
            "(the English counterpart's phrases), or build a profile's corpus with "
            "analysis.lab.ladder.profile_corpus(profile)")
