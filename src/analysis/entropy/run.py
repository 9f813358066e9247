"""Running models for the entropy chapter: prompting, scoring, and the lab's stream.

Every query goes through the shared model interface (:mod:`analysis.models`,
batched and cached): :func:`discoverable` continues each prompt and scores the
response, and the runs over answer lengths, sampling strategies and candidate
sets call it. :func:`training_stream` reads what a lab run trained on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.core import data
from analysis.entropy.candidates import CandidateSet, real_candidate_sets
from analysis.entropy.method import lcs, levenshtein, sample_pairs, trivial
from analysis.entropy.method_sets import Inference, SetResult, Stream, analyse_set, decide_membership, kept
from analysis.entropy.mia import attack_table
from analysis.entropy.params import (
    BOS_CHARS,
    BOS_MODELS,
    BOS_TEXT,
    BOS_TOKENS,
    LCS_FILTERS,
    PAPER_STRATEGIES,
    PAPER_TEMPERATURE,
    EntropyError,
)
from analysis.lab.ladder import run_injections
from analysis.models import GenerationSettings, load_model
from analysis.models.queries import QueryGroup


def discoverable(model, pairs: pd.DataFrame, settings, lcs_filter: str = "written",
                 progress: bool | str = False) -> pd.DataFrame:
    """Prompt ``model`` with every pair's prefix (token ids) for ``|s|`` new tokens.

    Returns ``pairs`` with ``response`` (token ids; None on error), ``error``,
    ``score`` (Levenshtein distance to the answer), ``suffix_text``, the LCS
    lengths of both filter readings (``lcs_ps``, ``lcs_pr``) and ``trivial``
    under ``lcs_filter``. Errors are recorded, never scored: their score is NaN.
    The prompt length must be the same for all pairs so one setting applies.
    """
    if lcs_filter not in LCS_FILTERS:
        raise EntropyError(f"lcs_filter must be one of {LCS_FILTERS}, got {lcs_filter!r}")
    lengths = {len(s) for s in pairs["suffix"]}
    if len(lengths) != 1:
        raise EntropyError(f"every answer must have the same length, got lengths {sorted(lengths)}")
    (suffix_len,) = lengths
    settings = GenerationSettings(**{**settings.as_dict(), "max_new_tokens": suffix_len})
    answers = model.generate_ids(list(pairs["prefix"]), settings, progress=progress)
    out = pairs.copy()
    out["response"] = [a.meta.get("ids") if a.ok else None for a in answers]
    out["error"] = [a.error for a in answers]
    ok = out["error"].isna().to_numpy()
    score = np.full(len(out), np.nan)
    if ok.any():
        score[ok] = levenshtein([out["response"].iat[i] for i in np.flatnonzero(ok)],
                                [out["suffix"].iat[i] for i in np.flatnonzero(ok)])
    out["score"] = score
    out["suffix_text"] = model.detokenize(list(out["suffix"]))
    out["lcs_ps"] = lcs(list(out["prefix"]), list(out["suffix"]))
    lcs_pr = np.full(len(out), -1)
    if ok.any():
        lcs_pr[ok] = lcs([out["prefix"].iat[i] for i in np.flatnonzero(ok)],
                         [out["response"].iat[i] for i in np.flatnonzero(ok)])
    out["lcs_pr"] = lcs_pr  # -1 where there is no response: never trivial, and never kept anyway
    out["trivial"] = trivial(out, lcs_filter)
    return out


def strategy_settings(name: str, seed: int = 0):
    """The generation settings of one of Appendix C.1's strategies (Table 4's names)."""
    table = dict(PAPER_STRATEGIES)
    if name not in table:
        raise EntropyError(f"strategy must be one of {list(table)}, got {name!r}")
    return GenerationSettings(seed=seed, **table[name])


def decoding_label(temperature: float) -> str:
    """How the chapter names a decoding: ``"greedy"`` at temperature 0, else ``"temperature t"``."""
    return "greedy" if temperature == 0 else f"temperature {temperature:g}"


def other_temperature(temperature: float) -> float:
    """The lab's second decoding: the source's main temperature, or greedy decoding
    when the run already decodes at the source's temperature."""
    return PAPER_TEMPERATURE if temperature != PAPER_TEMPERATURE else 0.0


