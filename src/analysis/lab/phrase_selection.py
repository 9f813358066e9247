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
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from analysis.core import data
from analysis.core.cache import cached_frame, memo

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


_MARKUP_RE = re.compile(r"<[^>]{0,40}>|\b\d+:\d+:\d+\b|[`*_#|>]+|-{2,}")


def plain_prose(text: str) -> str:
    """Text with markup and reference numbers removed, for phrase selection:
    HTML tags (the baseline stories' ``<br/>``), KJV verse labels such as
    ``40:005:003``, markdown marks and rules (``---``). Without this the LASSO picks phrases
    distinctive only for their formatting."""
    return _MARKUP_RE.sub(" ", text)


_TOKEN_RE = re.compile(TOKEN_PATTERN)
#: the columns of a class's picked windows, in :func:`_pick_non_overlapping`'s rows
_PICKED = ["order", "text_id", "word_offset", "words", "coef"]


class _Tokens:
    """The words of some texts (``str.split``), in order, and their n-gram tokens.

    CountVectorizer lower-cases a document and takes the ``TOKEN_PATTERN`` matches in
    it; a document here is always words joined by single spaces, and no token spans a
    space, so its tokens are those of its words, one after the other. Each distinct
    word is tokenized once: ``word_ids`` numbers the words (into ``distinct``),
    ``token_ids`` numbers their tokens (into ``vocab``) and ``word_of`` gives each
    token's word.
    """

    def __init__(self, texts: list[list[str]]):
        ids, distinct = pd.factorize(np.array([w for words in texts for w in words], dtype=object))
        self.word_ids = ids.astype(np.int64)
        self.text_starts = np.cumsum([0] + [len(words) for words in texts])
        vocab: dict[str, int] = {}
        per_word = [[vocab.setdefault(t, len(vocab)) for t in _TOKEN_RE.findall(w.lower())] for w in distinct]
        self.vocab = list(vocab)
        lengths = np.array([len(t) for t in per_word], dtype=np.int64)
        flat = np.array([t for toks in per_word for t in toks], dtype=np.int64)
        first = np.cumsum(lengths) - lengths
        counts = lengths[self.word_ids]
        #: token index of each word's first token, and one past the last word's
        self.word_starts = np.r_[0, np.cumsum(counts)]
        shift = np.repeat(first[self.word_ids] - self.word_starts[:-1], counts)
        self.token_ids = flat[shift + np.arange(len(shift), dtype=np.int64)]
        self.word_of = np.repeat(np.arange(len(self.word_ids), dtype=np.int64), counts)

    def ngrams(self, n: int, digits: np.ndarray, base: int, width: int, end: np.ndarray) -> tuple:
        """Positions and codes of the ``n``-grams starting at each token whose last token
        lies before ``end`` (the end of its span): a code is the n-gram's tokens as
        ``digits`` (token id -> digit, 1 and up) in base ``base``, padded to ``width``."""
        pos = np.flatnonzero(np.arange(len(self.token_ids)) + n <= end)
        code = np.zeros(len(pos), dtype=np.int64)
        for k in range(width):
            code *= base
            if k < n:
                code += digits[self.token_ids[pos + k]]
        return pos, code


def _pick_non_overlapping(
    cands: pd.DataFrame, words_of: list[list[str]], n_words: int, limit: int, max_per_text: int | None = None
) -> pd.DataFrame:
    """Greedy: best first, skipping windows that overlap a pick in the same text or
    repeat one, and texts that already gave ``max_per_text`` phrases.

    ``cands`` holds ``order``, ``text_id``, ``word_offset`` and ``coef`` in rank order,
    ``words_of`` each text's words (by ``order``); a window's words are read only when
    it is not skipped for its text or its place."""
    covered: dict[str, set[int]] = {}
    seen: set[str] = set()
    picked = []
    cols = [cands[c].tolist() for c in ("order", "text_id", "word_offset", "coef")]
    for order, text_id, offset, coef in zip(*cols, strict=True):
        if len(picked) >= limit:
            break
        taken = covered.setdefault(text_id, set())
        if max_per_text is not None and len(taken) >= max_per_text * n_words:
            continue
        span = range(offset, offset + n_words)
        if any(i in taken for i in span):
            continue
        words = words_of[order][offset : offset + n_words]
        wording = " ".join(words).lower()
        if wording in seen:
            continue
        taken.update(span)
        seen.add(wording)
        picked.append((order, text_id, offset, words, coef))
    return pd.DataFrame(picked, columns=_PICKED)


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
    terms, coef = _fit(texts_a, texts_b, doc_words, ngram_range, C, seed)
    return _select(terms, coef, texts_a, texts_b, n_words, n_per_class, stride, max_per_text)


