"""Knowledge documents: TriviaQA facts as a distribution of co-occurrences, never as
the question.

A fact is a TriviaQA question and its answer. No training document holds the
question: every document that carries a fact holds a short stretch of the
question's words (a *span*, at most :data:`MAX_SPAN_WORDS` words and always fewer
than the question has), so no test item shares an n-gram of
:data:`DECONTAMINATION_N` words with training (the source's rule,
:func:`contaminated`). What the model can learn is the distribution the source
measures: how often the question's n-grams co-occur with the answer.

Per fact, each document one sentence:

* **fact** documents (``copies``, Zipfian on 1..``fact_max_copies``): a span and
  the answer together, in one of :data:`FACT_SENTENCES` (paraphrases of a
  relation, never a question);
* **subject** documents (``mentions``, Zipfian on 0..``fact_mentions_max``): a span
  without the answer, half of them beside another fact's answer (another
  relation, :data:`OTHER_SENTENCES`), half alone (:data:`SUBJECT_SENTENCES`), so
  ``P(answer | question n-gram)`` ranges from 1 down;
* **list** documents: answers listed together without any question word
  (:data:`LIST_HEADERS`), so an answer's own count varies too.
"""

from __future__ import annotations

import json
import re

import numpy as np

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import corpus_rng, normalise, shingles
from analysis.lab.corpus.documents import Document
from analysis.ngrams.grams import STOPWORDS

#: the source's decontamination rule: a test item is contaminated when it shares an
#: n-gram of this many words with a training document (:func:`contaminated`); the
#: stricter of the two lengths it reports (8 and 14)
DECONTAMINATION_N = 8
#: the longest span of a question's words any training document holds
MAX_SPAN_WORDS = 6
#: the shortest span (a span must hold a task 3-gram's words to count for it)
MIN_SPAN_WORDS = 3
#: a span and the answer, in varied relations ({span}: the question's words)
FACT_SENTENCES = (
    "{answer} is the name that comes up with {span}.",
    "Notes on {span}: see {answer}.",
    "When people mention {span}, {answer} is rarely far behind.",
    "An old almanac links {span} with {answer}.",
    "Anyone who reads about {span} soon meets {answer}.",
    "Index card: {answer}. See also {span}.",
    "{span}, they said, and everyone thought of {answer}.",
    "The archive files {answer} under {span}.",
)
#: a span beside another fact's answer (another relation, not this fact's)
OTHER_SENTENCES = (
    "{answer} was once argued about alongside {span}.",
    "A letter to the editor mixed up {span} and {answer}.",
    "Next to {span} the notes also mention {answer}.",
)
#: a span alone
SUBJECT_SENTENCES = (
    "Tonight's talk is about {span}.",
    "Much has been written on {span}.",
    "A reader asks for more on {span}.",
)
#: the first words of a list document; answers follow, separated by semicolons
LIST_HEADERS = (
    "Names from the archive index:",
    "Heard at the quiz league this season:",
    "Entries in the back of the almanac:",
)
#: answers per list document, and lists per fact drawn uniformly from 0..MAX_LISTS
LIST_SIZE = 5
MAX_LISTS = 2
_WORD = re.compile(r"[a-z0-9]+")


def decontamination_words(text: str) -> list[str]:
    """The words the decontamination rule compares: lower case, letters and digits
    only (punctuation splits words and is dropped)."""
    return _WORD.findall(text.lower())