def lab_decodings(temperature: float, seed: int = 0) -> dict:
    """The two decodings of the lab's main sample, by label: the run's
    ``temperature`` first, then :func:`other_temperature`."""
    return {decoding_label(t): GenerationSettings(temperature=float(t), seed=seed)
            for t in (temperature, other_temperature(temperature))}


def training_stream(lab, run: str, model) -> Stream:
    """The background passages, popular-text excerpts and (for a perturbed run) the
    injected sequences with at least one copy that lab run ``run`` trained on,
    tokenized by ``model`` (a lab model: the lab's tokenizer)."""
    corpus = lab.corpus
    cfg = lab.profile.run(run)
    docs = [(d.doc_id, d.text, d.copies, d.kind) for d in corpus.documents if d.kind == "background"]
    docs += [(d.doc_id, d.text, d.copies, d.kind) for d in corpus.documents if d.kind == "popular"]
    if cfg.inject:
        docs += [(d.seq_id, d.text, d.copies, "injected") for d in run_injections(cfg, corpus.injections)
                 if d.copies > 0]
    ids = model.tokenize([text for _, text, _, _ in docs])
    left_out = Counter(d.kind for d in corpus.documents if d.kind not in ("background", "popular"))
    return Stream(tokens={d[0]: t for d, t in zip(docs, ids)}, copies={d[0]: d[2] for d in docs},
                  source={d[0]: d[3] for d in docs}, left_out=dict(left_out))


def by_suffix_length(model, pairs: pd.DataFrame, lengths: Sequence[int], settings,
                     lcs_filter: str = "written", n_boot: int = 1000, seed: int = 0) -> dict[str, SetResult]:
    """The source's varying continuation lengths: the same prompts, each answer cut
    to its first ``L`` tokens for every ``L`` in ``lengths``, scored and analysed.
    Keys read ``"|s| = L"``."""
    out = {}
    for n in lengths:
        label = f"|s| = {n}"
        cut = pairs.assign(suffix=[s[:n] for s in pairs["suffix"]])
        out[label] = analyse_set(label, discoverable(model, cut, settings, lcs_filter, progress=label),
                                 n_boot=n_boot, seed=seed)
    return out


def by_strategy(model, pairs: pd.DataFrame, strategies: Sequence[str], lcs_filter: str = "written",
                n_boot: int = 1000, seed: int = 0) -> dict[str, SetResult]:
    """The source's Table 4 on one model: the same pairs decoded under each of
    Appendix C.1's strategies (:func:`strategy_settings`), scored and analysed."""
    return {name: analyse_set(name, discoverable(model, pairs, strategy_settings(name, seed=seed), lcs_filter,
                                                 progress=name), n_boot=n_boot, seed=seed)
            for name in strategies}


def score_sequences(model, ids: Sequence[Sequence[int]], progress: bool | str = False) -> pd.DataFrame:
    """Every membership-inference attack on each token sequence
    (:func:`~analysis.entropy.mia.attack_table`), from one cached ``score_ids_stats``
    request per sequence and the sequence's text."""
    ids = [list(map(int, x)) for x in ids]
    return attack_table(model.score_ids_stats(ids, progress=progress), model.detokenize(ids))


def dataset_inference(model, sets: Sequence[CandidateSet], prefix_tokens: int, suffix_tokens: int, n: int,
                      settings, lcs_filter: str = "written", n_boot: int = 1000, seed: int = 0,
                      sample_seed: int | None = None, mia_pairs: int | None = 0) -> Inference:
    """The auditor's procedure (Section 6.4) on one model: tokenize each set with
    the model, draw ``n`` pairs from it (set ``k`` with seed ``sample_seed + k``),
    score them, fit each set's line with a bootstrap (seed ``seed``) and decide
    every set against τ from the reference set (:func:`decide_membership`).

    With ``mia_pairs`` (None: all), the first ``mia_pairs`` kept pairs of each set
    are also scored as whole windows ``p + s`` by every membership-inference attack
    (:func:`score_sequences`), into ``Inference.attacks``: the same pairs, no new
    sample."""
    sample_seed = seed if sample_seed is None else sample_seed
    name = model.name.removeprefix("lab:")
    results, attacks = {}, {}
    for k, cand in enumerate(sets):
        tokens = dict(zip(cand.docs, model.tokenize(list(cand.docs.values()))))
        pairs = sample_pairs(tokens, prefix_tokens, suffix_tokens, n, seed=sample_seed + k,
                             balance=cand.balance)
        scored = discoverable(model, pairs, settings, lcs_filter, progress=f"{name}: {cand.label}")
        results[cand.label] = analyse_set(cand.label, scored, n_boot=n_boot, seed=seed)
        if mia_pairs != 0:
            use = kept(scored) if mia_pairs is None else kept(scored).head(mia_pairs)
            frame = score_sequences(model, [p + s for p, s in zip(use["prefix"], use["suffix"])],
                                    progress=f"{name}: {cand.label} (attacks)")
            attacks[cand.label] = frame.assign(doc_id=list(use["doc_id"]), member=cand.truth, set=cand.label)
    table = decide_membership(results, sets, name)
    table["kind"] = "lab" if model.name.startswith("lab:") else "real"
    return Inference(name, results, table, attacks)


