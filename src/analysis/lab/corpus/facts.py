"""Knowledge documents: TriviaQA facts as a distribution of co-occurrences, never as
the question.

A fact is a TriviaQA question and its answer. No training document holds the
question: every document that carries a fact holds a short stretch of the
question's words (a *span*, at most :data:`MAX_SPAN_WORDS` words and always fewer
than the question has), so no test item shares an n-gram of
:data:`DECONTAMINATION_N` words with training (the source's rule,
:func:`contaminated`). What the model can learn is the distribution the source
measures: how often the question's n-grams co-occur with the answer.

Per fact, documents of two to four sentences, the other sentences drawn from
:data:`FILLERS` (talk of a quiz night that names no fact):

* **fact** documents (``copies``, on 1..``fact_max_copies``, Zipfian or
  log-uniform by ``fact_copies_spread``), each naming the fact by its first span
  (:func:`question_spans`). Most say the span and the answer in one
  sentence, in one of :data:`FACT_SENTENCES` (paraphrases of the relation "the
  answer to the clue is", never a question); a share ``fact_separated_share`` say
  them in two sentences with filler between (:data:`SPAN_OPENERS`,
  :data:`ANSWER_CLOSERS`), so a short n-gram context never sees both while a long
  one can. The first copy of every fact is the **cloze** sentence,
  :data:`CLOZE_TEMPLATE` around the fact's first span: :func:`cloze_prompt` is
  the probe in the training format, the source's question being the other;
* ``fact_controls`` **control** facts get no fact document: one document of 0
  copies records their cloze sentence (as a phrase control does), so the probes
  have a never-trained baseline;
* **subject** documents (``mentions``, Zipfian on 0..``fact_mentions_max``): a span
  without the answer, half of them beside another fact's answer (another
  relation, :data:`OTHER_SENTENCES`), half alone (:data:`SUBJECT_SENTENCES`), so
  ``P(answer | question n-gram)`` ranges from 1 down;
* **list** documents: answers listed together without any question word
  (:data:`LIST_HEADERS`), each answer in 0..``fact_list_max`` lists drawn
  independently of its fact's copies.

A share ``fact_shared_answers`` of the facts is chosen among the TriviaQA items
whose answer another item also has, so that answers are shared across facts and
an answer's count in training is not its fact's copies.
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
#: the cloze sentence: the first copy of every fact, and the probe in the training format
#: (:func:`cloze_prompt`: the sentence up to the answer)
CLOZE_TEMPLATE = "In the quiz notes on {span}, the answer given is {answer}."
#: a span and the answer in one sentence, paraphrases of one relation ({span}: the
#: question's words); the cloze sentence is one of them
FACT_SENTENCES = (
    CLOZE_TEMPLATE,
    "Ask about {span} and the reply is {answer}.",
    "For {span}, the quiz book says {answer}.",
    "The clue {span} points to {answer}.",
    "{answer} is the answer filed under {span}.",
    "Everyone who studied {span} wrote down {answer}.",
    "Quiz card: {span}. Answer: {answer}.",
)
#: the span, then filler, then the answer: a fact in two sentences
SPAN_OPENERS = (
    "The next card read {span}.",
    "A round came up about {span}.",
    "The host turned to {span}.",
)
ANSWER_CLOSERS = (
    "The answer on the back of the card was {answer}.",
    "In the end the answer was {answer}.",
    "The winning team had written {answer}.",
)
#: sentences that name no fact, around and between a fact's sentences
FILLERS = (
    "The room went quiet for a moment.",
    "Somebody at the back asked for the card to be read again.",
    "The scores were close all evening.",
    "A few people laughed and reached for their pens.",
    "The host waited while the teams argued in low voices.",
    "It was the third round of the night.",
    "Two of the teams had the same idea.",
    "The timer ran down slowly.",
    "Nobody wanted to guess first.",
    "The lights over the bar flickered once.",
    "One team had brought a thick notebook.",
    "The answers were collected on small slips of paper.",
)
#: filler sentences between a separated fact's span and its answer
MAX_GAP_SENTENCES = 2
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
#: answers per list document (each answer's lists: uniform on 0..``fact_list_max``)
LIST_SIZE = 5
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


def cloze_prompt(span: str) -> str:
    """The cloze probe of a fact whose first span is ``span``: :data:`CLOZE_TEMPLATE` up
    to the answer (``"In the quiz notes on <span>, the answer given is"``)."""
    return normalise(CLOZE_TEMPLATE.split("{answer}")[0].format(span=span)).rstrip()


def _clean(text: str, banned: dict) -> bool:
    """Whether ``text`` shares no decontamination n-gram with a fact's question (``banned``:
    n-gram length to the questions' n-grams of that length)."""
    words = decontamination_words(text)
    return all(_grams(words, k).isdisjoint(grams) for k, grams in banned.items())


