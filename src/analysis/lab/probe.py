"""First looks at what the lab's models learned (the lab page, ``notebooks/lab.md``).

Pure functions over the shared model interface: no printing or plotting.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core.cache import memo, stable_hash
from analysis.lab.config import LabConfigError
from analysis.lab.ladder import run_injections
from analysis.lab.train import eval_loss, recount_exposure, tokenizer_fingerprint

#: the modules whose code computes a run's loss on texts (:func:`run_loss`)
LOSS_CODE = ("analysis.lab.train.evaluate", "analysis.lab.train.order")
#: the modules whose code computes an exposure check (:func:`exposure_checks`)
CHECK_CODE = (__name__, "analysis.lab.train.exposure", "analysis.lab.train.order")


def run_fingerprint(path: str | os.PathLike) -> str:
    """The identity of a trained run's checkpoint folder: its name (the hash of the
    run's key: configuration, corpus, tokenizer and injections) and its ``DONE.json``
    record, which every training of the run writes anew. The lab-run part of a
    memo key (:func:`analysis.core.cache.memo`), so a value computed from a run is
    never reused for a retrained one."""
    done = Path(path) / "DONE.json"
    if not done.is_file():
        raise LabConfigError(f"path must be a finished lab run's folder (with DONE.json), got {str(path)!r}")
    return stable_hash([Path(path).name, hashlib.sha256(done.read_bytes()).hexdigest()])


def run_loss(path: str | os.PathLike, texts: Sequence[str]) -> float:
    """:func:`analysis.lab.train.eval_loss` of ``texts`` under the run at ``path``,
    computed once per run and texts (memoized under :func:`run_fingerprint`, the
    texts' hash, the code of :data:`LOSS_CODE` and the torch and transformers versions)."""
    texts = list(texts)
    key = {"run": run_fingerprint(path), "texts": stable_hash(texts, length=32),
           "torch": version("torch"), "transformers": version("transformers")}
    return memo("lab-loss", key, lambda: eval_loss(path, texts), code=LOSS_CODE)


def split_half(text: str) -> tuple[str, str]:
    """Split a sequence into a prefix (first half of its words) and the rest,
    keeping the space with the continuation so tokenization matches training."""
    words = text.split(" ")
    half = len(words) // 2
    return " ".join(words[:half]), " " + " ".join(words[half:])


def injection_nll(model, injections: pd.DataFrame) -> pd.DataFrame:
    """Mean per-token NLL of each injected sequence's second half given its first
    half, under ``model`` (teacher forcing through :meth:`Model.logprobs`).

    ``injections`` has columns seq_id, task, copies and text. Returns them with
    ``suffix_nll`` (nats per token) and ``suffix_tokens``.
    """
    pairs = [split_half(t) for t in injections["text"]]
    lps = model.logprobs([p for p, _ in pairs], [s for _, s in pairs])
    out = injections[["seq_id", "task", "copies"]].copy()
    out["suffix_nll"] = [float(-np.mean(lp)) if len(lp) else np.nan for lp in lps]
    out["suffix_tokens"] = [len(lp) for lp in lps]
    out["model"] = model.name
    return out


def exposure_check(exposure: pd.DataFrame, recount: pd.DataFrame) -> pd.DataFrame:
    """Compare a run's exposure table with a brute-force recount of its data order.

    Returns one row per sequence with both values of copies_seen, first_step and
    last_step and an ``agrees`` flag.
    """
    cols = ["copies_seen", "first_step", "last_step"]
    merged = exposure[["seq_id", "task"] + cols].merge(
        recount[["seq_id"] + cols], on="seq_id", suffixes=("", "_recount"), how="outer"
    )
    agrees = np.ones(len(merged), dtype=bool)
    for c in cols:
        a, b = merged[c].astype(float), merged[f"{c}_recount"].astype(float)
        agrees &= (a == b) | (a.isna() & b.isna())
    merged["agrees"] = agrees
    return merged


def loss_comparison(lab, runs, n_docs: int, seed: int = 0) -> pd.DataFrame:
    """Mean token loss of each of ``runs`` on ``n_docs`` training documents (popular
    and background) and ``n_docs`` held-out documents, drawn with ``seed``; with the
    held-out minus training gap. Each loss is computed once per run and documents
    (:func:`run_loss`)."""
    rng = np.random.default_rng(seed)

    def draw(texts):
        return [texts[i] for i in rng.choice(len(texts), min(n_docs, len(texts)), replace=False)]

    train_docs = draw([d.text for d in lab.corpus.documents if d.kind in ("popular", "background")])
    heldout_docs = draw([d.text for d in lab.corpus.heldout])
    table = lab.runs_table().set_index("run")
    out = pd.DataFrame([{"run": r, "family": table.loc[r, "family"], "params": table.loc[r, "params"],
                         "train_loss": run_loss(lab.results[r].path, train_docs),
                         "heldout_loss": run_loss(lab.results[r].path, heldout_docs)} for r in runs])
    out["gap"] = out["heldout_loss"] - out["train_loss"]
    return out


def exposure_checks(lab) -> pd.DataFrame:
    """For every injected run of a built lab, its exposure table against a brute-force
    recount of its logged data order: sequences, how many agree exactly, copies seen.
    Each run's row is computed once per run (:func:`run_fingerprint`), corpus,
    tokenizer and injections, then read from the artifact cache
    (:func:`analysis.core.cache.memo`)."""
    texts = lab.corpus.training_texts()
    common = {"corpus": lab.corpus.fingerprint(), "tokenizer": tokenizer_fingerprint(lab.tokenizer)}
    rows = []
    for run in (r for r in lab.profile.runs if r.inject and r.name in lab.results):
        res = lab.results[run.name]
        injections = run_injections(run, lab.corpus.injections)

        def row(res=res, injections=injections, name=run.name):
            recount = recount_exposure(res.order(), texts, injections, lab.tokenizer)
            check = exposure_check(res.exposure, recount)
            return {"run": name, "sequences": len(check), "agree": int(check["agrees"].sum()),
                    "copies seen": int(res.exposure["copies_seen"].sum())}

        key = {**common, "run": run_fingerprint(res.path), "name": run.name,
               "injections": stable_hash([[i.seq_id, i.text, i.copies, i.window] for i in injections])}
        rows.append(memo("lab-exposure-check", key, row, code=CHECK_CODE))
    return pd.DataFrame(rows)


def memorization_drop(nll: pd.DataFrame, model: str) -> float:
    """Suffix NLL of ``model`` on never-inserted controls minus that on the top copy level."""
    sub = nll[nll["model"] == model]
    return float(sub.loc[sub["copies"] == 0, "suffix_nll"].mean()
                 - sub.loc[sub["copies"] == nll["copies"].max(), "suffix_nll"].mean())


def monotone_families(losses: pd.DataFrame) -> pd.DataFrame:
    """Per ladder family of :func:`loss_comparison`, whether training loss and
    held-out loss both fall strictly with every step up in parameters.

    Returns one row per family: ``models``, ``train_falls``, ``heldout_falls`` and
    ``monotone`` (both).
    """
    rows = []
    for family, sub in losses.sort_values("params").groupby("family", sort=True):
        train_falls = bool((np.diff(sub["train_loss"].to_numpy()) < 0).all())
        heldout_falls = bool((np.diff(sub["heldout_loss"].to_numpy()) < 0).all())
        rows.append({"family": family, "models": len(sub), "train_falls": train_falls,
                     "heldout_falls": heldout_falls, "monotone": train_falls and heldout_falls})
    return pd.DataFrame(rows, columns=["family", "models", "train_falls", "heldout_falls", "monotone"])


def popular_by_copies(acc: pd.DataFrame, manifest: pd.DataFrame,
                      bins: tuple[int, ...] = (0, 4, 16, 64, 1_000_000)) -> pd.DataFrame:
    """Next-word accuracy inside the popular excerpts by how often each excerpt was
    trained, per model, beside the accuracy on the never-trained baseline stories.

    ``acc`` is the size chapter's accuracy table (``model, group, text_id,
    prefix_len, acc``); ``manifest`` the corpus manifest (its popular rows give each
    text's copies). Returns one row per model and copy bin (``copies`` labelled
    ``"lo–hi"``) with ``texts``, ``acc`` (mean over texts and lengths) and ``baseline``.
    """
    copies = manifest.loc[manifest["kind"] == "popular"].set_index("text_id")["copies"]
    pop = acc.loc[acc["group"] == "popular"].groupby(["model", "text_id"], as_index=False)["acc"].mean()
    pop["n_copies"] = pop["text_id"].map(copies)
    edges = list(bins)
    labels = [f"{lo + 1}–{hi}" if hi < bins[-1] else f"{lo + 1}+" for lo, hi in zip(edges[:-1], edges[1:])]
    pop["copies"] = pd.cut(pop["n_copies"], edges, labels=labels)
    base = acc.loc[acc["group"] == "baseline"].groupby("model")["acc"].mean()
    out = (pop.groupby(["model", "copies"], observed=True)
           .agg(texts=("text_id", "nunique"), acc=("acc", "mean")).reset_index())
    out["baseline"] = out["model"].map(base)
    return out
