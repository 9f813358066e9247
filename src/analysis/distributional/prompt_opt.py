"""The source's prompt optimization (its Section 7, Table 1), on the lab.

The source asked GPT-4o to rewrite each task's instruction so that its n-grams are as
frequent in the pretraining corpus as it could make them (the "memorization" prompt) or
as rare (the "generalization" prompt), with WIMBD's n-gram counts as the feedback, and
compared the accuracy of the two; the rewritten prompts' lengths were "not
significantly different". Here a search over paraphrase templates stands in for that
optimizer: every combination of an instruction (a *lead*, before the question) and an
answer cue (after it) from a fixed list, all of the base prompt's word count, is scored
by the lab corpus's own document counts (:func:`template_score`), and the highest- and
lowest-scoring templates whose prompts share no 8-word n-gram with a training document
(the source's decontamination rule) are the two arms (:func:`optimize`).

:func:`prompt_gap` compares the arms' accuracy on the same instances (the unit: the fact
or the problem), the mean over models of each model's difference, with a bootstrap over
instances; the negative control scores the same answers against another instance's
answer (:func:`control_gold`), where a prompt that only shifts which strings a model
emits, not whether it recalls this fact, would show the same gap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis import ngrams as G
from analysis.distributional.method_tables import score_answers
from analysis.distributional.params import KNOWLEDGE_PROMPT, DistributionalError
from analysis.distributional.run import derange, generate_answers
from analysis.lab.corpus.facts import DECONTAMINATION_N, decontamination_words
from analysis.stats.result import Estimate

#: the placeholder of the question in a template
SLOT = "{question}"
#: the knowledge task's candidate instructions: four words each, like the source's
#: "Answer the following question:"; some in the corpus's quiz-night wording, some in words
#: it never uses
KNOWLEDGE_LEADS = (
    "Answer the following question:",
    "Answer this quiz question:",
    "The next card read:",
    "The host asked this:",
    "Read the quiz card:",
    "A round came up:",
    "Kindly address this inquiry:",
    "Please resolve this query:",
    "Identify the correct term:",
    "Furnish a precise reply:",
    "Consider this trivia prompt:",
    "Supply the requested fact:",
)
#: the knowledge task's answer cues: one word each, like the base prompt's "Answer:"
KNOWLEDGE_CUES = ("Answer:", "Reply:", "Response:", "Result:", "Output:", "Solution:")
#: the reasoning task's candidate instructions (four words each); the reasoning prompt
#: has no cue, since the corpus's worked problems continue the question at once
REASONING_LEADS = (
    "Solve the following problem:",
    "Answer the following question:",
    "Here is a question:",
    "Work out this sum:",
    "Read the problem carefully:",
    "Think about this problem:",
    "Compute the requested quantity:",
    "Determine the numerical result:",
    "Evaluate this arithmetic scenario:",
    "Calculate the final value:",
    "Ascertain the resulting figure:",
    "Quantify the described outcome:",
)
REASONING_CUES = ("",)
#: the base prompt of each task, whose word count the candidates match: the chapter's
#: knowledge prompt, and for reasoning (asked with the bare question) the first lead
BASES = {"knowledge": KNOWLEDGE_PROMPT, "reasoning": f"{REASONING_LEADS[0]} {{question}}"}
#: each task's candidate templates
CANDIDATES = {"knowledge": (KNOWLEDGE_LEADS, KNOWLEDGE_CUES), "reasoning": (REASONING_LEADS, REASONING_CUES)}
#: the word n-gram lengths a template is scored on
SCORE_N = (1, 2, 3)
#: bootstrap resamples of the instances behind a gap's interval, and their seed
N_BOOT = 2000
BOOT_SEED = 0
#: the two arms, in the source's words
MEMORIZATION, GENERALIZATION = "memorization", "generalization"


def templates(leads: Sequence[str], cues: Sequence[str]) -> list[str]:
    """Every ``lead {question} cue`` combination (a cue of ``""`` adds nothing)."""
    if not leads or not cues:
        raise DistributionalError("templates need at least one lead and one cue")
    return [" ".join(p for p in (lead, SLOT, cue) if p) for lead in leads for cue in cues]


def instruction_words(template: str) -> list[list[str]]:
    """The template's own words, part by part (before and after the question), as the
    corpus counts tokenize them (:func:`analysis.ngrams.words`); the question's words are
    not the template's and are not scored."""
    if template.count(SLOT) != 1:
        raise DistributionalError(f"a template must hold {SLOT} exactly once, got {template!r}")
    return [G.words(part) for part in template.split(SLOT) if part.strip()]


