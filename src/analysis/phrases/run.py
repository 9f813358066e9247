"""Running the study: the phrase sample, the prompts, the models' completions.

:func:`query` asks one model (an :class:`analysis.models.Model`) to continue
every phrase of a sample, re-asking the too-short answers as the source did;
:func:`query_lab` asks the lab's ladder (:mod:`analysis.lab`) to continue the
phrases the lab trained at known copy levels. :func:`plan` lists the queries an
execution sends, for :mod:`analysis.book.plan`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core import data
from analysis.lab.phrase_selection import ENGLISH_TYPES, english_phrases
from analysis.lab.plan import lab_corpus, lab_ladder_names
from analysis.models.queries import QueryGroup, is_chat
from analysis.phrases.errors import PhrasesError
from analysis.phrases.method import check_lang, needs_requery
from analysis.phrases.method_rates import rates, score
from analysis.phrases.source import ENGLISH_PROMPT_PREFIX, PROMPT_PREFIX, SYSTEM_PROMPTS, THRESHOLD, TYPES
from analysis.stats.intervals import CI_ALPHA
from analysis.stats.sizing import planning_rate, two_stage_n

#: the columns of :func:`query`'s frame
QUERY_COLUMNS = ["phrase_id", "model", "type", "prompt", "completion", "error", "requeried"]

#: the columns of :func:`query_sized`'s table of samples, one row per model
SIZING_COLUMNS = ["model", "n_per_type", "n_phrases", "pilot_per_type", "pilot_matched_first",
                  "pilot_total_first", "pilot_matched_second", "pilot_total_second",
                  "planning_rate_first", "planning_rate_second", "planned", "capped"]

LAB_PHRASE_COLUMNS = ["id", "type", "text_id", "copies", "start", "end", "phrase", "doc_id"]


def sample_phrases(phrases: pd.DataFrame, n_per_type: int, seed: int = 0) -> pd.DataFrame:
    """Stratified sample: the first ``n_per_type`` phrases of each type in an order
    drawn with ``seed``.

    Each type (in sorted order) gets its own seeded permutation, so samples are
    nested: a larger ``n_per_type`` extends a smaller one at the same seed, which
    a sized sample (:func:`query_sized`) relies on to reuse its pilot. With
    ``n_per_type`` at or above a type's size the whole type is kept, so the paper
    profile runs all 2,000 phrases. Rows keep the file's order.
    """
    if isinstance(n_per_type, bool) or not isinstance(n_per_type, (int, np.integer)) or n_per_type < 1:
        raise PhrasesError(f"n_per_type must be a positive integer, got {n_per_type}")
    groups = list(phrases.groupby("type", sort=True))
    keep = []
    for (_, group), seq in zip(groups, np.random.SeedSequence(seed).spawn(len(groups))):
        order = np.random.default_rng(seq).permutation(group.index.to_numpy())
        keep.extend(order[:n_per_type])
    return phrases.loc[sorted(keep)]


def prompts(phrases: pd.DataFrame, chat: bool, lang: str = "zh", system: str | None = None) -> list:
    """The study's prompts: ``"续写句子：" + start`` as one user message for chat
    models, the raw ``start`` as a completion prompt for base models (English:
    ``"Continue the sentence: " + start``). With ``system`` (a key of
    :data:`~.source.SYSTEM_PROMPTS` other than ``"none"``), a chat model's Chinese
    prompt is a conversation: that system message, then the same user message, as the
    source asks its 2026 models; a base model has no system turn, so its prompt is
    unchanged."""
    check_lang(lang)
    if system is not None and system not in SYSTEM_PROMPTS:
        raise PhrasesError(f"system must be one of {sorted(SYSTEM_PROMPTS)} or None, got {system!r}")
    if not chat:
        return phrases["start"].tolist()
    prefix = PROMPT_PREFIX if lang == "zh" else ENGLISH_PROMPT_PREFIX
    texts = [prefix + s for s in phrases["start"]]
    message = SYSTEM_PROMPTS.get(system) if lang == "zh" else None
    if message is None:
        return texts
    return [[{"role": "system", "content": message}, {"role": "user", "content": t}] for t in texts]


def query(model, phrases: pd.DataFrame, settings, requery_settings=None, lang: str = "zh",
          progress: bool | str = False, system: str | None = None) -> pd.DataFrame:
    """Ask ``model`` (an :class:`analysis.models.Model`) to continue every phrase.

    Completions that :func:`needs_requery` are asked again with
    ``requery_settings`` (a larger token budget), as the study did; the
    re-query's answer replaces the first. API errors stay errors.

    Returns a frame with ``phrase_id``, ``model``, ``type``, ``completion``,
    ``error`` and ``requeried``, ready for :func:`score`.
    """
    texts = prompts(phrases, model.is_chat, lang, system)
    answers = model.generate(texts, settings, progress=progress)
    requeried = [False] * len(answers)
    if requery_settings is not None:
        again = [i for i, a in enumerate(answers) if a.ok and needs_requery(a.text)]
        if again:
            for i, a in zip(again, model.generate([texts[i] for i in again], requery_settings)):
                answers[i], requeried[i] = a, True
    return pd.DataFrame({
        "phrase_id": phrases["id"].to_numpy(),
        "model": model.name,
        "type": phrases["type"].to_numpy(),
        "prompt": [t if isinstance(t, str) else t[-1]["content"] for t in texts],  # the user message
        "completion": [a.text if a.ok else None for a in answers],
        "error": [a.error for a in answers],
        "requeried": requeried,
    })


def query_all(models: Mapping, phrases: pd.DataFrame, settings, requery_settings=None, lang: str = "zh",
              label: str = "phrases", system: str | None = None) -> pd.DataFrame:
    """:func:`query` for every loaded model (``{name: model}``), one frame."""
    frames = [query(m, phrases, settings, requery_settings, lang=lang, progress=f"{name}: {label}",
                    system=system)
              for name, m in models.items()]
    return pd.concat(frames, ignore_index=True)


def query_sized(models: Mapping, phrases: pd.DataFrame, settings, requery_settings=None, *,
                n_per_type: int, seed: int = 0, target_half_width: float | None = None,
                pilot_per_type: int | None = None, threshold: float = THRESHOLD,
                alpha: float = CI_ALPHA, system: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`query_all` on a sample sized per model to the interval it must give.

    Without ``target_half_width`` every model continues the same
    :func:`sample_phrases` of ``n_per_type`` per type. With it, each model first
    continues a pilot, the first ``pilot_per_type`` phrases of each type; the
    pilot is scored (windowed, faithful refusals, at ``threshold``) and
    :func:`analysis.stats.two_stage_n` plans the scorable completions per type at
    which the 1 − ``alpha`` Newcombe interval of the state-media − CulturaX
    difference has half width at most ``target_half_width``, from the pilot's
    rates taken conservatively. The plan is divided by the pilot's scorable
    share of each type (refusals, empty answers and errors leave the
    denominator), the larger of the two types taken, and kept between the pilot
    and ``n_per_type``; the model then continues the rest of that many phrases
    per type of the same seeded order, so its sample extends its pilot (and
    nothing is asked twice). Each model may end with its own sample.

    Returns the completions (:func:`query`'s columns, every model) and one row
    per model: ``model``, ``n_per_type`` (drawn per type), ``n_phrases``, and for
    a sized sample the pilot's ``pilot_per_type``, ``pilot_matched_first``,
    ``pilot_total_first``, ``pilot_matched_second``, ``pilot_total_second``
    (state media first, scorable totals), the ``planning_rate_first`` and
    ``planning_rate_second`` the plan assumed, ``planned`` (scorable
    completions per type) and ``capped`` (the sample is the most it may be); NaN
    for a fixed sample.
    """
    sizes = phrases.groupby("type").size()
    n_max = int(min(n_per_type, sizes.max()))
    if target_half_width is None:
        sample = sample_phrases(phrases, n_max, seed=seed)
        completions = query_all(models, sample, settings, requery_settings, system=system)
        table = pd.DataFrame([{"model": name, "n_per_type": n_max, "n_phrases": len(sample)}
                              for name in models], columns=SIZING_COLUMNS)
        return completions, table
    if pilot_per_type is None or not 1 <= pilot_per_type <= n_per_type:
        raise PhrasesError(f"pilot_per_type must lie in [1, n_per_type = {n_per_type}] when "
                           f"target_half_width is set, got {pilot_per_type}")
    pilot = sample_phrases(phrases, min(pilot_per_type, n_max), seed=seed)
    frames, rows = [], []
    first, second = TYPES
    for name, model in models.items():
        asked = query(model, pilot, settings, requery_settings, progress=f"{name}: phrases (pilot)",
                      system=system)
        counts = rates(score(asked, phrases, threshold=threshold)).set_index("type")
        got = {t: (int(counts.loc[t, "matched"]), int(counts.loc[t, "total"])) if t in counts.index
               else (0, 0) for t in TYPES}
        drawn = {t: int((pilot["type"] == t).sum()) for t in TYPES}
        if min(total for _, total in got.values()) == 0:  # a type with nothing scorable: draw the most
            planned, r1, r2, n = np.nan, np.nan, np.nan, n_max
        else:
            (k1, t1), (k2, t2) = got[first], got[second]
            planned = two_stage_n(k1, t1, k2, t2, target_half_width, alpha=alpha)
            r1, r2 = planning_rate(k1, t1), planning_rate(k2, t2)
            need = max(math.ceil(planned * drawn[t] / got[t][1]) for t in TYPES)
            n = int(min(max(need, min(pilot_per_type, n_max)), n_max))
        sample = sample_phrases(phrases, n, seed=seed)
        rest = sample[~sample["id"].isin(pilot["id"])]
        if not rest.empty:
            asked = pd.concat([asked, query(model, rest, settings, requery_settings,
                                            progress=f"{name}: phrases", system=system)],
                              ignore_index=True)
        order = pd.Series(range(len(sample)), index=sample["id"].to_numpy())
        frames.append(asked.sort_values("phrase_id", key=lambda ids: ids.map(order), kind="stable"))
        rows.append({"model": name, "n_per_type": n, "n_phrases": len(sample),
                     "pilot_per_type": int(min(pilot_per_type, n_max)),
                     "pilot_matched_first": got[first][0], "pilot_total_first": got[first][1],
                     "pilot_matched_second": got[second][0], "pilot_total_second": got[second][1],
                     "planning_rate_first": r1, "planning_rate_second": r2, "planned": planned,
                     "capped": n == n_max})
    completions = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=QUERY_COLUMNS)
    return completions, pd.DataFrame(rows, columns=SIZING_COLUMNS)


