"""Benchmark the distributional chapter's counting code on the default lab corpus.

Measures, in one run on the same machine:

* the infini-gram index of the training stream (``corpus.training_texts()``) in
  the lab tokenizer, built cold into a temporary folder (the issue's bound: ≤ 1 min);
* the exact document index (:func:`analysis.ngrams.build_doc_index`, documents
  weighted by their copies), for both stopword rules;
* co-occurrence queries ``C((x, y))`` per second (the issue's bound: ≥ 10k pairs/s)
  on a batch of real pairs: the task-gram pairs of the knowledge items
  (questions × answers, n = 2, 3, 5) topped up with question n-gram × answer
  n-gram pairs of different items, drawn at random, to ``--pairs``;
* ∞-gram count queries and ``infgram_prob`` queries per second (token ids of
  the same n-grams).

    python scripts/bench_ngrams.py [--profile default] [--pairs 50000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from benchutil import best_of

from analysis import ngrams as G
from analysis.lab import ladder, profiles
from analysis.lab.tokenizer import get_tokenizer


def real_pairs(items: list[dict], n: int, drop: bool, total: int, seed: int = 0):
    """Task-gram pairs of the items, topped up with cross-item pairs of their n-grams to ``total``."""
    table = G.task_gram_pairs([q for q, _ in items], [a for _, a in items], n, drop_stopwords=drop)
    xs, ys = list(table["x"]), list(table["y"])
    qgrams = sorted({g for q, _ in items for g in G.ngrams(q, n, drop)})
    agrams = sorted({g for _, a in items for g in (G.ngrams(a, n, drop) or [tuple(G.words(a))])})
    rng = np.random.default_rng(seed)
    extra = max(0, total - len(xs))
    xi = rng.integers(0, len(qgrams), extra)
    yi = rng.integers(0, len(agrams), extra)
    return len(table), xs + [qgrams[i] for i in xi], ys + [agrams[i] for i in yi]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--pairs", type=int, default=50_000)
    args = parser.parse_args()

    t0 = time.perf_counter()
    corpus = ladder.profile_corpus(args.profile)
    texts = corpus.training_texts()
    tok = get_tokenizer(texts, corpus.fingerprint(), profiles.get_profile(args.profile).vocab_size)
    n_words = sum(len(t.split()) for t in texts)
    print(f"corpus {args.profile}: {len(corpus.documents)} documents, {len(texts)} in the stream, "
          f"{n_words} words; corpus + tokenizer {time.perf_counter() - t0:.1f} s")

    # -- infini-gram index, cold ----------------------------------------------
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "index"
        t0 = time.perf_counter()
        G.build_index(texts, tok, folder)
        build = time.perf_counter() - t0
        index = G.open_index(folder)
        meta = index.meta
        print(f"infini-gram index: {meta['n_docs']} docs, {meta['n_tokens']} tokens, built in {build:.2f} s "
              f"(tokenize + write + suffix array; cpus={meta['cpus']})")

        # -- exact document index ---------------------------------------------
        docs = corpus.documents
        items = list(dict.fromkeys((d.meta["question"], d.meta["answer"]) for d in docs
                                   if d.kind == "knowledge" and d.meta["role"] == "fact"))
        weights = [d.copies for d in docs]
        for drop in (True, False):
            t0 = time.perf_counter()
            dindex = G.build_doc_index([d.text for d in docs], max_n=5, drop_stopwords=drop, weights=weights)
            print(f"doc index (drop_stopwords={drop}): {dindex.n_grams} grams of length 1..5, "
                  f"{len(dindex.docs)} postings, built in {time.perf_counter() - t0:.2f} s")
            ns = (2, 3) if drop else (5,)
            for n in ns:
                n_task, xs, ys = real_pairs(items, n, drop, args.pairs)
                sec, cxy = best_of(G.pair_count, dindex, xs, ys)
                nonzero = int((cxy > 0).sum())
                print(f"  n={n}: {len(xs)} pairs ({n_task} task-gram pairs + random cross-item pairs), "
                      f"C(x,y) in {sec:.3f} s = {len(xs) / sec:,.0f} pairs/s; {nonzero} pairs co-occur")
                sec, _ = best_of(G.taskgram_prob, dindex, xs, ys)
                print(f"        taskgram_prob (C(x,y)/C(x)) {len(xs) / sec:,.0f} pairs/s")

        # -- ∞-gram queries -----------------------------------------------------
        grams = sorted({g for q, a in items for n in (2, 3, 5) for g in G.ngrams(q + " " + a, n, False)})
        # a leading space: a word inside a text is encoded with the space before it
        encoded = tok([" " + " ".join(g) for g in grams], add_special_tokens=False)["input_ids"]
        seqs = [ids for ids in encoded if ids]
        sec, counts = best_of(G.token_counts, index, seqs)
        print(f"infini-gram count: {len(seqs)} token sequences in {sec:.3f} s = "
              f"{len(seqs) / sec:,.0f} queries/s; {int((counts > 0).sum())} found")
        probe = [(s[:-1], s[-1]) for s in seqs if len(s) > 1][:5000]
        sec, _ = best_of(lambda: [G.infgram_prob(index, c, t) for c, t in probe])
        print(f"infini-gram infgram_prob: {len(probe) / sec:,.0f} queries/s")


if __name__ == "__main__":
    main()
