"""The phrase selection's fast path selects what the vectorizer's selection selected.

:func:`analysis.lab.phrase_selection.select_distinctive_phrases` builds the
document-term matrix and scores the candidate windows from each distinct word's
tokens instead of running CountVectorizer over every document and window. The
phrases it selects, and the lab corpus built with them, must not change: here it is
compared with the vectorizer's selection as it was written before (:func:`_reference`)
on small corpora chosen to stress the tokenization, and, with the data mirror, the
English counterpart's selections are pinned to the hashes of the vectorizer's.
"""

from __future__ import annotations

import hashlib
import os
import random

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from analysis.core import data
from analysis.lab import phrase_selection as ps

# -- the vectorizer's selection, as written before the fast path ----------------------------


def _reference(texts_a, texts_b, n_words=20, n_per_class=1000, C=1.0, seed=0, doc_words=ps.DOC_WORDS,
               ngram_range=ps.NGRAM_RANGE, stride=1, max_per_text=None):
    def documents(texts):
        docs = []
        for text in texts.values():
            words = text.split()
            docs += [" ".join(words[i : i + doc_words]) for i in range(0, len(words), doc_words)]
        return docs

    def candidates(texts):
        rows = []
        for order, (text_id, text) in enumerate(texts.items()):
            words = text.split()
            for offset in range(0, len(words) - n_words + 1, stride):
                rows.append((order, text_id, offset, words[offset : offset + n_words]))
        return pd.DataFrame(rows, columns=["order", "text_id", "word_offset", "words"])

    def pick(cands, limit, cap):
        covered, seen, picked = {}, set(), []
        for row in cands.itertuples(index=False):
            if len(picked) >= limit:
                break
            span = range(row.word_offset, row.word_offset + n_words)
            taken = covered.setdefault(row.text_id, set())
            wording = " ".join(row.words).lower()
            if wording in seen or any(i in taken for i in span):
                continue
            if cap is not None and len(taken) >= cap * n_words:
                continue
            taken.update(span)
            seen.add(wording)
            picked.append(row)
        return pd.DataFrame(picked, columns=cands.columns)

    docs_a, docs_b = documents(texts_a), documents(texts_b)
    vectorizer = CountVectorizer(ngram_range=ngram_range, binary=True, token_pattern=ps.TOKEN_PATTERN)
    X = vectorizer.fit_transform(docs_a + docs_b)
    y = np.r_[np.ones(len(docs_a), int), np.zeros(len(docs_b), int)]
    coef = ps._lasso_logit(C, seed).fit(X, y).coef_.ravel()
    caps = max_per_text if isinstance(max_per_text, tuple) else (max_per_text, max_per_text)
    parts = []
    for cap, label, texts, sign in ((caps[0], "popular", texts_a, 1.0), (caps[1], "baseline", texts_b, -1.0)):
        cands = candidates(texts)
        if cands.empty:
            continue
        cands["coef"] = np.asarray(vectorizer.transform(cands["words"].map(" ".join)) @ coef).ravel()
        cands = cands[sign * cands["coef"] > 0]
        cands = cands.assign(key=-sign * cands["coef"]).sort_values(["key", "order", "word_offset"],
                                                                    kind="stable")
        picked = pick(cands.drop(columns="key"), n_per_class, cap)
        picked["type"] = label
        picked["id"] = [f"{label}_{k}" for k in range(1, len(picked) + 1)]
        parts.append(picked)
    return ps._phrase_table(parts, n_words)


# -- small corpora ---------------------------------------------------------------------------

WORDS = ("the The THE of and to a I it's don't well--then so—then ΟΔΟΣ Straße naïve café ﬁne "
         "42 3.14 _under_ <br/> -- ... ! « » “quoted” x1y2 ΣΑΣ İstanbul e.g. U.S.A. — a_b").split()