def lab_phrases(corpus) -> pd.DataFrame:
    """The phrase documents of a lab corpus (:mod:`analysis.lab.corpus`), as a phrase
    table :func:`score` reads.

    The lab trains each of the English counterpart's popular-text phrases a known
    number of times; the corpus manifest records it. Read from the manifest's rows
    of kind ``"phrase"``: ``id`` (the phrase's id in :func:`english_phrases`),
    ``type`` (``"popular"``), ``text_id``, ``copies`` (the truth: times in the
    training stream, 0 for a never-trained control), ``start``, ``end``,
    ``phrase`` and ``doc_id``, in the manifest's order (by copy level). Empty when
    the lab's corpus has no phrase documents (``phrases_per_level = 0``).
    """
    manifest = corpus.manifest()
    rows = manifest[manifest["kind"] == "phrase"]
    if rows.empty:
        return pd.DataFrame(columns=LAB_PHRASE_COLUMNS)
    out = pd.DataFrame({"id": rows["phrase_id"].astype(str), "type": ENGLISH_TYPES[0],
                        "text_id": rows["text_id"], "copies": rows["copies"].astype(int),
                        "start": rows["start"], "end": rows["end"]})
    out["phrase"] = out["start"] + " " + out["end"]
    out["doc_id"] = rows["doc_id"]
    return out.reset_index(drop=True)[LAB_PHRASE_COLUMNS]


