"""The lab's pretraining corpus: known composition, known held-out text, known injections.

:func:`build_corpus` turns a :class:`~analysis.lab.config.CorpusConfig` (and the
phrase candidates it is given) into a :class:`Corpus`, deterministically given
``config.seed``:

* **popular** documents: one contiguous excerpt window of every popular text,
  trained ``popular_copies`` times (the size chapter probes inside them);
* **background** documents: ~500-word chunks of the rest of the popular texts,
  trained once, sampled up to ``background_words``;
* **knowledge** documents: TriviaQA facts as a distribution of co-occurrences:
  a short stretch of a question's words beside its answer in a chosen number of
  documents of two to four sentences (the span and the answer in one sentence, or
  in two with filler between), never-trained control facts, the stretch without the
  answer (alone or beside another fact's answer) in others, and answers listed
  together; no training document holds a question, or any 8-word n-gram of one
  (the source's decontamination rule, :func:`contaminated`);
* **reasoning** documents: GSM8K-style worked arithmetic problems generated
  from templates with random numbers, trained once;
* **phrase** documents: the phrases chapter's English counterpart (20-word
  phrases distinctive of the popular texts, received as input: the ladder hands
  them over from :mod:`analysis.lab.phrase_selection`), each on its own, trained
  0 (a control), 1, 4, ... times as ``phrase_levels`` says; only phrases that
  share no 10-word run with any other document are used, so a phrase's
  ``copies`` is exactly how often the model saw it;
* **held-out** documents (never trained): one window of every popular text and
  the four baseline stories (published 2024-26);
* **injections**: sequences of six tasks at each duplicate level, which the
  trainer inserts (``copies`` times, 0 = control); they are not in
  :meth:`Corpus.training_texts`.

Overlapping texts (the KJV Bible contains Matthew, the Psalms and the Sermon on
the Mount; the Book of Mormon quotes Isaiah and the Sermon; The Moonstone quotes
Robinson Crusoe; ...) are handled with 12-word shingles: every window that must
stay out of training (held-out windows, baseline stories, passage injections)
and every excerpt window *claims* all occurrences of its shingles in every text,
and background is cut only from unclaimed text, after dropping text whose
shingles occur in a longer text (so Matthew is background only once, inside the
Bible); the background then claims its own text, and the passages are cut from
what is left after it, so the base corpus does not change with the number of
passages. No 12-word shingle of a held-out document or an injected sequence
occurs in any training document; :func:`build_corpus` verifies this before
returning. Words are whitespace words; every document's text is its words joined
by single spaces.

The package's modules, by role: ``common`` (version, inputs, seeded streams,
word helpers), ``documents`` (:class:`Document`, :class:`Injection`,
:class:`Corpus`), ``shingles`` (the shingle index and the claims on words),
``windows`` (excerpts, held-out windows, passages, background), ``tasks`` (the
TriviaQA, GSM8K and MMLU pools), ``facts`` (knowledge documents), ``problems``
(reasoning documents), ``phrases`` (phrase documents), ``injections`` (the
injected sequences) and ``assemble`` (:func:`build_corpus`).
"""

from __future__ import annotations

from analysis.lab.corpus.assemble import build_corpus
from analysis.lab.corpus.common import (
    CODE_VERSION,
    DATA_PREFIXES,
    MAX_CHARS_PER_WORD,
    SHINGLE_WORDS,
    corpus_rng,
    normalise,
)
from analysis.lab.corpus.documents import TRAINING_KINDS, Corpus, Document, Injection, corpus_fingerprint
from analysis.lab.corpus.facts import DECONTAMINATION_N, FACT_SENTENCES, contaminated
from analysis.lab.corpus.phrases import PHRASE_PROBE_WORDS
from analysis.lab.corpus.problems import FIRST_NAMES, LAST_NAMES, N_PROBLEM_TEMPLATES, problem_text
from analysis.lab.corpus.shingles import popular_overlaps
from analysis.lab.corpus.windows import popular_copies

# The names the distributional chapter imported before they were public; kept until it
# imports problem_text, normalise and corpus_rng.
_problem = problem_text
_norm = normalise
_rng = corpus_rng

__all__ = [
    "CODE_VERSION", "DATA_PREFIXES", "DECONTAMINATION_N", "FACT_SENTENCES", "FIRST_NAMES", "LAST_NAMES",
    "MAX_CHARS_PER_WORD", "N_PROBLEM_TEMPLATES", "PHRASE_PROBE_WORDS", "SHINGLE_WORDS", "TRAINING_KINDS",
    "Corpus", "Document", "Injection", "build_corpus", "contaminated", "corpus_fingerprint", "corpus_rng",
    "normalise",
    "popular_copies", "popular_overlaps", "problem_text",
]