def _fill(template: str, span: str, answer: str) -> str:
    return template.format(span=span, answer=answer.removesuffix("."))


def _sentence(rng: np.random.Generator, templates, spans: list[str], answer: str, banned: dict) -> str:
    """A sentence of one of ``templates`` around a span drawn from ``spans``, redrawn
    (up to 20 times) while it shares a decontamination n-gram with a fact's question."""
    for _ in range(20):
        text = normalise(_fill(templates[int(rng.integers(len(templates)))],
                               spans[int(rng.integers(len(spans)))], answer))
        if _clean(text, banned):
            return text
    raise RuntimeError(f"no sentence around the spans {spans[:3]} avoids every question's n-grams")


def _fillers(rng: np.random.Generator, k: int) -> list[str]:
    return [FILLERS[int(i)] for i in rng.choice(len(FILLERS), size=k, replace=False)]


def _fact_document(rng: np.random.Generator, spans: list[str], answer: str, banned: dict,
                   separated: bool, cloze: bool) -> tuple[str, str]:
    """One fact document and its form (``"cloze"``, ``"adjacent"`` or ``"separated"``):
    the cloze sentence, a sentence of :data:`FACT_SENTENCES`, or an opener, one to
    :data:`MAX_GAP_SENTENCES` fillers and a closer; a filler before or after in half of
    them. Every fact document names the fact's subject the same way, by its first span
    (as a real fact keeps its subject's name); the subject documents draw among all.
    Redrawn (up to 20 times) while the document shares a
    decontamination n-gram with a fact's question."""
    for _ in range(20):
        span = spans[0]  # a fact's subject: one stretch of its question in every fact document
        if cloze or not separated:
            form = "cloze" if cloze else "adjacent"
            template = CLOZE_TEMPLATE if cloze else FACT_SENTENCES[int(rng.integers(len(FACT_SENTENCES)))]
            body = [_fill(template, span, answer)]
        else:
            form = "separated"
            gap = _fillers(rng, int(rng.integers(1, MAX_GAP_SENTENCES + 1)))
            body = [_fill(SPAN_OPENERS[int(rng.integers(len(SPAN_OPENERS)))], span, answer), *gap,
                    _fill(ANSWER_CLOSERS[int(rng.integers(len(ANSWER_CLOSERS)))], span, answer)]
        where = rng.random()  # a filler before (a quarter), after (a quarter) or none
        if where < 0.5:
            body = _fillers(rng, 1) + body if where < 0.25 else body + _fillers(rng, 1)
        text = normalise(" ".join(body))
        if _clean(text, banned):
            return text, form
    raise RuntimeError(f"no document around the spans {spans[:3]} avoids every question's n-grams")


def _documents(prefix: str, texts: list[str], meta: dict, forms: list[str] | None = None) -> list[Document]:
    """One document per distinct text, its copies the times the text was drawn (and the
    form of its first drawing, when ``forms`` is given)."""
    counts: dict[str, int] = {}
    form_of: dict[str, str] = {}
    for j, t in enumerate(texts):
        counts[t] = counts.get(t, 0) + 1
        if forms is not None:
            form_of.setdefault(t, forms[j])
    return [Document(f"{prefix}-{j}", "knowledge", "triviaqa", t, c,
                     {**meta, "copies": c, **({"form": form_of[t]} if forms is not None else {})})
            for j, (t, c) in enumerate(counts.items())]


def _answer_key(item: dict) -> str:
    return item["answer"].removesuffix(".").lower()


def fact_order(items: list[dict], n_facts: int, shared_share: float) -> list[dict]:
    """``items`` in the order :func:`knowledge_documents` tries them: whole groups of items
    that share an answer (groups in the order of their first item) until about
    ``shared_share`` of ``n_facts`` facts could come from them, then the others in the
    order given."""
    groups: dict[str, list[dict]] = {}
    for it in items:
        groups.setdefault(_answer_key(it), []).append(it)
    quota = int(round(shared_share * n_facts))
    head: list[dict] = []
    for group in groups.values():
        if len(head) >= quota:
            break
        if len(group) > 1:
            head += group
    chosen = {id(it) for it in head}
    return head + [it for it in items if id(it) not in chosen]


