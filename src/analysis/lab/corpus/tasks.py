"""The task data the corpus draws on: TriviaQA facts, GSM8K and MMLU test items.

Each pool is read once per state of the data registry (``registry_key``) and
kept in memory.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pandas as pd

from analysis.core import data
from analysis.lab.config import CorpusConfig
from analysis.lab.corpus.common import GSM8K, MAX_CHARS_PER_WORD, MMLU_TEST, TRIVIAQA, normalise

_CLEAN_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .,'&-]*$")


def _pick_alias(aliases: list[str]) -> str | None:
    """A short clean alias: properly cased, contained in most other aliases, short."""
    clean = [a.strip() for a in aliases
             if _CLEAN_ALIAS.match(a.strip()) and len(a.split()) <= 5 and "disambiguation" not in a.lower()]
    if not clean:
        return None
    lowered = [a.lower() for a in aliases]

    def contained(alias: str) -> int:
        pattern = re.compile(rf"(?<![a-z0-9]){re.escape(alias.lower())}(?![a-z0-9])")
        return sum(1 for other in lowered if pattern.search(other))

    def quality(alias: str) -> int:
        if alias.isupper() and len(alias) > 4:
            return 3
        if alias == alias.lower() and any(c.isalpha() for c in alias):
            return 2
        words = alias.split()
        if "," in alias or _ODD_CAPS.search(alias) or any(
                w[0].islower() and w not in _SMALL_WORDS for w in words[1:]):
            return 1
        return 0

    return min(clean, key=lambda a: (quality(a), -contained(a), len(a), clean.index(a)))


_ODD_CAPS = re.compile(r"[a-z][A-Z]")
_SMALL_WORDS = {"of", "the", "and", "in", "on", "de", "da", "di", "du", "von", "van", "der", "a", "an", "for",
                "to", "at", "by", "with", "la", "le", "el", "y", "del", "or"}


@lru_cache(maxsize=1)
def trivia_pool(registry_key: str) -> tuple[dict, ...]:
    """TriviaQA items with a clean short answer and a distinct question, in file order."""
    seen, pool = set(), []
    for line in data.read_text(TRIVIAQA).splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        question = normalise(item["turns"][0])
        if len(question) > 2 and question[0] == question[-1] == '"' and '""' in question:
            question = question[1:-1].replace('""', '"')  # CSV-style quoting in the source
        answer = _pick_alias(item["answer"])
        key = question.lower()
        if answer is None or not question or len(question.split()) > 40 or key in seen:
            continue
        seen.add(key)
        pool.append({"question_id": int(item["question_id"]), "question": question, "answer": answer})
    return tuple(pool)


@lru_cache(maxsize=1)
def gsm8k_items(registry_key: str) -> tuple[dict, ...]:
    """GSM8K test items (``index``, ``question``, ``answer``, normalised), in file order."""
    items = []
    for i, line in enumerate(data.read_text(GSM8K).splitlines()):
        if line.strip():
            item = json.loads(line)
            items.append({"index": i, "question": normalise(item["question"]),
                          "answer": normalise(item["answer"])})
    return tuple(items)


@lru_cache(maxsize=1)
def _mmlu_items(registry_key: str) -> tuple[dict, ...]:
    reg = data.registry()
    names = sorted(n for n in reg["name"] if n.startswith(MMLU_TEST) and n.endswith(".csv"))
    items = []
    for name in names:
        subject = name[len(MMLU_TEST):].removesuffix(".csv").removesuffix("_test")
        table = pd.read_csv(data.fetch(name), dtype=str, keep_default_na=False)
        for i, row in enumerate(table.itertuples(index=False)):
            letter = "ABCD"[int(row.answer)]
            text = normalise(f"Question: {row.question} A. {row.choice0} B. {row.choice1} "
                         f"C. {row.choice2} D. {row.choice3} Answer: {letter}")
            items.append({"subject": subject, "index": i, "answer": letter, "text": text})
    return tuple(items)


def mmlu_pool(config: CorpusConfig, key: str) -> list[dict]:
    """MMLU items whose rendering is about injection_words long (half to 1.5 times)
    and at most MAX_CHARS_PER_WORD characters per requested word, so that symbol-
    and number-heavy items, which tokenize long, still fit in one context row."""
    lo, hi = config.injection_words / 2, config.injection_words * 3 / 2
    max_chars = MAX_CHARS_PER_WORD * config.injection_words
    seen, pool = set(), []
    for item in _mmlu_items(key):
        n = len(item["text"].split())
        if lo <= n <= hi and len(item["text"]) <= max_chars and item["text"] not in seen:
            seen.add(item["text"])
            pool.append(item)
    return pool

