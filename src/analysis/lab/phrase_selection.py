"""The phrases source's selection of distinctive phrases (a LASSO logistic
regression on word n-grams, popular texts against texts a model cannot have
seen), and the English counterpart's phrases it selects.

It sits in the lab's layer because the lab's corpus holds the phrases it selects
(:func:`analysis.lab.corpus.build_corpus` receives them as input); the phrases
chapter (:mod:`analysis.phrases`) re-exports it and shows it as its method.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from analysis.core import data
from analysis.core.cache import cached_frame

ENGLISH_TYPES = ("popular", "baseline")
DOC_WORDS = 200
SELECTION_VERSION = 2
NGRAM_RANGE = (1, 2)
# Keep one-letter words ("a", "I"), which scikit-learn's default pattern drops.
TOKEN_PATTERN = r"(?u)\b\w+\b"
PHRASE_COLUMNS = ["id", "type", "text_id", "phrase", "start", "end", "coef", "word_offset"]


def _lasso_logit(C: float, seed: int) -> LogisticRegression:
    """L1-penalised logistic regression on either side of scikit-learn 1.8.

    scikit-learn 1.8 deprecated ``penalty`` (``l1_ratio=1`` is its L1 spelling);
    before 1.8, ``l1_ratio`` is ignored unless ``penalty="elasticnet"``.
    """
    if LogisticRegression().get_params()["penalty"] == "deprecated":
        return LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", random_state=seed)
    return LogisticRegression(penalty="l1", C=C, solver="liblinear", random_state=seed)


def _documents(texts: Mapping[str, str], doc_words: int) -> list[str]:
    docs = []
    for text in texts.values():
        words = text.split()
        docs += [" ".join(words[i : i + doc_words]) for i in range(0, len(words), doc_words)]
    return docs


def _candidates(texts: Mapping[str, str], n_words: int, stride: int = 1) -> pd.DataFrame:
    rows = []
    for order, (text_id, text) in enumerate(texts.items()):
        words = text.split()
        for offset in range(0, len(words) - n_words + 1, stride):
            rows.append((order, text_id, offset, words[offset : offset + n_words]))
    return pd.DataFrame(rows, columns=["order", "text_id", "word_offset", "words"])


_MARKUP_RE = re.compile(r"<[^>]{0,40}>|\b\d+:\d+:\d+\b|[`*_#|>]+|-{2,}")


def plain_prose(text: str) -> str:
    """Text with markup and reference numbers removed, for phrase selection:
    HTML tags (the baseline stories' ``<br/>``), KJV verse labels such as
    ``40:005:003``, markdown marks and rules (``---``). Without this the LASSO picks phrases
    distinctive only for their formatting."""
    return _MARKUP_RE.sub(" ", text)


def _pick_non_overlapping(
    cands: pd.DataFrame, n_words: int, limit: int, max_per_text: int | None = None
) -> pd.DataFrame:
    """Greedy: best first, skipping windows that overlap a pick in the same text or
    repeat one, and texts that already gave ``max_per_text`` phrases."""
    covered: dict[str, set[int]] = {}
    seen: set[str] = set()
    picked = []
    for row in cands.itertuples(index=False):
        if len(picked) >= limit:
            break
        span = range(row.word_offset, row.word_offset + n_words)
        taken = covered.setdefault(row.text_id, set())
        wording = " ".join(row.words).lower()
        if wording in seen or any(i in taken for i in span):
            continue
        if max_per_text is not None and len(taken) >= max_per_text * n_words:
            continue
        taken.update(span)
        seen.add(wording)
        picked.append(row)
    return pd.DataFrame(picked, columns=cands.columns)


def select_distinctive_phrases(
    texts_a: Mapping[str, str],
    texts_b: Mapping[str, str],
    n_words: int = 20,
    n_per_class: int = 1000,
    C: float = 1.0,
    seed: int = 0,
    doc_words: int = DOC_WORDS,
    ngram_range: tuple[int, int] = NGRAM_RANGE,
    stride: int = 1,
    max_per_text: int | tuple[int, int] | None = None,
) -> pd.DataFrame:
    """Pick the 20-word phrases most distinctive of each of two English corpora.

    English counterpart of the study's "LASSO-selected 20-gram phrases" (its
    phrase list carries the LASSO coefficient as ``coef``: positive for state
    media, negative for CulturaX). The selection code itself is not public, so
    this reconstructs the step:

    1. each text is split on whitespace into words and cut into non-overlapping
       documents of ``doc_words`` words (the last one may be shorter);
    2. word n-gram presence features (``CountVectorizer``, ``binary=True``,
       lower-cased, ``ngram_range``) feed an L1-penalised logistic regression
       (liblinear, inverse strength ``C``) separating class a (label 1, the
       popular texts) from class b (label 0, the 2024-26 baseline stories);
    3. every ``n_words``-word window of every text (stride one word) gets a
       score: the summed coefficient of the features present in it;
    4. per class, windows of that class's texts are ranked (class a: highest
       score first, only scores > 0; class b: lowest first, only scores < 0)
       and taken greedily, skipping a window that overlaps one already taken
       from the same text or repeats one's wording (case-insensitive), until
       ``n_per_class`` are taken or candidates run out.

    Parameters
    ----------
    texts_a, texts_b : mapping of str to str
        Text id to full text, for the popular and the baseline corpus.
    n_words : int
        Phrase length in words; ``start`` is the first ``n_words // 2`` words.
    n_per_class : int
        Most phrases returned per class (the study used 1,000).
    C : float
        Inverse regularization strength; smaller keeps fewer n-grams.
    seed : int
        ``random_state`` of the solver; with it the output is deterministic.
    doc_words : int
        Words per training document.
    ngram_range : tuple of int
        Word n-gram lengths used as features.
    stride : int
        Step in words between candidate windows (1 scores every window; the
        chapter uses a larger step to keep the 3.6M-word popular corpus fast).
    max_per_text : int or (int, int), optional
        Most phrases taken from one text (per class if a pair), so one long
        text (the KJV) cannot supply a whole class.

    Returns
    -------
    DataFrame
        Columns ``id`` (``"popular_1"``, ... in rank order), ``type``
        (``"popular"``/``"baseline"``), ``text_id``, ``phrase``, ``start``,
        ``end``, ``coef`` (the window's summed coefficient) and ``word_offset``
        (index of the first word in its text). Popular rows come first.
    """
    vectorizer, coef = _fit(texts_a, texts_b, doc_words, ngram_range, C, seed)
    caps = max_per_text if isinstance(max_per_text, tuple) else (max_per_text, max_per_text)
    parts = []
    for cap, label, texts, sign in (
        (caps[0], ENGLISH_TYPES[0], texts_a, 1.0),
        (caps[1], ENGLISH_TYPES[1], texts_b, -1.0),
    ):
        picked = _pick_class(vectorizer, coef, texts, sign, n_words, n_per_class, stride, cap)
        if picked is not None:
            picked["type"] = label
            picked["id"] = [f"{label}_{k}" for k in range(1, len(picked) + 1)]
            parts.append(picked)
    return _phrase_table(parts, n_words)


def _fit(texts_a: Mapping[str, str], texts_b: Mapping[str, str], doc_words: int,
         ngram_range: tuple[int, int], C: float, seed: int) -> tuple[CountVectorizer, np.ndarray]:
    """Steps 1-2: the n-gram vectorizer and the LASSO coefficients separating class a
    (label 1) from class b (label 0), fitted on ``doc_words``-word documents."""
    docs_a, docs_b = _documents(texts_a, doc_words), _documents(texts_b, doc_words)
    if not docs_a or not docs_b:
        raise ValueError("both corpora need at least one non-empty text")
    vectorizer = CountVectorizer(ngram_range=ngram_range, binary=True, token_pattern=TOKEN_PATTERN)
    X = vectorizer.fit_transform(docs_a + docs_b)
    y = np.r_[np.ones(len(docs_a), int), np.zeros(len(docs_b), int)]
    return vectorizer, _lasso_logit(C, seed).fit(X, y).coef_.ravel()


def _pick_class(vectorizer: CountVectorizer, coef: np.ndarray, texts: Mapping[str, str], sign: float,
                n_words: int, n_per_class: int, stride: int, cap: int | None) -> pd.DataFrame | None:
    """The windows of one class's ``texts``, scored by the summed coefficient of their
    features, ranked (``sign`` 1: highest first, only scores > 0; -1: lowest first, only
    scores < 0) and taken greedily; None when the texts hold no window."""
    cands = _candidates(texts, n_words, stride)
    if cands.empty:
        return None
    windows = vectorizer.transform(cands["words"].map(" ".join))
    cands["coef"] = np.asarray(windows @ coef).ravel()
    cands = cands[sign * cands["coef"] > 0]
    cands = cands.assign(key=-sign * cands["coef"]).sort_values(
        ["key", "order", "word_offset"], kind="stable"
    )
    return _pick_non_overlapping(cands.drop(columns="key"), n_words, n_per_class, cap)


def _phrase_table(parts: list[pd.DataFrame], n_words: int) -> pd.DataFrame:
    """The picked windows of both classes as the phrase table (:data:`PHRASE_COLUMNS`)."""
    if not parts:
        return pd.DataFrame(columns=PHRASE_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    half = n_words // 2
    out["phrase"] = out["words"].map(" ".join)
    out["start"] = out["words"].map(lambda w: " ".join(w[:half]))
    out["end"] = out["words"].map(lambda w: " ".join(w[half:]))
    return out[PHRASE_COLUMNS].reset_index(drop=True)


# -- the English counterpart's selection ----------------------------------------------


def english_phrases(n_per_class: int, seed: int = 0) -> pd.DataFrame:
    """The English counterpart's phrases: :func:`select_distinctive_phrases` on the
    popular texts against the 2024–26 stories, cached under its inputs."""
    popular = {k: plain_prose(v) for k, v in data.popular_texts().items()}
    baseline = {k: plain_prose(v) for k, v in data.baseline_texts().items()}
    key = {"n": n_per_class, "seed": seed, "stride": 5, "max_per_text": 4, "code": SELECTION_VERSION,
           "texts": data.registry_fingerprint(["texts/popular/", "texts/baseline/"])}
    return cached_frame("phrases-english", key, lambda: select_distinctive_phrases(
        popular, baseline, n_per_class=n_per_class, seed=seed, stride=5,
        max_per_text=(4, -(-n_per_class // len(baseline)))))
