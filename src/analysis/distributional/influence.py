"""Gradient influence of training documents on test examples (the source's Section 6).

The source follows Pruthi et al. (2020, TracIn): the influence of a training document
``d`` on a test example ``(x, y)`` is the sum, over training checkpoints ``θ_k`` with
learning rates ``η_k``, of the dot product of the document's loss gradient with the
test example's loss gradient, both losses taken on the output n-gram ``s^y``:

    I(d, (x, y)) = Σ_k η_k ∇ℓ(d; θ_k) · ∇ℓ((x, y); θ_k).

It averages ``I`` over R = 50 retrieved documents per test example, retrieved two ways:
documents holding the n-gram pair (``s^x`` and ``s^y``) and documents holding only the
output n-gram. Here:

* :func:`tracin` computes the sum for any model given a gradient function (the tests
  check it on a linear model whose gradients are written by hand);
* :func:`fact_documents` retrieves, for a knowledge fact, the lab documents that hold
  the stretch of its question the corpus pairs with the answer and the answer (pair
  documents) and those that hold the answer without it (output-only documents);
* :func:`lab_influence` runs it on one lab run, at its saved checkpoints (the standard
  twin of the insertion runs saves a fork where each window opens; a run without forks
  has its final weights only), and :func:`influence_gap` gives the mean gap per fact
  with an interval over facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core.cache import memo
from analysis.distributional.params import DistributionalError
from analysis.distributional.run import documents_key
from analysis.stats.resampling import cluster_bootstrap
from analysis.stats.result import Estimate

#: documents retrieved per test example and way (the source's R)
R_DOCS = 50
#: the longest question stretch looked for in a fact's documents (words)
MAX_SPAN_WORDS = 8

_WORD = re.compile(r"[a-z0-9]+")


def tracin(grad: Callable[[object, object], np.ndarray], checkpoints: Sequence[tuple[object, float]],
           tests: Sequence[object], docs: Sequence[Sequence[object]]) -> list[np.ndarray]:
    """``Σ_k η_k ∇ℓ(d; θ_k) · ∇ℓ(t; θ_k)`` for every test ``t`` of ``tests`` and each of its
    documents ``docs[i]``: ``grad(θ, item)`` is the flat loss gradient of an item at
    checkpoint ``θ``; ``checkpoints`` are ``(θ_k, η_k)`` pairs. Returns one array per
    test, its documents' influences in order."""
    if len(tests) != len(docs):
        raise DistributionalError(f"tracin: {len(tests)} tests but {len(docs)} document lists")
    if not checkpoints:
        raise DistributionalError("tracin needs at least one checkpoint")
    out = [np.zeros(len(d)) for d in docs]
    for theta, lr in checkpoints:
        for i, (t, ds) in enumerate(zip(tests, docs)):
            if not len(ds):
                continue
            g = grad(theta, t)
            out[i] += float(lr) * np.array([float(np.dot(grad(theta, d), g)) for d in ds])
    return out


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _has(words: Sequence[str], gram: Sequence[str]) -> bool:
    n = len(gram)
    return n > 0 and any(list(words[i:i + n]) == list(gram) for i in range(len(words) - n + 1))


def question_span(question: str, texts: Sequence[str], max_words: int = MAX_SPAN_WORDS) -> list[str]:
    """The longest stretch of ``question``'s words (at most ``max_words``) that one of
    ``texts`` (the fact's own documents) holds: the input n-gram the corpus pairs with
    the answer. Empty when none holds two words of it in a row."""
    q = _words(question)
    docs = [_words(t) for t in texts]
    for n in range(min(max_words, len(q)), 1, -1):
        for i in range(len(q) - n + 1):
            gram = q[i:i + n]
            if any(_has(d, gram) for d in docs):
                return gram
    return []


def fact_documents(know: pd.DataFrame, documents: Sequence, r: int = R_DOCS, seed: int = 0) -> pd.DataFrame:
    """For each trained fact of ``know`` (:func:`~analysis.distributional.run.knowledge_task`):
    its input n-gram (:func:`question_span` over its own fact documents), and up to ``r``
    training documents (``copies`` > 0) of each way, a seeded sample: ``pair`` documents
    hold the span and the answer's words in a row, ``output`` documents the answer without
    the span. Columns ``question_id``, ``span``, ``pair`` and ``output`` (lists of document
    indices into ``documents``), ``n_pair`` and ``n_output`` (how many existed)."""
    rng = np.random.default_rng(seed)
    trained = [(i, d) for i, d in enumerate(documents) if d.copies > 0]
    words = {i: _words(d.text) for i, d in trained}
    own: dict[int, list[str]] = {}  # a fact's own documents
    for _, d in trained:
        if d.kind == "knowledge" and d.meta.get("role") == "fact":
            own.setdefault(int(d.meta["question_id"]), []).append(d.text)
    rows = []
    for f in know.itertuples():
        if f.copies <= 0 or f.question_id not in own:
            continue
        span, answer = question_span(f.question, own[f.question_id]), _words(f.answer)
        if not span or not answer:
            continue
        holding = [i for i, _ in trained if _has(words[i], answer)]
        pair = [i for i in holding if _has(words[i], span)]
        output = [i for i in holding if not _has(words[i], span)]
        pick = [sorted(rng.choice(ids, size=min(r, len(ids)), replace=False).tolist()) if ids else []
                for ids in (pair, output)]
        rows.append({"question_id": f.question_id, "span": " ".join(span), "pair": pick[0], "output": pick[1],
                     "n_pair": len(pair), "n_output": len(output)})
    return pd.DataFrame(rows, columns=["question_id", "span", "pair", "output", "n_pair", "n_output"])