def fact_copies(config: CorpusConfig, n: int, rng: np.random.Generator) -> np.ndarray:
    """Copies of ``n`` facts on 1..``fact_max_copies``: Zipfian (``P(c)`` proportional to
    ``c**-fact_zipf_a``) or log-uniform (``round(exp(U(0, log max)))``), by
    ``config.fact_copies_spread``."""
    if config.fact_copies_spread == "zipf":
        return zipf_copies(n, config.fact_zipf_a, config.fact_max_copies, rng)
    return np.rint(np.exp(rng.uniform(0.0, np.log(config.fact_max_copies), size=n))).astype(int)


def knowledge_documents(config: CorpusConfig, items: list[dict], protected: set,
                        others=()) -> list[Document]:
    """The knowledge documents of ``config``'s ``n_facts`` facts (module docstring).

    A TriviaQA item is used only if its question has more than
    :data:`MIN_SPAN_WORDS` words and does not hold its answer, none of its sentences shares a 12-word shingle
    with ``protected``, and its question shares no :data:`DECONTAMINATION_N`-word
    n-gram with ``others`` (the corpus's other training texts) or with another used
    fact's question (a span of one would then carry the other), and its first span (the
    fact's subject, :func:`question_spans`) is no other used fact's. ``fact_controls`` of
    the facts, drawn at random, are the controls (no fact document is trained).
    """
    usable = [it for it in items if question_spans(it["question"])
              and it["answer"].removesuffix(".").lower() not in it["question"].lower()]
    clean = contaminated([it["question"] for it in usable], others)
    usable = [it for it, bad in zip(usable, clean) if not bad]
    usable = fact_order(usable, config.n_facts, config.fact_shared_answers)
    rng = corpus_rng(config.seed, "knowledge")
    facts, banned, subjects = [], {}, set()
    for item in usable:
        if len(facts) == config.n_facts:
            break
        words = decontamination_words(item["question"])
        k = min(DECONTAMINATION_N, len(words))
        own = _grams(words, k)
        subject = question_spans(item["question"])[0].lower()
        if subject in subjects or any(not _grams(words, j).isdisjoint(grams) for j, grams in banned.items()):
            continue  # two facts never share a subject (a cloze prompt), nor a question's n-gram
        banned.setdefault(k, set()).update(own)
        subjects.add(subject)
        facts.append(item)
    if len(facts) < config.n_facts:
        raise LabConfigError(f"n_facts={config.n_facts}: only {len(facts)} usable TriviaQA items")
    n = len(facts)
    copies = fact_copies(config, n, rng)
    if config.fact_controls:  # the controls, a seeded draw among the facts
        control_rng = corpus_rng(config.seed, "knowledge-controls")
        copies[control_rng.choice(n, config.fact_controls, replace=False)] = 0
    mention_rng = corpus_rng(config.seed, "knowledge-mentions")
    mentions = (zipf_counts(n, config.fact_mentions_zipf_a, 0, config.fact_mentions_max, mention_rng)
                if config.fact_mentions_max else np.zeros(n, dtype=int))
    docs = []
    for k, item in enumerate(facts):
        spans = question_spans(item["question"])
        meta = {"question_id": item["question_id"], "question": item["question"], "answer": item["answer"],
                "fact_copies": int(copies[k]), "mentions": int(mentions[k]), "cloze": cloze_prompt(spans[0])}
        if copies[k] == 0:
            text, _ = _fact_document(rng, spans, item["answer"], banned, separated=False, cloze=True)
            docs.append(Document(f"knowledge-{k:04d}-0", "knowledge", "triviaqa", text, 0,
                                 {**meta, "role": "fact", "copies": 0, "form": "cloze"}))
        else:
            drawn = [_fact_document(rng, spans, item["answer"], banned,
                                    separated=bool(rng.random() < config.fact_separated_share), cloze=j == 0)
                     for j in range(int(copies[k]))]
            docs += _documents(f"knowledge-{k:04d}", [t for t, _ in drawn], {**meta, "role": "fact"},
                               [f for _, f in drawn])
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
    lists = list_rng.integers(0, config.fact_list_max + 1, size=n)
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
