"""Knowledge documents: TriviaQA facts stated in a Zipfian number of documents,
over several templates, and their questions listed without answers in quiz rounds.

A question's words so co-occur with its answer in some of the documents that
hold them and not in others.
"""

from __future__ import annotations

import json

import numpy as np

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import corpus_rng, normalise, shingles
from analysis.lab.corpus.documents import Document

FACT_TEMPLATES = (
    "Quiz notes. Q: {question} A: {answer}.",
    "Trivia question: {question} The answer is {answer}.",
    "From a pub quiz sheet. {question} Answer: {answer}.",
    "Did you know? {question} It is {answer}.",
    "Fact check: asked \"{question}\", the right reply is {answer}.",
    "Quiz night recap. {question} Correct answer: {answer}.",
    "Asked on a trivia forum: {question} Best reply: {answer}.",
)
#: questions per quiz round: a knowledge document that lists questions without their answers
QUIZ_ROUND_QUESTIONS = 4
#: the first line of a quiz round ({k}: the round's number, 1..9)
QUIZ_HEADERS = (
    "Pub quiz, round {k}. Answers at the end of the night.",
    "Practice set {k} for the quiz league, answers next week.",
    "Trivia night, round {k}. No phones at the table, please.",
)


def render_fact(template: str, question: str, answer: str) -> str:
    # Every template ends in "{answer}.": an answer ending in a period keeps just one.
    return normalise(template.format(question=question, answer=answer.removesuffix(".")))


def zipf_counts(n: int, a: float, lo: int, hi: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to (c - lo + 1)**-a on lo..hi."""
    support = np.arange(lo, hi + 1)
    p = (support - lo + 1).astype(float) ** -a
    return rng.choice(support, size=n, p=p / p.sum())


def zipf_copies(n: int, a: float, max_copies: int, rng: np.random.Generator) -> np.ndarray:
    """n draws from P(c) proportional to c**-a on 1..max_copies."""
    return zipf_counts(n, a, 1, max_copies, rng)


def quiz_rounds(mentions, size: int, order) -> list[list[int]]:
    """Quiz rounds in which fact ``i`` is listed ``mentions[i]`` times, never twice in a round.

    The facts' slots, taken in ``order`` (a permutation of the facts) and each fact's
    slots together, are dealt to the rounds in turn (slot j to round j mod R), with
    R = max(ceil(total / size), max(mentions)) rounds: every round holds at most
    ``size`` facts, and the slots of one fact land in distinct rounds.

    Returns
    -------
    list of list of int
        Fact indices of every round, in the order they were dealt.
    """
    slots = [int(i) for i in order for _ in range(int(mentions[i]))]
    if not slots:
        return []
    n_rounds = max(-(-len(slots) // size), max(int(m) for m in mentions))
    rounds: list[list[int]] = [[] for _ in range(n_rounds)]
    for j, i in enumerate(slots):
        rounds[j % n_rounds].append(i)
    return rounds


def knowledge_documents(config: CorpusConfig, items: list[dict], protected: set) -> list[Document]:
    """Knowledge documents: every fact stated in ``copies`` documents, plus quiz rounds.

    A fact's ``copies`` (Zipfian, 1..``fact_max_copies``) are spread over
    :data:`FACT_TEMPLATES` (a multinomial draw), one document per template used,
    trained as many times as the draw gave it: each is the question followed by
    the answer. Each fact is also listed, without its answer, in ``mentions``
    quiz rounds of :data:`QUIZ_ROUND_QUESTIONS` questions (Zipfian on
    0..``fact_mentions_max``, independent of the copies), so a question's words
    occur in documents that lack its answer. A fact is used only if none of its
    renderings shares a 12-word shingle with ``protected``.
    """
    rng = corpus_rng(config.seed, "knowledge")
    facts = []
    for item in items:
        if len(facts) == config.n_facts:
            break
        texts = [render_fact(t, item["question"], item["answer"]) for t in FACT_TEMPLATES]
        if any(s in protected for text in texts for s in shingles(text)):
            continue
        facts.append((item, texts))
    if len(facts) < config.n_facts:
        raise LabConfigError(f"n_facts={config.n_facts}: only {len(facts)} usable TriviaQA items")
    n = len(facts)
    copies = zipf_copies(n, config.fact_zipf_a, config.fact_max_copies, rng)
    per_template = [rng.multinomial(int(c), [1 / len(FACT_TEMPLATES)] * len(FACT_TEMPLATES)) for c in copies]
    quiz_rng = corpus_rng(config.seed, "knowledge-quiz")
    mentions = (zipf_counts(n, config.fact_mentions_zipf_a, 0, config.fact_mentions_max, quiz_rng)
                if config.fact_mentions_max else np.zeros(n, dtype=int))
    docs = []
    for k, ((item, texts), counts) in enumerate(zip(facts, per_template)):
        for t in np.flatnonzero(counts):
            docs.append(Document(
                f"knowledge-{k:04d}-{t}", "knowledge", "triviaqa", texts[t], int(counts[t]),
                {"question_id": item["question_id"], "question": item["question"], "answer": item["answer"],
                 "template": int(t), "copies": int(counts[t]), "fact_copies": int(copies[k]),
                 "mentions": int(mentions[k]), "role": "fact"}))
    rounds = quiz_rounds(mentions, QUIZ_ROUND_QUESTIONS, quiz_rng.permutation(n))
    for r, dealt in enumerate(rounds):
        members = [dealt[j] for j in quiz_rng.permutation(len(dealt))]
        header = QUIZ_HEADERS[int(quiz_rng.integers(len(QUIZ_HEADERS)))]
        header = header.format(k=int(quiz_rng.integers(1, 10)))
        body = " ".join(f"{j}. {facts[i][0]['question']}" for j, i in enumerate(members, 1))
        text = normalise(f"{header} {body}")
        if any(s in protected for s in shingles(text)):
            raise RuntimeError(f"quiz round {r} shares a 12-word shingle with a held-out or injected text")
        docs.append(Document(f"knowledge-quiz-{r:04d}", "knowledge", "triviaqa", text, 1,
                             {"question_ids": json.dumps([facts[i][0]["question_id"] for i in members]),
                              "role": "quiz"}))
    return docs