def _answer_positions(tokenizer, text: str, answer: str, context: int) -> tuple[list[int], list[int]] | None:
    """Token ids of ``text`` (cut to ``context``) and the positions of the tokens that
    overlap the first case-insensitive occurrence of ``answer``; None when it is not
    inside the kept tokens."""
    at = text.lower().find(answer.lower())
    if at < 0:
        return None
    enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    ids, spans = enc["input_ids"], enc["offset_mapping"]
    pos = [k for k, (a, b) in enumerate(spans) if a < at + len(answer) and b > at]
    if not pos or pos[0] == 0:
        return None
    lo = max(0, pos[-1] + 1 - context)
    if pos[0] - lo < 1:
        return None
    return ids[lo:pos[-1] + 1], [p - lo for p in pos]


def _grad_fn(model):
    """The flat gradient of the mean negative log-likelihood of an item's target tokens
    (``(ids, positions)``: each position's token predicted from the tokens before it)."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]

    def grad(theta, item):
        if theta is not None and getattr(model, "_membook_theta", None) is not theta:
            missing, unexpected = model.load_state_dict(theta, strict=False)
            tied = {"lm_head.weight"} if model.config.tie_word_embeddings else set()
            if unexpected or set(missing) - tied:
                raise DistributionalError(f"a checkpoint does not fit the model: missing {missing}, "
                                          f"unexpected {unexpected}")
            model.tie_weights()
            model._membook_theta = theta
        ids, positions = item
        x = torch.tensor([ids])
        model.zero_grad(set_to_none=True)
        logits = model(x).logits[0]
        logp = torch.log_softmax(logits[:-1].float(), dim=-1)
        target = torch.tensor(positions)
        loss = -logp[target - 1, x[0, target]].mean()
        loss.backward()
        return torch.cat([p.grad.reshape(-1) for p in params]).detach().numpy().astype(np.float64)

    return grad


def checkpoints_of(path: str | Path) -> list[tuple[dict, float, int]]:
    """A run folder's checkpoints: every fork (``forks/step-<k>.pt``) and the final weights,
    each ``(state dict, learning rate at that step, step)``; the learning rates read from the
    run's ``curve.parquet``."""
    import torch
    from safetensors.torch import load_file

    path = Path(path)
    curve = pd.read_parquet(path / "curve.parquet").set_index("step")["lr"]
    out = []
    for f in sorted((path / "forks").glob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1])):
        state = torch.load(f, map_location="cpu", weights_only=True)
        step = int(state["step"])
        out.append((state["model"], float(curve.loc[step]), step))
    last = int(curve.index.max())
    out.append((load_file(path / "model.safetensors"), float(curve.loc[last]), last + 1))
    return out


def checkpoint_steps(path: str | Path) -> list[int]:
    """The steps of a run folder's checkpoints (:func:`checkpoints_of`) without loading them:
    its forks', then the end of training."""
    path = Path(path)
    forks = sorted(int(f.stem.split("-")[1]) for f in (path / "forks").glob("step-*.pt"))
    last = int(pd.read_parquet(path / "curve.parquet", columns=["step"])["step"].max())
    return [*forks, last + 1]


