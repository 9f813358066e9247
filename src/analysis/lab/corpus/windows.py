"""The popular texts' windows: the excerpts trained on, the held-out windows, the
book passages injected, and the background cut from what is left.

Every window that must stay out of training (held-out windows, baseline stories,
passage injections) and every excerpt window *claims* all occurrences of its
shingles in every text (:class:`~analysis.lab.corpus.shingles.Claims`), and
background is cut only from unclaimed text, after dropping text whose shingles
occur in a longer text (so Matthew is background only once, inside the Bible);
the background then claims its own text, and the passages are cut from what is
left after it, so the base corpus does not change with the number of passages.
"""

from __future__ import annotations

import numpy as np

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import (
    BACKGROUND_DOC_WORDS,
    MIN_BACKGROUND_DOC_WORDS,
    corpus_rng,
    n_injections,
)
from analysis.lab.corpus.documents import Document
from analysis.lab.corpus.shingles import Claims, TextIndex


def _window_sizes(n: int, excerpt: int, heldout: int) -> tuple[int, int, bool]:
    """Excerpt and held-out sizes for a text of n words, shrunk proportionally if short."""
    if n >= excerpt + heldout:
        return excerpt, heldout, False
    scale = n / (excerpt + heldout)
    return int(excerpt * scale), int(heldout * scale), True


def _place_windows(claims: Claims, g0: int, g1: int, excerpt: int, heldout: int,
                   rng: np.random.Generator) -> tuple[int, int] | None:
    """Seeded starts (held-out, excerpt) of two disjoint unclaimed windows, or None."""
    if not heldout:
        options = claims.free_starts(g0, g1, excerpt)
        return (-1, int(options[rng.integers(len(options))])) if len(options) else None
    candidates = claims.free_starts(g0, g1, heldout)
    for h in candidates[rng.permutation(len(candidates))][:2_000]:
        local = claims.mask_if_claimed(g0, g1, int(h), int(h) + heldout)
        options = claims.free_starts(g0, g1, excerpt, local)
        if len(options):
            return int(h), int(options[rng.integers(len(options))])
    return None


def popular_copies(config: CorpusConfig, text_ids: list[str]) -> dict[str, int]:
    """Copies of each popular text's excerpt: ``popular_copies`` for every text, or,
    with ``popular_max_copies`` set, a geometric spread from ``popular_copies`` to
    ``popular_max_copies`` (rounded) over the texts in a seeded order, so popularity
    is graded as on the web and every copy level has texts of every kind."""
    ids = sorted(text_ids)
    if not config.popular_max_copies or len(ids) < 2:
        return {t: config.popular_copies for t in ids}
    levels = np.geomspace(config.popular_copies, config.popular_max_copies, len(ids)).round().astype(int)
    order = corpus_rng(config.seed, "popular-copies").permutation(len(ids))
    return {ids[i]: int(levels[k]) for k, i in enumerate(order)}


def popular_windows(config: CorpusConfig, index: TextIndex, claims: Claims):
    """Excerpt (training) and held-out windows of every popular text, shortest text first."""
    rng = corpus_rng(config.seed, "popular-windows")
    popular_ids = [t for t, p in zip(index.ids, index.popular) if p]
    lengths = {t: index.span(t)[1] - index.span(t)[0] for t in popular_ids}
    copies = popular_copies(config, popular_ids)
    excerpts, heldouts = [], []
    for text_id in sorted(popular_ids, key=lambda t: (lengths[t], t)):
        g0, g1 = index.span(text_id)
        e_len, h_len, shrunk = _window_sizes(g1 - g0, config.popular_excerpt_words,
                                             config.heldout_words_per_text)
        placed = _place_windows(claims, g0, g1, e_len, h_len, rng)
        if placed is None:
            raise LabConfigError(
                f"popular_excerpt_words={config.popular_excerpt_words} and heldout_words_per_text="
                f"{config.heldout_words_per_text}: no room for both windows in {text_id!r} "
                f"({g1 - g0} words, part of it already taken by overlapping texts)")
        h, e = placed
        meta = {"shrunk": shrunk}
        if h_len:
            claims.claim(h, h + h_len)
            heldouts.append(Document(
                f"heldout-{text_id}", "heldout", "popular", index.words(h, h + h_len), 0,
                {"text_id": text_id, "word_start": h - g0, "word_end": h - g0 + h_len, **meta}))
        claims.claim(e, e + e_len)
        excerpts.append(Document(
            f"popular-{text_id}", "popular", "popular", index.words(e, e + e_len), copies[text_id],
            {"text_id": text_id, "word_start": e - g0, "word_end": e - g0 + e_len, **meta}))
    by_id = lambda d: d.doc_id  # noqa: E731
    return sorted(excerpts, key=by_id), sorted(heldouts, key=by_id)