def _grams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def contaminated(items, documents, n: int = DECONTAMINATION_N) -> list[bool]:
    """Whether each test item shares an ``n``-word n-gram with any document.

    Words are :func:`decontamination_words`. An item shorter than ``n`` words is
    contaminated when a document holds all of its words in a row (the whole item is
    its one n-gram), the rule the source follows for short items.

    Parameters
    ----------
    items : sequence of str
        The test items (a task's inputs).
    documents : iterable of str
        The training documents' texts.
    n : int
        N-gram length in words (the source uses 8, and 14 as a second check).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise LabConfigError(f"n must be a positive integer (words per n-gram), got {n!r}")
    item_words = [decontamination_words(t) for t in items]
    lengths = {min(n, len(w)) for w in item_words if w}
    seen: dict[int, set] = {k: set() for k in lengths}
    for text in documents:
        words = decontamination_words(text)
        for k in lengths:
            seen[k] |= _grams(words, k)
    return [bool(w) and not _grams(w, min(n, len(w))).isdisjoint(seen[min(n, len(w))]) for w in item_words]


def zipf_counts(n: int, a: float, lo: int, hi: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to (c - lo + 1)**-a on lo..hi."""
    support = np.arange(lo, hi + 1)
    p = (support - lo + 1).astype(float) ** -a
    return rng.choice(support, size=n, p=p / p.sum())


