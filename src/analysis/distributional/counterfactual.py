"""The counterfactual the source could not afford: retrain without some facts' documents.

The gradient influence (:mod:`.influence`) estimates which documents shaped a
prediction; the lab can also remove them. :func:`counterfactual_run` retrains one
ladder run on the corpus's training stream with every fact document of a seeded
random half of the trained facts left out (the same order otherwise, the same token
budget, seed and schedule). :func:`answer_logprobs` scores each fact's answer after
its cloze prompt (the training format, where the ladder's models learned the facts)
under both models, and :func:`counterfactual_drop` compares the change in log-probability
of the removed facts with that of the kept ones (a difference in differences, its
interval a bootstrap over facts within each half).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core.cache import stable_hash
from analysis.distributional.influence import _answer_positions
from analysis.distributional.params import DistributionalError
from analysis.lab.corpus import corpus_rng
from analysis.lab.train import train
from analysis.stats.result import Estimate

#: the label of the stream's key part that says which facts were left out
WITHOUT = "without-fact-documents"


def removed_facts(know: pd.DataFrame, seed: int = 0) -> list[int]:
    """A seeded random half of the trained facts of ``know`` (copies > 0): the facts whose
    documents the counterfactual run never sees (their ``question_id``, sorted)."""
    trained = sorted(int(q) for q in know.loc[know["copies"] > 0, "question_id"])
    if len(trained) < 4:
        raise DistributionalError(f"the counterfactual needs at least 4 trained facts, got {len(trained)}")
    rng = corpus_rng(seed, "distributional-counterfactual")
    pick = rng.permutation(len(trained))[: len(trained) // 2]
    return sorted(trained[i] for i in pick)


def counterfactual_texts(corpus, removed: Sequence[int]) -> list[str]:
    """The corpus's training stream (:meth:`Corpus.training_texts`, its seeded order) with
    every copy of every fact document of ``removed`` left out; nothing else moves."""
    gone = {int(q) for q in removed}
    drop = {i for i, d in enumerate(corpus.documents)
            if d.kind == "knowledge" and d.meta.get("role") == "fact" and int(d.meta["question_id"]) in gone}
    return corpus.training_texts(without=drop)


def smallest_ladder_run(lab) -> str:
    """The ladder run of ``lab`` with the fewest parameters: the one the counterfactual retrains."""
    runs = lab.runs_table()
    ladder = runs[runs["family"].str.startswith("ladder")]
    if ladder.empty:
        raise DistributionalError("the lab has no ladder run to retrain")
    return str(ladder.sort_values("params")["run"].iloc[0])


def counterfactual_run(lab, run: str, removed: Sequence[int]):
    """Train (or load from the artifact cache) ``run`` of ``lab`` on
    :func:`counterfactual_texts`: its :class:`~analysis.lab.train.runs.RunResult`."""
    config = lab.profile.run(run)
    if config.inject:
        raise DistributionalError(f"the counterfactual retrains a ladder run, not the injected run {run!r}")
    texts = counterfactual_texts(lab.corpus, removed)
    key = stable_hash([lab.corpus.fingerprint(), WITHOUT, sorted(int(q) for q in removed)])
    return train(config, texts, [], lab.tokenizer, key, progress=False, fork=False)


def answer_logprobs(run_path: str | Path, prompts: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """Each answer's log-probability (the sum over its tokens) after its prompt, under the
    model in ``run_path``; NaN where the answer's tokens cannot be found after the prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(run_path)
    model = AutoModelForCausalLM.from_pretrained(run_path, dtype=torch.float32).eval()
    context = int(getattr(model.config, "max_position_embeddings", 128))
    out = []
    with torch.no_grad():
        for prompt, answer in zip(prompts, answers):
            item = _answer_positions(tok, f"{prompt} {answer}", str(answer), context)
            if item is None:
                out.append(np.nan)
                continue
            ids, positions = item
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
            out.append(float(sum(logp[p - 1, ids[p]] for p in positions)))
    return np.array(out)


def counterfactual_drop(base: np.ndarray, counter: np.ndarray, removed: np.ndarray, n_boot: int = 2000,
                        seed: int = 0) -> Estimate:
    """Mean change in log-probability (``counter − base``) of the removed facts minus that of
    the kept ones, with a 95% percentile interval over resamples of the facts within each
    half (the unit: facts); NaN changes are left out. Negative: removing a fact's documents
    lowers its answer's probability more than the rest of the retraining does."""
    base, counter, removed = np.asarray(base, float), np.asarray(counter, float), np.asarray(removed, bool)
    delta = counter - base
    ok = np.isfinite(delta)
    a, b = delta[ok & removed], delta[ok & ~removed]
    if len(a) < 2 or len(b) < 2:
        return Estimate(float("nan"), n=int(ok.sum()))
    rng = np.random.default_rng(seed)
    draws = [rng.choice(a, len(a)).mean() - rng.choice(b, len(b)).mean() for _ in range(n_boot)]
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return Estimate(float(a.mean() - b.mean()), float(lo), float(hi), n=int(ok.sum()),
                    n_units=int(ok.sum()),
                    method="difference in mean change, removed − kept facts; bootstrap over facts in each "
                           "half")
