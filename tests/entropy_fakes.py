"""Small stand-ins shared by the entropy chapter's tests: a set result with a chosen
line and bootstrap, scored pairs, and models that answer from the prompt."""

from __future__ import annotations

import pandas as pd

from analysis.entropy.method_sets import SetResult
from analysis.models import Answer, Model
from analysis.stats.lines import Fit


def fake_set(name="s", intercept=None, slope=0.5, r=0.95, boot=None, es=(2, 4, 6), pairs=30, norm=None,
             p=0.0):
    """A SetResult with a chosen line, level sets at scores ``es`` and a chosen bootstrap."""
    fit = Fit(slope, intercept, r, p, len(es)) if intercept is not None else None
    levels = pd.DataFrame({"e": list(es), "pairs": [10] * len(es),
                           "token_space": [4 * (i + 1) for i in range(len(es))],
                           "entropy": [1.0 + i for i in range(len(es))]})
    boot = pd.DataFrame(boot if boot is not None else {}, columns=["slope", "intercept", "r"])
    return SetResult(name, levels, fit, None, norm, boot, pairs)


def scored_frame(rows):
    """Scored pairs from (doc_id, score, trivial) triples, answers of 4 tokens."""
    return pd.DataFrame([{"doc_id": d, "prefix": [0], "suffix": [1, 2, 3, 4], "score": float(sc),
                          "error": None, "trivial": t, "suffix_text": "t"} for d, sc, t in rows])


class EchoModel(Model):
    """Answers a prompt of ids with its last ``max_new_tokens`` ids; prompts starting
    with 99 get an API-style error."""

    backend = "echo"

    def _generate(self, requests):
        raise AssertionError("text generation is not used here")

    def _generate_ids(self, prompt_ids, settings, seeds=None):
        for i, ids in enumerate(prompt_ids):
            if ids[0] == 99:
                yield i, Answer(None, error="HTTP 503")
            else:
                yield i, Answer("x", meta={"ids": list(ids[-settings.max_new_tokens:])})

    def detokenize(self, ids):
        return [" ".join(map(str, x)) for x in ids]


class EchoTokens(EchoModel):
    """EchoModel with a tokenizer: a text's words as integers."""

    def tokenize(self, texts):
        return [[int(w) for w in t.split()] for t in texts]


class ScoringEcho(EchoTokens):
    """EchoTokens that also scores sequences: token t of a sequence gets log p = -t / 10
    under a next-token distribution with mean log p = -1 and standard deviation 2."""

    def _score_ids_stats(self, sequences):
        for i, ids in enumerate(sequences):
            yield i, ([-t / 10 for t in ids[1:]], [-1.0] * (len(ids) - 1), [2.0] * (len(ids) - 1))