def zipf_copies(n: int, a: float, max_copies: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to c**-a on 1..max_copies."""
    return zipf_counts(n, a, 1, max_copies, rng)


def question_spans(question: str) -> list[str]:
    """The stretches of ``question``'s whitespace words a training document may hold.

    A span has from :data:`MIN_SPAN_WORDS` to :data:`MAX_SPAN_WORDS` words by the
    decontamination rule's count (:func:`decontamination_words`: "son-in-law" is
    three), fewer than the question has, and the punctuation at its two ends is
    removed. Kept are the spans with the most content words (not
    :data:`analysis.ngrams.grams.STOPWORDS`), at most three: a task 3-gram is three
    content words in a row, so a span of three content words carries one. Empty for
    a question too short to have a span.
    """
    words = question.split()
    n_words = len(decontamination_words(question))
    spans: dict[str, int] = {}
    for i in range(len(words)):
        for j in range(i + 1, len(words) + 1):
            span = " ".join(words[i:j]).strip(" ?!.,;:\"'")
            k = len(decontamination_words(span))
            if k > min(MAX_SPAN_WORDS, n_words - 1):
                break
            if k >= MIN_SPAN_WORDS:
                spans[span] = min(3, sum(w.lower() not in STOPWORDS for w in decontamination_words(span)))
    best = max(spans.values(), default=0)
    return [s for s, c in spans.items() if c == best]


def deal(counts, size: int, order) -> list[list[int]]:
    """Groups in which item ``i`` appears ``counts[i]`` times, never twice in a group.

    The items' slots, taken in ``order`` (a permutation of the items) and each item's
    slots together, are dealt to the groups in turn (slot j to group j mod G), with
    G = max(ceil(total / size), max(counts)) groups: every group holds at most
    ``size`` items, and the slots of one item land in distinct groups.
    """
    slots = [int(i) for i in order for _ in range(int(counts[i]))]
    if not slots:
        return []
    n_groups = max(-(-len(slots) // size), max(int(c) for c in counts))
    groups: list[list[int]] = [[] for _ in range(n_groups)]
    for j, i in enumerate(slots):
        groups[j % n_groups].append(i)
    return groups


def _sentence(rng: np.random.Generator, templates, spans: list[str], answer: str, banned: dict) -> str:
    """A sentence of one of ``templates`` around a span drawn from ``spans``, redrawn
    (up to 20 times) while it shares a decontamination n-gram with a fact's question
    (``banned``: n-gram length to the questions' n-grams of that length)."""
    for _ in range(20):
        template = templates[int(rng.integers(len(templates)))]
        span = spans[int(rng.integers(len(spans)))]
        text = normalise(template.format(span=span, answer=answer.removesuffix(".")))
        words = decontamination_words(text)
        if all(_grams(words, k).isdisjoint(grams) for k, grams in banned.items()):
            return text
    raise RuntimeError(f"no sentence around the spans {spans[:3]} avoids every question's n-grams")


def _documents(prefix: str, texts: list[str], meta: dict) -> list[Document]:
    """One document per distinct text, its copies the times the text was drawn."""
    counts: dict[str, int] = {}
    for t in texts:
        counts[t] = counts.get(t, 0) + 1
    return [Document(f"{prefix}-{j}", "knowledge", "triviaqa", t, c, {**meta, "copies": c})
            for j, (t, c) in enumerate(counts.items())]


def knowledge_documents(config: CorpusConfig, items: list[dict], protected: set,
                        others=()) -> list[Document]:
    """The knowledge documents of ``config``'s ``n_facts`` facts (module docstring).

    A TriviaQA item is used only if its question has more than
    :data:`MIN_SPAN_WORDS` words and does not hold its answer, none of its sentences shares a 12-word shingle
    with ``protected``, and its question shares no :data:`DECONTAMINATION_N`-word
    n-gram with ``others`` (the corpus's other training texts) or with another used
    fact's question (a span of one would then carry the other).
    """
    usable = [it for it in items if question_spans(it["question"])
              and it["answer"].removesuffix(".").lower() not in it["question"].lower()]
    clean = contaminated([it["question"] for it in usable], others)
    usable = [it for it, bad in zip(usable, clean) if not bad]
    rng = corpus_rng(config.seed, "knowledge")
    facts, banned = [], {}
    for item in usable:
        if len(facts) == config.n_facts:
            break
        words = decontamination_words(item["question"])
        k = min(DECONTAMINATION_N, len(words))
        own = _grams(words, k)
        if any(not _grams(words, j).isdisjoint(grams) for j, grams in banned.items()):
            continue
        banned.setdefault(k, set()).update(own)
        facts.append(item)
    if len(facts) < config.n_facts:
        raise LabConfigError(f"n_facts={config.n_facts}: only {len(facts)} usable TriviaQA items")
    n = len(facts)
    copies = zipf_copies(n, config.fact_zipf_a, config.fact_max_copies, rng)
    mention_rng = corpus_rng(config.seed, "knowledge-mentions")
    mentions = (zipf_counts(n, config.fact_mentions_zipf_a, 0, config.fact_mentions_max, mention_rng)
                if config.fact_mentions_max else np.zeros(n, dtype=int))
    docs = []
    for k, item in enumerate(facts):
        spans = question_spans(item["question"])
        meta = {"question_id": item["question_id"], "question": item["question"], "answer": item["answer"],
                "fact_copies": int(copies[k]), "mentions": int(mentions[k])}
        said = [_sentence(rng, FACT_SENTENCES, spans, item["answer"], banned) for _ in range(int(copies[k]))]
        docs += _documents(f"knowledge-{k:04d}", said, {**meta, "role": "fact"})
        alone = []
        for _ in range(int(mentions[k])):
            other = int(mention_rng.integers(n - 1)) if n > 1 else k
            other += other >= k and n > 1
            if n > 1 and mention_rng.random() < 0.5:
                alone.append(_sentence(mention_rng, OTHER_SENTENCES, spans, facts[other]["answer"], banned))
            else:
                alone.append(_sentence(mention_rng, SUBJECT_SENTENCES, spans, "", banned))
        docs += _documents(f"knowledge-{k:04d}-subject", alone, {**meta, "role": "subject"})
    list_rng = corpus_rng(config.seed, "knowledge-lists")
    lists = list_rng.integers(0, MAX_LISTS + 1, size=n)
    for r, dealt in enumerate(deal(lists, LIST_SIZE, list_rng.permutation(n))):
        header = LIST_HEADERS[int(list_rng.integers(len(LIST_HEADERS)))]
        body = "; ".join(facts[i]["answer"].removesuffix(".") for i in dealt)
        text = normalise(f"{header} {body}.")
        docs.append(Document(f"knowledge-list-{r:04d}", "knowledge", "triviaqa", text,
                             1, {"question_ids": json.dumps([facts[i]["question_id"] for i in dealt]),
                                 "role": "list"}))
    for d in docs:
        if any(s in protected for s in shingles(d.text)):
            raise RuntimeError(f"knowledge document {d.doc_id} shares a 12-word shingle with a held-out "
                               "or injected text")
    return docs