def passages(config: CorpusConfig, index: TextIndex, claims: Claims) -> list[dict]:
    """Book passages for the "passage" task from text no training document will contain."""
    need = n_injections(config) if "passage" in config.injection_tasks else 0
    rng = corpus_rng(config.seed, "passages")
    popular_ids = [t for t, p in zip(index.ids, index.popular) if p]
    cycle = [popular_ids[i] for i in rng.permutation(len(popular_ids))]
    out, misses, k = [], 0, 0
    while len(out) < need:
        text_id = cycle[k % len(cycle)]
        k += 1
        g0, g1 = index.span(text_id)
        options = claims.free_starts(g0, g1, config.injection_words)
        if not len(options):
            misses += 1
            if misses > len(cycle):
                raise LabConfigError(
                    f"per_task_per_level={config.per_task_per_level}: only {len(out)} of {need} "
                    f"passages of {config.injection_words} words fit in unclaimed popular text")
            continue
        misses = 0
        s = int(options[rng.integers(len(options))])
        claims.claim(s, s + config.injection_words)
        out.append({"text": index.words(s, s + config.injection_words),
                    "meta": {"text_id": text_id, "word_start": s - g0,
                             "word_end": s - g0 + config.injection_words}})
    return out


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def background(config: CorpusConfig, index: TextIndex, claims: Claims) -> list[Document]:
    """~500-word chunks of unclaimed, non-duplicate popular text, sampled up to background_words
    and claimed (so the passages drawn after them come from other text)."""
    chunks = []  # (text_id, global start, global end)
    for i, text_id in enumerate(index.ids):
        if not index.popular[i]:
            continue
        g0, g1 = int(index.starts[i]), int(index.ends[i])
        free = ~(claims.mask[g0:g1] | index.dup[g0:g1])
        for a, b in _runs(free):
            if b - a < MIN_BACKGROUND_DOC_WORDS:
                continue
            n_chunks = max(1, round((b - a) / BACKGROUND_DOC_WORDS))
            cuts = np.linspace(a, b, n_chunks + 1).round().astype(int)
            chunks += [(text_id, g0 + int(s), g0 + int(e)) for s, e in zip(cuts[:-1], cuts[1:])]
    available = sum(e - s for _, s, e in chunks)
    if available < config.background_words:
        raise LabConfigError(
            f"background_words={config.background_words} exceeds the {available} words of popular "
            "text left outside the excerpt and held-out windows")
    chosen, total = [], 0
    for j in corpus_rng(config.seed, "background").permutation(len(chunks)):
        if total >= config.background_words:
            break
        text_id, s, e = chunks[j]
        e = min(e, s + config.background_words - total)
        chosen.append((text_id, s, e))
        total += e - s
    chosen.sort()
    for _, s, e in chosen:
        claims.claim(s, e)
    docs = []
    for k, (text_id, s, e) in enumerate(chosen):
        g0 = index.span(text_id)[0]
        docs.append(Document(f"background-{k:05d}", "background", "popular", index.words(s, e), 1,
                             {"text_id": text_id, "word_start": s - g0, "word_end": e - g0}))
    return docs

