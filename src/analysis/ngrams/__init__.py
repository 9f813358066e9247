"""Word n-grams, task-gram pairs and corpus counts: the counting half of the distributional chapter.

The source ("Generalization v.s. Memorization", read through the summary in
``shared/seeds/002_*.txt``) models what a pretraining corpus says about a task
with a *task-gram language model*: every word n-gram ``s^x`` of a task input is
paired with every n-gram ``s^y`` of the output (Definition 1's candidate pairs),
and the corpus gives ``P_n(s^y | s^x) = C((s^x, s^y)) / C(s^x)``, where ``C``
counts *documents* (``C(x)``: documents containing ``x``; ``C((x, y))``:
documents containing both, anywhere). Its baseline is the ∞-gram LM of Liu et
al. (2024), which needs token-level counts of arbitrary length from a suffix
array. The package's modules, in the order of that method:

* :mod:`.grams`: :func:`words` and :func:`ngrams`, the word tokenizer and
  n-gram extractor (and :class:`NgramError`, the package's one error);
* :mod:`.pairs`: :func:`task_gram_pairs`, the candidate pair table, with a hook
  (``keep``) for the embedding filter;
* :mod:`.embedding`: the filter itself: :func:`embed`, :func:`pair_cosines`,
  :func:`cosine_keep` and :func:`filter_summary`, with the paper's thresholds
  (:data:`PAPER_THRESHOLDS`), the authors' effective one
  (:data:`AUTHORS_THRESHOLD`) and :data:`NO_FILTER`;
* :mod:`.counts`: :func:`build_doc_index` / :func:`pair_count` /
  :func:`taskgram_prob` / :func:`count_pairs`, exact document-level counts from
  an inverted index (the source used WIMBD for these);
* :mod:`.infini`: :func:`build_index` / :func:`token_count` /
  :func:`infgram_prob` / :func:`infgram_logprob`, ∞-gram counts from an
  infini-gram suffix-array index of the corpus in the lab tokenizer;
* :mod:`.infini_api`: :class:`InfiniGramAPI`, the same questions to the public
  infini-gram API over the Pile (what the source used), cached.

Each module says where the source (or its code) leaves a choice open and what
it does. Everything is pure computation except :func:`build_index`, which
writes an index folder and runs the infini-gram indexer in a subprocess, and
:class:`InfiniGramAPI`, which asks the network.
"""

from analysis.ngrams.counts import (
    DocIndex,
    build_doc_index,
    conditional,
    count_pairs,
    doc_count,
    lookup,
    pair_count,
    taskgram_prob,
)
from analysis.ngrams.embedding import (
    AUTHORS_THRESHOLD,
    EMBED_DIM,
    EMBED_MODEL,
    NO_FILTER,
    PAPER_THRESHOLDS,
    SENSITIVITY_GAMMAS,
    cosine_keep,
    embed,
    embed_model_path,
    filter_summary,
    pair_cosines,
)
from analysis.ngrams.grams import (
    ABBREVIATIONS,
    STOPWORD_MAX_N,
    STOPWORDS,
    SUPPORTED_N,
    NgramError,
    _filter,  # noqa: F401  (the lab's corpus tests count n-grams the package's way)
    _grams,  # noqa: F401
    check_n,
    default_drop_stopwords,
    ngrams,
    words,
)
from analysis.ngrams.infini import (
    DOC_SEP,
    INDEX_FILES,
    InfgramProb,
    InfiniIndex,
    build_index,
    index_path,
    infgram_logprob,
    infgram_prob,
    open_index,
    token_count,
    token_counts,
    write_tokenized,
)
from analysis.ngrams.infini_api import API_URL, PILE_INDEX, InfiniGramAPI
from analysis.ngrams.pairs import SHORT_OUTPUTS, task_gram_pairs

__all__ = [
    "ABBREVIATIONS",
    "API_URL",
    "AUTHORS_THRESHOLD",
    "DOC_SEP",
    "EMBED_DIM",
    "EMBED_MODEL",
    "INDEX_FILES",
    "NO_FILTER",
    "PAPER_THRESHOLDS",
    "PILE_INDEX",
    "SENSITIVITY_GAMMAS",
    "SHORT_OUTPUTS",
    "STOPWORDS",
    "STOPWORD_MAX_N",
    "SUPPORTED_N",
    "DocIndex",
    "InfgramProb",
    "InfiniGramAPI",
    "InfiniIndex",
    "NgramError",
    "build_doc_index",
    "build_index",
    "check_n",
    "conditional",
    "cosine_keep",
    "count_pairs",
    "default_drop_stopwords",
    "doc_count",
    "embed",
    "embed_model_path",
    "filter_summary",
    "index_path",
    "infgram_logprob",
    "infgram_prob",
    "lookup",
    "ngrams",
    "open_index",
    "pair_cosines",
    "pair_count",
    "task_gram_pairs",
    "taskgram_prob",
    "token_count",
    "token_counts",
    "words",
    "write_tokenized",
]