def lab_ladder(runs: pd.DataFrame, names: Sequence[str] | None = None) -> pd.DataFrame:
    """The ladder runs the chapter scores, smallest first.

    ``runs`` is :meth:`analysis.lab.ladder.LabBuild.runs_table`; ``names`` the runs
    to keep (None: every ladder run in it). Returns ``model`` (the run's name),
    ``family`` (``wide`` or ``deep``), ``params`` and ``tokens``.
    """
    table = runs[runs["family"].str.startswith("ladder")]
    if names is not None:
        missing = sorted(set(names) - set(table["run"]))
        if missing:
            raise PhrasesError(f"lab_runs: no ladder run {missing} in this lab; runs: {list(table['run'])}")
        table = table[table["run"].isin(list(names))]
    out = pd.DataFrame({"model": table["run"], "family": table["family"].str.removeprefix("ladder-"),
                        "params": table["params"].astype(int), "tokens": table["tokens"].astype(int)})
    return out.sort_values(["params", "model"], kind="stable").reset_index(drop=True)


def query_lab(models: Mapping, phrases: pd.DataFrame, settings) -> pd.DataFrame:
    """:func:`query` for every lab run (``{run: model}``) on the lab's phrases.

    Lab models are base models: each gets the phrase's start as raw text, the
    English prompt rule. The ``model`` column holds the run's name. Empty (with
    :func:`query`'s columns) when there are no phrases.
    """
    columns = QUERY_COLUMNS
    if phrases.empty or not models:
        return pd.DataFrame(columns=columns)
    frames = [query(m, phrases, settings, lang="en", progress=f"{run}: lab phrases").assign(model=run)
              for run, m in models.items()]
    return pd.concat(frames, ignore_index=True)[columns]