def _corpus(rng: random.Random, n_texts: int, lengths: tuple[int, int], bias: list[str]) -> dict[str, str]:
    texts = {}
    for t in range(n_texts):
        words = [rng.choice(bias if rng.random() < 0.3 else WORDS) for _ in range(rng.randint(*lengths))]
        texts[f"t{t}"] = " ".join(words) + rng.choice(["", "\n", "  \t", "\u00a0end"])
    return texts


CASES = [
    dict(n_words=6, n_per_class=8, C=1.0, doc_words=30, ngram_range=(1, 2), stride=1, max_per_text=None),
    dict(n_words=5, n_per_class=20, C=0.5, doc_words=17, ngram_range=(1, 3), stride=2, max_per_text=(2, 9)),
    dict(n_words=8, n_per_class=5, C=2.0, doc_words=40, ngram_range=(2, 2), stride=3, max_per_text=1),
    dict(n_words=4, n_per_class=50, C=1.0, doc_words=10, ngram_range=(1, 1), stride=5, max_per_text=(4, 3)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_fast_selection_is_the_vectorizers(case):
    rng = random.Random(case)
    texts_a = _corpus(rng, 7, (0, 160), ["Lord", "thee", "thou", "hath"])
    texts_b = _corpus(rng, 5, (3, 120), ["phone", "app", "online", "email"])
    got = ps.select_distinctive_phrases(texts_a, texts_b, seed=case, **CASES[case])
    want = _reference(texts_a, texts_b, seed=case, **CASES[case])
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["coef"].to_numpy().tobytes() == want["coef"].to_numpy().tobytes()


def test_the_document_term_matrix_is_the_vectorizers_entry_for_entry():
    rng = random.Random(7)
    texts = [t.split() for t in _corpus(rng, 9, (0, 90), ["Lord", "phone"]).values()]
    first, last = ps._documents(texts, 13)
    X, term = ps._doc_term_matrix(ps._Tokens(texts), first, last, (1, 2))
    vectorizer = CountVectorizer(ngram_range=(1, 2), binary=True, token_pattern=ps.TOKEN_PATTERN)
    want = vectorizer.fit_transform([" ".join(d) for w in texts for d in ps._split(w, 13)])
    for attr in ("indptr", "indices", "data"):
        got_a, want_a = getattr(X, attr), getattr(want, attr)
        assert got_a.dtype == want_a.dtype and np.array_equal(got_a, want_a), attr
    assert [term(j) for j in range(X.shape[1])] == vectorizer.get_feature_names_out().tolist()


def test_the_fast_selection_needs_both_corpora_as_before():
    with pytest.raises(ValueError, match="both corpora"):
        ps.select_distinctive_phrases({"a": "one two"}, {"b": " "})


# -- the English counterpart's selections, pinned ------------------------------------------------

needs_mirror = pytest.mark.skipif(not os.environ.get(data.MIRROR_ENV),
                                  reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror")

#: sha256 (16 hex digits) of each selection's CSV and dtypes, as the vectorizer's code
#: (SELECTION_VERSION 2) selected them: the phrases chapter's (60) and the lab corpus's (1,000)
PINNED = {60: "e857fd36ed475739", 1000: "27db00504782a59c"}


def _digest(frame: pd.DataFrame) -> str:
    blob = frame.to_csv(index=False) + repr([str(d) for d in frame.dtypes])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@pytest.mark.slow
@needs_mirror
def test_the_english_selections_are_the_vectorizers(monkeypatch, tmp_path):
    """Both selections from one fit (the second reads it from the memo), each the
    vectorizer's byte for byte; the lab corpus's candidates are its popular rows."""
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    assert ps.SELECTION_VERSION == 2
    fits = []
    fit = ps._fit
    monkeypatch.setattr(ps, "_fit", lambda *a: fits.append(1) or fit(*a))
    assert {n: _digest(ps.english_phrases(n, seed=0)) for n in PINNED} == PINNED
    assert len(fits) == 1
