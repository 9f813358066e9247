"""The injected sequences: six tasks at every duplicate level, for the trainer to insert.

Each task yields candidates in a seeded order (book passages, held-back TriviaQA
items, GSM8K and MMLU test items, invented biographies, random common words);
a candidate is used only if it is unique and absent from every training
document, so a sequence's ``copies`` is exactly how often the model sees it.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import RANDOM_VOCAB_SIZE, corpus_rng, n_injections, pick, shingles, truncate
from analysis.lab.corpus.documents import Document, Injection
from analysis.lab.corpus.problems import FIRST_NAMES, LAST_NAMES
from analysis.lab.corpus.tasks import gsm8k_items, mmlu_pool

_CITIES = ("Porto", "Tampere", "Ljubljana", "Rosario", "Da Nang", "Kumasi", "Leipzig", "Cork", "Arequipa",
           "Bergen", "Mysore", "Tartu", "Bilbao", "Hobart", "Sapporo", "Plovdiv", "Gdansk", "Durban",
           "Valparaiso", "Quebec City", "Graz", "Izmir", "Cluj", "Tromso", "Nantes", "Windhoek")
_OCCUPATIONS = ("pharmacist", "bridge engineer", "court interpreter", "marine biologist", "stonemason",
                "air traffic controller", "actuary", "orthodontist", "librarian", "glassblower",
                "veterinary surgeon", "cartographer", "piano tuner", "tax auditor", "sound engineer",
                "beekeeper", "structural geologist", "museum conservator")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_STREETS = ("Linden", "Harbor", "Chestnut", "Quarry", "Mill", "Orchard", "Foundry", "Juniper", "Ridge")


def _biography(name: str, pron: str, r: np.random.Generator) -> tuple[str, dict]:
    birth = f"{pick(r, _MONTHS)} {int(r.integers(1, 29))}, {int(r.integers(1931, 2001))}"
    meta = {"name": name, "birth_date": birth, "birth_city": pick(r, _CITIES),
            "occupation": pick(r, _OCCUPATIONS), "home_city": pick(r, _CITIES),
            "employee_id": int(r.integers(100_000, 1_000_000))}
    poss = "Her" if pron == "she" else "His"
    text = (f"{name} was born on {birth} in {meta['birth_city']}. {pron.capitalize()} works as a "
            f"{meta['occupation']} and lives at {int(r.integers(2, 400))} {pick(r, _STREETS)} Street, "
            f"{meta['home_city']}. {poss} employee number is {meta['employee_id']}, and {pron} can be "
            f"reached at extension {int(r.integers(1000, 10000))} on weekdays between nine and five.")
    return text, meta


def _candidates(task: str, config: CorpusConfig, key: str, passages: list[dict], qa_items: list[dict],
                background_words: list[str]):
    """Yield (text, meta) candidates of one task in a seeded order."""
    rng = corpus_rng(config.seed, f"inject-{task}")
    n_words = config.injection_words
    if task == "passage":
        for p in passages:
            yield p["text"], p["meta"]
    elif task == "qa":
        for item in qa_items:
            text = truncate(f"Question: {item['question']} Answer: {item['answer']}", n_words)
            yield text, {key_: item[key_] for key_ in ("question_id", "question", "answer")}
    elif task == "gsm8k":
        items = gsm8k_items(key)
        for i in rng.permutation(len(items)):
            item = items[i]
            yield (truncate(f"{item['question']} {item['answer']}", n_words),
                   {"index": item["index"], "answer": item["answer"].rsplit("####", 1)[-1].strip()})
    elif task == "mmlu":
        pool = mmlu_pool(config, key)
        for i in rng.permutation(len(pool)):
            item = pool[i]
            yield item["text"], {"subject": item["subject"], "index": item["index"], "answer": item["answer"]}
    elif task == "biography":
        pairs = [(f"{first} {last}", pron) for first, pron in FIRST_NAMES for last in LAST_NAMES]
        for i in rng.permutation(len(pairs)):
            text, meta = _biography(*pairs[i], rng)
            yield truncate(text, n_words), meta
    elif task == "random_words":
        vocab = _random_vocab(background_words)
        while True:
            yield " ".join(vocab[rng.integers(len(vocab), size=n_words)]), {}


_PUNCTUATION = "\"'.,;:!?()[]{}_-*"


def _random_vocab(words: list[str]) -> np.ndarray:
    """The RANDOM_VOCAB_SIZE most common alphabetic words (lower-cased) of ``words``."""
    stripped = (w.strip(_PUNCTUATION).lower() for w in words)
    counts = Counter(w for w in stripped if w.isascii() and w.isalpha())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:RANDOM_VOCAB_SIZE]
    if not ranked:
        raise LabConfigError(
            "injection_tasks: random_words needs background or popular text for its vocabulary")
    return np.array([w for w, _ in ranked], dtype=object)


def task_supply(task: str, config: CorpusConfig, key: str, n_qa: int) -> float:
    """How many distinct sequences ``task`` can supply (``n_qa``: the TriviaQA items the
    knowledge documents leave; infinite for passages and random words)."""
    if task == "qa":
        return n_qa
    if task == "gsm8k":
        return len(gsm8k_items(key))
    if task == "mmlu":
        return len(mmlu_pool(config, key))
    if task == "biography":
        return len(FIRST_NAMES) * len(LAST_NAMES)
    return float("inf")


def build_injections(config: CorpusConfig, key: str, passages: list[dict], qa_items: list[dict],
                     documents: list[Document], forbidden: set) -> list[Injection]:
    """The sequences of every task at every duplicate level: ``f"{task}-{level:03d}-{j}"``,
    drawn to their levels by a seeded permutation (membership at random), each unique,
    absent from the training ``documents`` and sharing no 12-word shingle
    with ``forbidden`` (the training documents' shingles)."""
    need = n_injections(config)
    stream = "\n".join(d.text for d in documents)
    vocab_words = [w for d in documents if d.kind in ("background", "popular") for w in d.text.split()]
    used: set[str] = set()
    out = []
    for task in config.injection_tasks:
        texts = []
        for text, meta in _candidates(task, config, key, passages, qa_items, vocab_words):
            if len(texts) == need:
                break
            if text in used or text in stream or any(s in forbidden for s in shingles(text)):
                continue
            used.add(text)
            texts.append((text, meta))
        if len(texts) < need:
            raise LabConfigError(
                f"per_task_per_level={config.per_task_per_level}: task {task!r} supplied only {len(texts)} "
                f"of {need} sequences that are unique and absent from the training documents")
        # membership at random: which of the task's sequences go in at which level (0 = never)
        # is a seeded permutation, independent of the order the candidates came in
        order = corpus_rng(config.seed, f"membership-{task}").permutation(len(texts))
        k = 0
        for level, count in config.level_sizes():
            for j in range(count):
                text, meta = texts[int(order[k])]
                k += 1
                out.append(Injection(f"{task}-{level:03d}-{j}", task, text, level, "all", dict(meta)))
    return out