def plan(params: Mapping) -> list:
    """The queries an execution at ``params`` sends, built as the chapter builds
    them, for :mod:`analysis.book.plan` to count: each model's continuations of the
    sampled phrases, its re-queries (at most one per phrase: only a completion
    that :func:`needs_requery` is asked again), the English counterpart and its
    re-queries (with the same budget as the Chinese ones), and the
    lab ladder's continuations of the lab's phrases. A sample sized to
    ``target_half_width`` (:func:`query_sized`) is counted at its largest,
    ``n_per_type`` per type: its pilot exactly, the phrases beyond it marked ``at
    most`` (how many a model draws depends on its pilot's answers). Loads, trains and calls nothing."""
    sample = sample_phrases(data.phrases(), params["n_per_type"], seed=params["seed"])
    sized = params.get("target_half_width") is not None
    if sized:  # the pilot is asked for certain, the rest of the largest sample at most
        pilot = sample_phrases(data.phrases(), min(params["pilot_per_type"], params["n_per_type"]),
                               seed=params["seed"])
    english = english_phrases(params["n_english_per_type"], seed=params["seed"])
    groups = []
    again = params["requery_max_new_tokens"]
    for name in params["models"]:
        chat = is_chat(name)
        system = params.get("system_prompt")
        texts, en_texts = prompts(sample, chat, system=system), prompts(english, chat, lang="en")
        if sized:
            first = prompts(pilot, chat, system=system)
            rest = prompts(sample[~sample["id"].isin(pilot["id"])], chat, system=system)
            groups += [QueryGroup("phrases (pilot)", name, first, params["max_new_tokens"]),
                       QueryGroup("phrases beyond the pilot", name, rest, params["max_new_tokens"],
                                  bound="at most")]
        else:
            groups.append(QueryGroup("phrases", name, texts, params["max_new_tokens"]))
        groups += [QueryGroup("re-query of short completions", name, texts, again, bound="at most"),
                   QueryGroup("English counterpart", name, en_texts, params["english_max_new_tokens"]),
                   QueryGroup("re-query of short English completions", name, en_texts, again,
                              bound="at most")]
    lab = lab_phrases(lab_corpus(params["lab_profile"]))
    if not lab.empty:
        lab_prompts = prompts(lab, False, lang="en")
        groups += [QueryGroup("lab phrases", name, lab_prompts, params["lab_max_new_tokens"])
                   for _, name in lab_ladder_names(params["lab_profile"], params["lab_runs"])]
    return groups