def word_count(template: str) -> int:
    """Words of the template's own text, punctuation left out (the length the arms match on)."""
    return sum(1 for part in instruction_words(template) for w in part if any(ch.isalnum() for ch in w))


def template_score(template: str, index, ns: Sequence[int] = SCORE_N) -> float:
    """The template's corpus frequency: the mean of log10(1 + C(g)) over its own word
    n-grams g (each length in ``ns``, never across the question), C the copies-weighted
    document count of ``index`` (stopwords kept: an instruction is mostly stopwords). The
    logarithm keeps one frequent word from setting the mean, as a mean of raw counts would."""
    grams = [tuple(part[i:i + n]) for part in instruction_words(template) for n in ns
             for i in range(len(part) - n + 1)]
    if not grams:
        raise DistributionalError(f"template {template!r} has no word n-gram to score")
    return float(np.mean(np.log10(1.0 + G.doc_count(index, grams))))


def fill(template: str, questions: Sequence[str]) -> list[str]:
    """The template around each question."""
    return [template.replace(SLOT, q) for q in questions]


def template_grams(template: str, question: str, n: int = DECONTAMINATION_N) -> set[tuple[str, ...]]:
    """The ``n``-word n-grams of the filled prompt that hold at least one of the
    template's words (decontamination words: lower case, letters and digits); the
    question's own n-grams are the question's contamination, which the chapter checks
    on its own. A prompt shorter than ``n`` words is its one n-gram, as the source's
    rule treats short items."""
    pre, post = (decontamination_words(p) for p in template.split(SLOT))
    q = decontamination_words(question)
    words, lo, hi = pre + q + post, len(pre), len(pre) + len(q)
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1) if i < lo or i + n > hi}


def training_grams(documents: Sequence[str], n: int = DECONTAMINATION_N) -> set[tuple[str, ...]]:
    """Every ``n``-word n-gram of the training documents (decontamination words)."""
    seen: set[tuple[str, ...]] = set()
    for text in documents:
        w = decontamination_words(text)
        seen.update(tuple(w[i:i + n]) for i in range(len(w) - n + 1))
    return seen


def optimize(candidates: Sequence[str], questions: Sequence[str], index, documents: Sequence[str],
             base: str) -> dict:
    """The two arms of the search: among ``candidates`` of ``base``'s word count, the
    highest-scoring (:func:`template_score`; ``memorization``) and the lowest-scoring
    (``generalization``) template that adds no contamination: none of its prompts has
    a :data:`~analysis.lab.corpus.facts.DECONTAMINATION_N`-word n-gram holding one of
    its words (:func:`template_grams`) that a training document (``documents``) also
    holds. A template that would is skipped, and ``scores`` says so.

    Returns ``{"memorization": template, "generalization": template, "scores": table}``,
    the table one row per candidate (``template``, ``words``, ``score``, ``rank``,
    ``contaminated``)."""
    length = word_count(base)
    pool = [t for t in dict.fromkeys(candidates) if word_count(t) == length]
    if len(pool) < 2:
        raise DistributionalError(f"fewer than two candidate templates have the base's {length} words")
    questions = list(questions)
    seen = training_grams(documents)
    scores = pd.DataFrame({"template": pool, "words": length,
                           "score": [template_score(t, index) for t in pool],
                           "contaminated": [any(not template_grams(t, q).isdisjoint(seen) for q in questions)
                                            for t in pool]})
    scores = scores.sort_values(["score", "template"], ascending=[False, True], kind="stable")
    scores = scores.reset_index(drop=True)
    scores["rank"] = np.arange(1, len(scores) + 1)
    clean = scores.loc[~scores["contaminated"], "template"].tolist()
    if len(clean) < 2:
        raise DistributionalError("fewer than two candidate templates keep every prompt decontaminated")
    return {MEMORIZATION: clean[0], GENERALIZATION: clean[-1], "scores": scores}


def control_gold(gold: Sequence, seed: int = 0) -> list:
    """The negative control's gold: each instance gets another instance's answer (a
    seeded derangement among instances whose answers differ from its own)."""
    gold = list(gold)
    return derange(gold, [str(g) for g in gold], "distributional-prompt-opt-control", seed, who="instance",
                   what="the control needs")