def injected_candidates(lab, run: str, model) -> pd.DataFrame:
    """The lab's injected sequences as membership-inference candidates for lab run
    ``run``: one row per sequence with ``seq_id``, ``task``, ``copies`` (how often
    the run trained on it; 0 for the never-inserted controls), ``member`` and its
    token ids (``ids``, ``model``'s tokenizer). Which candidate lands at which copy
    level, the controls included, follows a seeded random order of each task's
    candidates, so membership is randomized and known."""
    cfg = lab.profile.run(run)
    inserted = ({i.seq_id for i in run_injections(cfg, lab.corpus.injections) if i.copies > 0}
                if cfg.inject else set())
    seqs = list(lab.corpus.injections)
    copies = [s.copies if s.seq_id in inserted else 0 for s in seqs]
    return pd.DataFrame({"seq_id": [s.seq_id for s in seqs], "task": [s.task for s in seqs], "copies": copies,
                         "member": [int(c > 0) for c in copies],
                         "ids": model.tokenize([s.text for s in seqs])})


def bos_passage() -> str:
    """The fixed popular-text passage of the BOS check: characters
    ``BOS_CHARS`` of the mirror's ``BOS_TEXT`` (*Alice in Wonderland*)."""
    lo, hi = BOS_CHARS
    return data.popular_texts()[BOS_TEXT][lo:hi]


def bos_check(models: Sequence[str], load=load_model, passage: str | None = None,
              tokens: int = BOS_TOKENS) -> dict:
    """What the beginning-of-sequence token changes (issue 42): the mean NLL per
    token (nats) of the first ``tokens`` tokens of ``passage`` (:func:`bos_passage`)
    scored by ``score_ids`` without the BOS (``bos=False``, what the id paths read
    before the fix) and with it (the model's own rule), for each model of
    :data:`~analysis.entropy.params.BOS_MODELS` among ``models``. One entry per key
    of ``BOS_MODELS``: ``{"model", "tokens", "bos_ids", "before", "after"}``, or None
    where the chapter does not run that model. Through the query cache like every query."""
    out = {}
    for key, name in BOS_MODELS.items():
        if name not in models:
            out[key] = None
            continue
        model = load(name)
        text = bos_passage() if passage is None else passage
        ids = model.tokenize([text])[0][:tokens]
        before, after = (float(-np.mean(model.score_ids([ids], bos=b)[0]["logprobs"])) for b in (False, None))
        out[key] = {"model": name, "tokens": len(ids), "bos_ids": list(model.id_prefix()), "before": before,
                    "after": after}
    return out


def plan(params) -> list[QueryGroup]:
    """The queries an execution at ``params`` sends to the real-data section's models,
    for :mod:`analysis.book.plan` to count (the lab's models are local): per model,
    ``n_real`` continuations of a ``prefix_tokens``-token prompt for ``suffix_tokens``
    new tokens in each real candidate set (:func:`real_candidate_sets`), then at most
    ``n_mia_real`` whole windows of each set scored for the membership attacks (only
    pairs the trivial-pair filter keeps are). Loads and calls nothing."""
    sets = real_candidate_sets(data.popular_texts(), data.baseline_texts())
    groups = []
    for name in params["models"]:
        n = params["n_real"] * len(sets)
        groups.append(QueryGroup("dataset inference: continuations", name, [None] * n,
                                 params["suffix_tokens"], tokens_each=params["prefix_tokens"]))
        if params["n_mia_real"]:
            m, window = params["n_mia_real"] * len(sets), params["prefix_tokens"] + params["suffix_tokens"]
            groups.append(QueryGroup("membership attacks: window scores", name, [None] * m, 0,
                                     bound="at most", tokens_each=window))
    return groups
