"""scripts/served_engine.py's pieces that need no server: which of the book's cached
requests make a workload (its model's greedy requests of one length, error answers left
out), the arm's agreement and rate, and the compare_results --exact check of wording."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import compare_results  # noqa: E402
import served_engine as se  # noqa: E402


def _cache(path: Path, rows) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, backend TEXT, model TEXT, kind TEXT, "
                "request TEXT, text TEXT, error TEXT, meta TEXT, created REAL)")
    for i, (model, kind, prompt, tokens, temperature, text, error) in enumerate(rows):
        request = json.dumps({"chat": kind == "chat", "prompt": prompt,
                              "settings": {"max_new_tokens": tokens, "temperature": temperature}})
        con.execute("INSERT INTO answers VALUES (?, 'transformers', ?, ?, ?, ?, ?, '{}', 0)",
                    (f"k{i:03d}", model, kind, request, text, error))
    con.commit()
    con.close()
    return path


def test_a_workload_is_its_models_greedy_requests_of_one_length(tmp_path):
    m = "gemma3-270m@pkg==1|float32|cpu"
    cache = _cache(tmp_path / "q.sqlite", [
        (m, "complete", "a", 6, 0.0, " x", None),
        (m, "complete", "b", 6, 0.0, " y", None),
        (m, "complete", "c", 64, 0.0, " z", None),            # another length
        (m, "complete", "d", 6, 0.7, " w", None),             # sampled
        (m, "complete", "e", 6, 0.0, None, "RateLimitError"),  # an error is no answer
        ("gemma3-270m@pkg==1|float16|cuda", "complete", "f", 6, 0.0, " v", None),  # another backend
        (m, "chat", "g", 6, 0.0, " u", None),                  # another kind
    ])
    assert se.cached_requests(cache, "gemma3-270m", "complete", 6, 2) == [("a", " x"), ("b", " y")]
    with pytest.raises(SystemExit, match="holds 2 complete requests"):
        se.cached_requests(cache, "gemma3-270m", "complete", 6, 3)


def test_arm_row_by_hand():
    def tokens(texts):
        return [t.split() for t in texts]

    row = se.arm_row("x", 2.0, ["Paris is", "the cat", "Dog."], ["Paris is", "the dog", "dog"], tokens)
    assert row["new_tokens"] == 5 and row["tokens_per_s"] == 2.5
    assert row["answer_agreement"] == pytest.approx(1 / 3)
    assert row["first_word_agreement"] == 1.0  # "Dog." and "dog" read as one word


def test_exact_comparison_sees_a_changed_word():
    before = {"s": "The line rises with the score at every length.", "n": "12"}
    after = {"s": "The line falls with the score at every length.", "n": "12"}
    diffs, notes, n_values, n_sentences = compare_results.compare(before, after, exact=True)
    assert (n_values, n_sentences, notes) == (1, 1, []) and len(diffs) == 1 and "rises" in diffs[0]
    assert compare_results.compare(before, after) == ([], [], 1, 1)  # same numbers: not a difference