def search_prompts(task: str, spec: Mapping, index, documents: Sequence[str], n: int | None = None) -> dict:
    """:func:`optimize` over ``task``'s candidate templates (:data:`CANDIDATES`, base
    :data:`BASES`) for the first ``n`` questions of ``spec`` (a task of
    :func:`~analysis.distributional.method_tables.task_specs`; all when None)."""
    if task not in CANDIDATES:
        raise DistributionalError(f"task must be one of {sorted(CANDIDATES)}, got {task!r}")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 2):
        raise DistributionalError(f"n must be an integer of at least 2 (questions), got {n!r}")
    leads, cues = CANDIDATES[task]
    return optimize(templates(leads, cues), list(spec["inputs"])[:n], index, documents, BASES[task])


def arm_answers(models: Mapping[str, object], task: str, spec: Mapping, arms: Mapping[str, str],
                control: Sequence, tokens: int, n: int | None = None) -> dict[str, pd.DataFrame]:
    """Every model's greedy answer to the first ``n`` questions of ``spec`` under each arm's
    template (``arms``: :func:`optimize`'s result; through the model interface, cached),
    scored against the gold (``correct``) and against ``control`` (the negative control's
    gold, one per question: ``control``). ``tokens`` new tokens per answer."""
    k = len(spec["inputs"]) if n is None else min(int(n), len(spec["inputs"]))
    if len(control) < k:
        raise DistributionalError(f"control needs one answer per question ({k}), got {len(control)}")
    out = {}
    for arm in (MEMORIZATION, GENERALIZATION):
        sub = {"inputs": list(spec["inputs"])[:k], "prompts": fill(arms[arm], list(spec["inputs"])[:k]),
               "gold": list(spec["gold"])[:k]}
        answers = generate_answers(models, {task: sub}, reasoning_tokens=tokens, knowledge_tokens=tokens)
        scored = score_answers(answers, {task: sub})
        ctrl = score_answers(answers, {task: {**sub, "gold": list(control)[:k]}})
        out[arm] = scored.assign(control=ctrl["correct"].to_numpy())
    return out


def arm_table(scored: Mapping[str, pd.DataFrame], column: str = "correct") -> pd.DataFrame:
    """The arms side by side: per arm (``scored``: arm → scored answers of one task, with
    ``model``, ``instance`` and ``column``), one column of that score, one row per
    (model, instance) both arms answered (an error in either arm drops the pair)."""
    frames = [s.set_index(["model", "instance"])[column].rename(arm) for arm, s in scored.items()]
    return pd.concat(frames, axis=1).dropna().reset_index()


def prompt_gap(paired: pd.DataFrame, a: str = MEMORIZATION, b: str = GENERALIZATION,
               n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> tuple[Estimate, pd.DataFrame]:
    """Accuracy under arm ``a`` minus arm ``b`` (:func:`arm_table`'s ``paired``): the mean
    over models of each model's difference on the instances it answered in both arms,
    with a 95% percentile interval from resampling whole instances (the unit; the same
    instances for every model in a resample). Also the per-model table: ``model``,
    accuracy in each arm, ``difference``."""
    if paired.empty:
        return Estimate(float("nan")), pd.DataFrame(columns=["model", a, b, "difference"])
    models = list(dict.fromkeys(paired["model"]))
    instances = np.sort(paired["instance"].unique())
    col = {i: k for k, i in enumerate(instances)}
    diff = np.full((len(models), len(instances)), np.nan)
    for m_i, m in enumerate(models):
        g = paired[paired["model"] == m]
        diff[m_i, [col[i] for i in g["instance"]]] = (g[a] - g[b]).to_numpy()
    per_model = np.nanmean(diff, axis=1)
    table = (paired.groupby("model", sort=False)[[a, b]].mean().reindex(models).reset_index()
             .assign(difference=per_model))
    value = float(np.mean(per_model))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        pick = diff[:, rng.integers(0, len(instances), len(instances))]
        with np.errstate(invalid="ignore"):
            means = np.nanmean(pick, axis=1) if np.isfinite(pick).any(axis=1).all() else None
        if means is not None:
            draws.append(float(np.mean(means)))
    lo, hi = np.quantile(draws, [0.025, 0.975]) if draws else (np.nan, np.nan)
    est = Estimate(value, float(lo), float(hi), n=int(len(paired)), n_units=len(instances),
                   method=f"mean over {len(models)} models of accuracy({a}) − accuracy({b}); bootstrap over "
                          "instances")
    return est, table
