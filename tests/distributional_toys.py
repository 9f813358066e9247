"""Toy inputs shared by the distributional chapter's tests (tests/test_distributional_*.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import ngrams as G
from analysis.distributional.method_trends import Trend
from analysis.models import Model
from analysis.models.base import Answer


class BigramToy(Model):
    """A toy language model over characters: each character of the continuation has
    probability 1/2 if it repeats the character before it, else 1/4; it records
    what it was asked."""

    backend = "toy"

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.asked = []

    def _generate(self, requests):
        yield from ()

    def _logprobs(self, contexts, continuations):
        for i, (c, s) in enumerate(zip(contexts, continuations)):
            self.asked.append((c, s))
            prev = c[-1] if c else ""
            out = []
            for ch in s:
                out.append(math.log(0.5 if ch == prev else 0.25))
                prev = ch
            yield i, out


class AnswerToy(Model):
    """Answers "Paris" to every prompt, and fails the prompts that contain "fail"."""

    backend = "toy"

    def _generate(self, requests):
        for i, r in enumerate(requests):
            yield i, Answer(None, error="boom") if "fail" in r.prompt else Answer(" Paris. Then")

    def _logprobs(self, contexts, continuations):
        yield from ()


TOY_DOCS = ["Paris is the capital city of France.", "The capital city of Spain is Madrid.",
            "Paris hosts a city fair."]
TOY_TASKS = {"knowledge": {"inputs": ["Which capital city is in France?"], "outputs": ["Paris"],
                           "prompts": ["Q: Which capital city is in France? A:"], "gold": ["Paris"]}}


def toy_index():
    """Document counts of :data:`TOY_DOCS` (copies 3, 1, 1), both stopword rules."""
    return {drop: G.build_doc_index(TOY_DOCS, 5, drop_stopwords=drop, weights=[3, 1, 1])
            for drop in (True, False)}


def ladder3(families=("wide", "deep", "wide"), tokens=(100, 50, 100)):
    return pd.DataFrame({"model": ["a", "b", "c"], "family": list(families), "params": [10, 20, 30],
                         "tokens": list(tokens)})


def toy_mem_inputs():
    """One (knowledge, 3) table of four pairs, three models' and the ∞-gram LM's log-probabilities."""
    table = pd.DataFrame({"x": [("a",), ("b",), ("c",), ("d",)], "y": [("e",)] * 4,
                          "c_xy": [1, 2, 4, 8], "p_taskgram": [0.1, 0.2, 0.4, 1.0],
                          "cosine": [0.9, 0.1, 0.8, 0.95], "instance": [0, 0, 1, 1]})
    up, down = np.log([0.1, 0.2, 0.3, 0.4]), np.log([0.4, 0.3, 0.2, 0.1])
    lp = {"a": up, "b": down, "c": up}
    log_llm = {(m, "knowledge", 3): v for m, v in lp.items()}
    log_inf = {("knowledge", 3): np.log([0.5, 0.4, 0.3, 0.2])}
    return {("knowledge", 3): table}, log_llm, log_inf


def toy_null(n_perm=200, scale=0.05, seed=0):
    """Draws of a cluster permutation null: normal around 0 with sd ``scale``."""
    return np.random.default_rng(seed).normal(0, scale, n_perm)


def mem_rows(rows, pairs=100, units=40, control_rho=0.0, control_p=0.5):
    """A Mem table from (task, n, model, params, lm, rho, pvalue) rows, no filter, with
    the columns :func:`analysis.distributional.cluster_mem_table` adds (``units`` per
    row, a null of 200 draws around 0 shared by the rows, the control's ρ and p)."""
    t = pd.DataFrame(rows, columns=["task", "n", "model", "params", "lm", "rho", "pvalue"])
    null = toy_null()
    return t.assign(filter="no filter", pairs=pairs, pvalue_pairs=t["pvalue"], units=units, null_rho=0.0,
                    null=pd.Series([null] * len(t), index=t.index, dtype=object), control_rho=control_rho,
                    control_pvalue=control_p)


def trend_of(rho, pvalue, params=(10, 20, 30)):
    return Trend(np.asarray(params, float), np.asarray(rho, float), np.asarray(pvalue, float))


def ladder_mem(task, rhos, pvalues, lm="task-gram", n=3, pairs=100, units=40, control_rho=0.0, control_p=0.5):
    """A Mem table of one task, n and corpus LM over len(rhos) models m0, m1, … of sizes 10, 20, …"""
    rows = [(task, n, f"m{i}", 10 * (i + 1), lm, r, p) for i, (r, p) in enumerate(zip(rhos, pvalues))]
    return mem_rows(rows, pairs=pairs, units=units, control_rho=control_rho, control_p=control_p)