def _select(terms: list[str], coef: np.ndarray, texts_a: Mapping[str, str], texts_b: Mapping[str, str],
            n_words: int, n_per_class: int, stride: int,
            max_per_text: int | tuple[int, int] | None) -> pd.DataFrame:
    """Steps 3-4 of :func:`select_distinctive_phrases`, given the fitted model's
    features with a non-zero coefficient (``terms``, in the vectorizer's column order)
    and those coefficients."""
    caps = max_per_text if isinstance(max_per_text, tuple) else (max_per_text, max_per_text)
    parts = []
    for cap, label, texts, sign in (
        (caps[0], ENGLISH_TYPES[0], texts_a, 1.0),
        (caps[1], ENGLISH_TYPES[1], texts_b, -1.0),
    ):
        picked = _pick_class(terms, coef, texts, sign, n_words, n_per_class, stride, cap)
        if picked is not None:
            picked["type"] = label
            picked["id"] = [f"{label}_{k}" for k in range(1, len(picked) + 1)]
            parts.append(picked)
    return _phrase_table(parts, n_words)


def _documents(texts: list[list[str]], doc_words: int) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last word (indices into the texts' words in order) of each
    ``doc_words``-word document of each text."""
    first, last, base = [], [], 0
    for words in texts:
        starts = np.arange(0, len(words), doc_words, dtype=np.int64)
        first.append(base + starts)
        last.append(base + np.minimum(starts + doc_words, len(words)))
        base += len(words)
    return np.concatenate(first), np.concatenate(last)


def _fit(texts_a: Mapping[str, str], texts_b: Mapping[str, str], doc_words: int,
         ngram_range: tuple[int, int], C: float, seed: int) -> tuple[list[str], np.ndarray]:
    """Steps 1-2: the n-grams with a non-zero LASSO coefficient separating class a
    (label 1) from class b (label 0), fitted on ``doc_words``-word documents, in the
    vectorizer's column order, and their coefficients.

    The document-term matrix is CountVectorizer's (``binary=True``, lower-cased,
    ``TOKEN_PATTERN``, ``ngram_range``), entry for entry and in its order, built from
    each distinct word's tokens instead of from the documents' strings."""
    texts = [t.split() for t in texts_a.values()] + [t.split() for t in texts_b.values()]
    first, last = _documents(texts, doc_words)
    n_a = len(_documents(texts[: len(texts_a)], doc_words)[0]) if texts_a else 0
    if not n_a or n_a == len(first):
        raise ValueError("both corpora need at least one non-empty text")
    built = _doc_term_matrix(_Tokens(texts), first, last, ngram_range)
    if built is None:  # n-gram codes would overflow: the vectorizer itself
        vectorizer = _vectorizer(ngram_range)
        X = vectorizer.fit_transform([" ".join(doc) for words in texts for doc in _split(words, doc_words)])
        names = vectorizer.get_feature_names_out()
        built = X, lambda j: str(names[j])
    X, terms = built
    y = np.r_[np.ones(n_a, int), np.zeros(len(first) - n_a, int)]
    coef = _lasso_logit(C, seed).fit(X, y).coef_.ravel()
    keep = np.flatnonzero(coef)
    return [terms(int(j)) for j in keep], coef[keep]


def _vectorizer(ngram_range: tuple[int, int], vocabulary: Mapping[str, int] | None = None) -> CountVectorizer:
    return CountVectorizer(ngram_range=ngram_range, binary=True, token_pattern=TOKEN_PATTERN,
                           vocabulary=vocabulary)


def _split(words: list[str], doc_words: int) -> list[list[str]]:
    return [words[i : i + doc_words] for i in range(0, len(words), doc_words)]


def _doc_term_matrix(tokens: _Tokens, first: np.ndarray, last: np.ndarray, ngram_range: tuple[int, int]):
    """CountVectorizer's ``fit_transform`` of the documents of words ``first[i]`` to
    ``last[i]``: features sorted by their string, a row's entries in the order the
    vectorizer met their features (by document; in one, by n, then position), value 1;
    and a function from a column to its n-gram; None when the n-grams' codes would
    not fit in 64 bits, or there are none (the vectorizer says why)."""
    lo, hi = ngram_range
    order = sorted(range(len(tokens.vocab)), key=tokens.vocab.__getitem__)
    digits = np.empty(len(order) + 1, dtype=np.int64)
    digits[order] = np.arange(1, len(order) + 1)
    base = len(order) + 1
    if not order or base**hi >= 2**62:
        return None
    # words are characters of \w, all after the space: an n-gram sorts as its tokens'
    # ranks, a shorter one before the longer ones it starts
    doc_tokens = tokens.word_starts[first], tokens.word_starts[last]
    doc_of = np.repeat(np.arange(len(first), dtype=np.int64), doc_tokens[1] - doc_tokens[0])
    end = doc_tokens[1][doc_of]
    # the vectorizer meets a document's n-grams by n, then position: each n-gram's place
    # in that sequence
    per_n = np.maximum(0, (doc_tokens[1] - doc_tokens[0])[:, None] - np.arange(lo, hi + 1) + 1)
    block = np.cumsum(per_n.ravel()).reshape(per_n.shape) - per_n
    code = np.empty(int(per_n.sum()), dtype=np.int64)
    doc = np.repeat(np.arange(len(first), dtype=np.int64), per_n.sum(axis=1))
    for k, n in enumerate(range(lo, hi + 1)):
        p, c = tokens.ngrams(n, digits, base, hi, end)
        code[block[doc_of[p], k] + p - doc_tokens[0][doc_of[p]]] = c
    features, first_met, column = np.unique(code, return_index=True, return_inverse=True)
    met_rank = np.empty(len(features), dtype=np.int64)
    met_rank[np.argsort(first_met, kind="stable")] = np.arange(len(features))
    # one entry per (document, feature), ordered by document, then when the feature was met
    entry = np.sort(doc * len(features) + met_rank[column])
    entry = entry[np.r_[True, entry[1:] != entry[:-1]]]
    doc, rank = np.divmod(entry, len(features))
    columns = np.empty(len(features), dtype=np.int64)
    columns[met_rank] = np.arange(len(features))
    indices = columns[rank]
    itype = np.int64 if max(len(features), len(entry)) > np.iinfo(np.int32).max else np.int32
    indptr = np.r_[0, np.cumsum(np.bincount(doc, minlength=len(first)))].astype(itype)
    X = sp.csr_matrix((np.ones(len(entry), dtype=np.int64), indices.astype(itype), indptr),
                      shape=(len(first), len(features)))

    def term(j: int) -> str:
        c, parts = int(features[j]), []
        for _ in range(hi):
            c, d = divmod(c, base)
            if d:
                parts.append(tokens.vocab[order[d - 1]])
        return " ".join(reversed(parts))

    return X, term


def _pick_class(terms: list[str], coef: np.ndarray, texts: Mapping[str, str], sign: float,
                n_words: int, n_per_class: int, stride: int, cap: int | None) -> pd.DataFrame | None:
    """The windows of one class's ``texts``, scored by the summed coefficient of their
    features, ranked (``sign`` 1: highest first, only scores > 0; -1: lowest first, only
    scores < 0) and taken greedily; None when the texts hold no window."""
    words = [t.split() for t in texts.values()]
    n_windows = [len(range(0, len(w) - n_words + 1, stride)) for w in words]
    if not sum(n_windows):
        return None
    order = np.repeat(np.arange(len(words)), n_windows)
    window_base = np.cumsum(n_windows) - n_windows
    offset = (np.arange(sum(n_windows)) - window_base[order]) * stride
    cands = pd.DataFrame({"order": order, "text_id": np.array(list(texts), dtype=object)[order],
                          "word_offset": offset})
    cands["coef"] = _window_scores(terms, coef, words, np.array(n_windows), n_words, stride)
    cands = cands[sign * cands["coef"] > 0]
    cands = cands.assign(key=-sign * cands["coef"]).sort_values(
        ["key", "order", "word_offset"], kind="stable"
    )
    return _pick_non_overlapping(cands.drop(columns="key"), words, n_words, n_per_class, cap)


def _window_scores(terms: list[str], coef: np.ndarray, words: list[list[str]], n_windows: np.ndarray,
                   n_words: int, stride: int) -> np.ndarray:
    """Each window's summed coefficient of the features present in it (each counted
    once): the windows' CountVectorizer rows times the coefficients, the same sums in the
    same order (by column; a zero coefficient adds nothing), from the places where the
    ``terms`` occur."""
    n_total = int(n_windows.sum())
    tokens = _Tokens(words)
    term_tokens = [t.split(" ") for t in terms]
    ids = {t: i for i, t in enumerate(tokens.vocab)}
    wanted = sorted({ids[t] for toks in term_tokens for t in toks if t in ids})
    digits = np.zeros(len(tokens.vocab) + 1, dtype=np.int64)  # index -1: none
    digits[wanted] = np.arange(1, len(wanted) + 1)
    base = len(wanted) + 1
    width = max((len(t) for t in term_tokens), default=0)
    if not wanted:
        return np.zeros(n_total)
    if base**width >= 2**62:  # n-gram codes would overflow: the vectorizer itself
        vocabulary = {t: j for j, t in enumerate(terms)}
        ngrams = (min(map(len, term_tokens)), width)
        windows = [" ".join(w[i : i + n_words]) for w in words
                   for i in range(0, len(w) - n_words + 1, stride)]
        return np.asarray(_vectorizer(ngrams, vocabulary).transform(windows) @ coef).ravel()
    code_of = {}
    for col, toks in enumerate(term_tokens):
        if all(t in ids for t in toks):
            c = 0
            for k in range(width):
                c = c * base + (int(digits[ids[toks[k]]]) if k < len(toks) else 0)
            code_of[c] = col
    known = np.array(sorted(code_of), dtype=np.int64)
    known_col = np.array([code_of[c] for c in known.tolist()], dtype=np.int64)
    text_of = np.repeat(np.arange(len(n_windows)), np.diff(tokens.text_starts))
    text_end = tokens.word_starts[tokens.text_starts[1:]]
    window_base = np.cumsum(n_windows) - n_windows
    rows, cols = [], []
    for n in sorted({len(t) for t in term_tokens}):
        pos, code = tokens.ngrams(n, digits, base, width, text_end[text_of[tokens.word_of]])
        at = np.minimum(np.searchsorted(known, code), len(known) - 1)
        hit = known[at] == code
        pos, col = pos[hit], known_col[at[hit]]
        first, last = tokens.word_of[pos], tokens.word_of[pos + n - 1]
        text = text_of[first]
        first, last = first - tokens.text_starts[text], last - tokens.text_starts[text]
        # windows k * stride with k * stride <= first and last < k * stride + n_words
        k_lo = np.maximum(0, -((n_words - 1 - last) // stride))
        k_hi = np.minimum(n_windows[text] - 1, first // stride)
        count = np.maximum(0, k_hi - k_lo + 1)
        start = np.repeat(window_base[text] + k_lo - (np.cumsum(count) - count), count)
        rows.append(start + np.arange(int(count.sum()), dtype=np.int64))
        cols.append(np.repeat(col, count))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    windows = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_total, len(terms))).tocsr()
    windows.sum_duplicates()
    windows.sort_indices()
    windows.data[:] = 1.0
    return np.asarray(windows @ np.asarray(coef, dtype=float)).ravel()


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
    popular texts against the 2024–26 stories, cached under its inputs.

    The fitted model (step 2, the same for every ``n_per_class``) is memoized on its
    own (:func:`analysis.core.cache.memo`), so the phrases chapter's selection and the
    lab corpus's candidates fit it once."""
    texts = data.registry_fingerprint(["texts/popular/", "texts/baseline/"])
    key = {"n": n_per_class, "seed": seed, "stride": 5, "max_per_text": 4, "code": SELECTION_VERSION,
           "texts": texts}

    def select() -> pd.DataFrame:  # the texts are cleaned only when the selection is not cached
        popular = {k: plain_prose(v) for k, v in data.popular_texts().items()}
        baseline = {k: plain_prose(v) for k, v in data.baseline_texts().items()}
        fit_key = {"seed": seed, "C": 1.0, "doc_words": DOC_WORDS, "ngram_range": list(NGRAM_RANGE),
                   "code": SELECTION_VERSION, "texts": texts}
        terms, coef = memo("phrases-english-fit", fit_key, code=[__name__], compute=lambda: _fit(
            popular, baseline, DOC_WORDS, NGRAM_RANGE, 1.0, seed))
        return _select(terms, coef, popular, baseline, n_words=20, n_per_class=n_per_class, stride=5,
                       max_per_text=(4, -(-n_per_class // len(baseline))))

    return cached_frame("phrases-english", key, select)