def lab_influence(run_path: str | Path, know: pd.DataFrame, documents: Sequence, retrieved: pd.DataFrame,
                  n_facts: int | None = None, seed: int = 0, swapped: bool = False) -> pd.DataFrame:
    """:func:`tracin` on the lab run in ``run_path`` at every checkpoint
    (:func:`checkpoints_of`): for each fact of ``retrieved`` (:func:`fact_documents`; a
    seeded sample of ``n_facts``), the test example is the chapter's prompt followed by the
    answer, its loss on the answer's tokens; each document's loss is on the tokens of its
    first occurrence of the answer. With ``swapped`` the test example ends in the fact's
    ``swapped_answer`` instead (the negative control: the same documents, a test example
    they hold no pair for). Returns one row per (fact, way, document): ``question_id``,
    ``way`` (``pair`` or ``output``), ``doc``, ``influence``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run_path = Path(run_path)
    tok = AutoTokenizer.from_pretrained(run_path)
    model = AutoModelForCausalLM.from_pretrained(run_path, dtype=torch.float32).eval()
    context = int(getattr(model.config, "max_position_embeddings", 128))
    facts = retrieved[(retrieved["n_pair"] > 0) & (retrieved["n_output"] > 0)]
    if n_facts is not None and len(facts) > n_facts:
        facts = facts.sample(n=n_facts, random_state=seed).sort_index()
    by_id = know.set_index("question_id")
    tests, docs, labels = [], [], []
    for f in facts.itertuples():
        k = by_id.loc[f.question_id]
        target = str(k["swapped_answer"] if swapped else k["answer"])
        test = _answer_positions(tok, f"{k['prompt']} {target}", target, context)
        if test is None:
            continue
        items, lab = [], []
        for way in ("pair", "output"):
            for j in getattr(f, way):
                item = _answer_positions(tok, documents[j].text, str(k["answer"]), context)
                if item is not None:
                    items.append(item)
                    lab.append((f.question_id, way, j))
        tests.append(test), docs.append(items), labels.append(lab)
    ckpts = [(theta, lr) for theta, lr, _ in checkpoints_of(run_path)]
    values = tracin(_grad_fn(model), ckpts, tests, docs)
    rows = [(q, way, j, float(v)) for lab, vals in zip(labels, values) for (q, way, j), v in zip(lab, vals)]
    return pd.DataFrame(rows, columns=["question_id", "way", "doc", "influence"])


def influence_gap(influence: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> Estimate:
    """The mean over facts of (mean influence of a fact's pair documents − mean of its
    output-only documents), with a 95% bootstrap interval over facts (the unit: each
    fact's documents stay together); facts lacking either way are left out."""
    means = influence.groupby(["question_id", "way"])["influence"].mean().unstack()
    if not {"pair", "output"} <= set(means.columns):
        return Estimate(float("nan"), n=len(influence))
    gaps = (means["pair"] - means["output"]).dropna().to_numpy()
    if len(gaps) < 2:
        return Estimate(float(gaps.mean()) if len(gaps) else float("nan"), n=len(influence),
                        n_units=len(gaps))
    est = cluster_bootstrap(lambda idx: float(gaps[idx].mean()), np.arange(len(gaps)), n_boot=n_boot,
                            seed=seed)
    return Estimate(est.value, est.lo, est.hi, n=len(influence), n_units=len(gaps),
                    method="mean over facts of pair − output-only influence; bootstrap over facts")


def influence_table(influence: pd.DataFrame) -> pd.DataFrame:
    """Per way: documents, facts, and the mean and median influence."""
    g = influence.groupby("way", sort=False)["influence"]
    return pd.DataFrame({"documents": g.size(), "facts": influence.groupby("way")["question_id"].nunique(),
                         "mean influence": g.mean(), "median influence": g.median()}).reset_index()


def fact_documents_summary(retrieved: pd.DataFrame) -> Mapping[str, int]:
    """How many facts have documents of both ways, and how many documents exist per way."""
    both = retrieved[(retrieved["n_pair"] > 0) & (retrieved["n_output"] > 0)]
    return {"facts": len(retrieved), "facts_both": len(both), "pair_docs": int(retrieved["n_pair"].sum()),
            "output_docs": int(retrieved["n_output"].sum())}


def influence_run(lab) -> str:
    """The ladder run the influence is computed on: the largest that saved checkpoints
    during training (a standard twin of the insertion runs), else the largest."""
    runs = lab.runs_table()
    ladder = runs[runs["family"].str.startswith("ladder")].sort_values("params")
    with_forks = [r for r in ladder["run"] if (Path(lab.results[r].path) / "forks").is_dir()]
    if with_forks:
        return with_forks[-1]
    if ladder.empty:
        raise DistributionalError("the lab has no ladder run to compute influence on")
    return str(ladder["run"].iloc[-1])


def lab_influence_cached(lab, run: str, know: pd.DataFrame, n_facts: int, r: int, seed: int = 0,
                         swapped: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`fact_documents` and :func:`lab_influence` for ``run`` (``swapped``: the
    answers-swapped control), computed once per run (its folder is its key), facts,
    documents and code, then read from the artifact cache."""
    path = Path(lab.results[run].path)
    key = {"run": path.name, "corpus": documents_key(lab.corpus), "facts": know["question_id"].tolist(),
           "n_facts": n_facts, "r": r, "seed": seed}
    if swapped:  # the control's key gains a field; the task's key stays what it was
        key["swapped"] = know["swapped_answer"].tolist()

    def compute():
        retrieved = fact_documents(know, lab.corpus.documents, r=r, seed=seed)
        return retrieved, lab_influence(path, know, lab.corpus.documents, retrieved, n_facts=n_facts,
                                        seed=seed, swapped=swapped)

    return memo("distributional-influence", key, compute, code=("analysis.distributional.influence",))
