"""Did the lab's models learn what each chapter measures? The lab page's checks.

The table of phenomena (:mod:`analysis.book.phenomena`) shows that each signal is
built into the corpus. These checks ask the next question, on the trained models:
is the phenomenon there, and is it absent where its signal is (the negative
control)? Each is a pure function of a measured table, except
:func:`knowledge_probes`, which asks the models:

* **knowledge** (:func:`knowledge_probes`, :func:`knowledge_learned`): every fact
  probed two ways, the cloze sentence of the training format and the source's
  question, scored against the fact's answer and, as the control, against another
  fact's answer (:func:`analysis.distributional.swapped_answers`); cloze accuracy
  against copies by a one-sided Spearman test over facts;
* **extraction** (:func:`extraction_levels`): the copy levels at which a run
  extracts some but not all of its sequences, and whether the rate rises with copies;
* **membership** (:func:`membership_counts`, :func:`auc_halfwidth`): members and
  non-members per copy level, and the width of a per-level AUC's 95% interval
  at chance;
* **entropy** (:func:`score_counts`): pairs per memorization score, and the ratio
  of low scores to high ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from analysis import entropy
from analysis.core.fmt import fmt_pct
from analysis.core.paths import REPO_ROOT
from analysis.distributional.method import answer_correct
from analysis.distributional.params import KNOWLEDGE_TOKENS
from analysis.lab.profiles import model_name
from analysis.lab.train import param_count
from analysis.models import GenerationSettings, load_model

#: the probes of a fact: the training format's cloze sentence, and the source's question
PROBES = ("cloze", "question")
#: a copy level whose share extracted lies strictly between these is partly extracted
PARTIAL = (0.10, 0.90)


#: the copies bins of the knowledge checks: 0 (the controls), then powers of four
COPIES_BINS = ((0, 0, "0"), (1, 3, "1-3"), (4, 15, "4-15"), (16, 64, "16-64"), (65, 256, "65-256"),
               (257, np.inf, "257+"))


def number(x, spec: str = ".2g") -> str:
    """``x`` formatted with ``spec``, or ``"undefined"`` when it is not a finite number
    (a test that could not be run: a constant outcome, no data)."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return "undefined"
    return format(value, spec) if np.isfinite(value) else "undefined"


def copies_bin(copies) -> pd.Series:
    """Each fact's copies bin (:data:`COPIES_BINS`: ``"0"``, ``"1-3"``, ``"4-15"``,
    ``"16-64"``, ``"65-256"``, ``"257+"``), an ordered categorical."""
    edges = COPIES_BINS
    out = []
    for c in np.asarray(copies):
        out.append(next(label for lo, hi, label in edges if lo <= c <= hi))
    return pd.Series(pd.Categorical(out, categories=[e[2] for e in edges], ordered=True))


def knowledge_probes(models: Mapping[str, object], know: pd.DataFrame,
                     max_new_tokens: int = KNOWLEDGE_TOKENS) -> pd.DataFrame:
    """Every model's greedy answer to every fact's two probes (``know``:
    :func:`analysis.distributional.knowledge_task`), through the book's model
    interface (cached).

    Returns one row per (run, fact, probe): ``run``, ``question_id``, ``copies``,
    ``answer_count``, ``probe`` (:data:`PROBES`), ``response`` (None on an error),
    ``error``, ``correct`` (:func:`analysis.distributional.method.answer_correct`
    against the fact's answer; an error is never right) and ``swapped_correct``
    (against :func:`~analysis.distributional.swapped_answers`' answer: the
    negative control).
    """
    prompts = {"cloze": list(know["cloze"]), "question": list(know["prompt"])}
    frames = []
    for run, model in models.items():
        for probe in PROBES:
            out = model.complete(prompts[probe], GenerationSettings(max_new_tokens=max_new_tokens),
                                 progress=f"{run}: {probe}")
            responses = [a.text if a.ok else None for a in out]
            frames.append(pd.DataFrame({
                "run": run, "question_id": know["question_id"].to_numpy(),
                "copies": know["copies"].to_numpy(),
                "answer_count": know["answer_count"].to_numpy(), "probe": probe, "response": responses,
                "error": [a.error for a in out],
                "correct": [answer_correct(r, a) for r, a in zip(responses, know["answer"])],
                "swapped_correct": [answer_correct(r, a)
                                    for r, a in zip(responses, know["swapped_answer"])]}))
    return pd.concat(frames, ignore_index=True)


def knowledge_accuracy(probes: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per run, probe and copies bin (:func:`copies_bin`): ``run``, ``probe``,
    ``bin``, ``facts``, ``correct``, ``accuracy`` and ``swapped`` (the control's
    accuracy); errors count as facts not answered right, and the bins with no fact
    are left out."""
    frame = probes.assign(bin=copies_bin(probes["copies"]).to_numpy())
    out = (frame.groupby(["run", "probe", "bin"], sort=False, observed=True)
           .agg(facts=("correct", "size"), correct=("correct", "sum"), swapped=("swapped_correct", "mean"))
           .reset_index())
    out["correct"] = out["correct"].astype(int)
    out["accuracy"] = out["correct"] / out["facts"]
    out["bin"] = pd.Categorical(out["bin"].astype(str), categories=[b[2] for b in COPIES_BINS], ordered=True)
    return out.sort_values(["run", "probe", "bin"], kind="stable").reset_index(drop=True)


def spearman_greater(x, y) -> tuple[float, float]:
    """Spearman's rho of ``x`` and ``y`` and its one-sided p-value for a rise
    (:func:`scipy.stats.spearmanr`, ``alternative="greater"``); NaN when either is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    res = stats.spearmanr(x, y, alternative="greater")
    return float(res.statistic), float(res.pvalue)


def knowledge_learned(probes: pd.DataFrame, run: str) -> dict:
    """What ``run`` learned of the facts: the unit is the fact (one row per fact and
    probe in ``probes``).

    Returns ``facts``; ``cloze_rho`` and ``cloze_p`` (cloze correctness against
    copies, :func:`spearman_greater` over facts); ``control_rho`` and ``control_p``
    (the same against the swapped answers: no rise is expected there);
    ``question_top_bin`` and ``question_zero_bin`` (question-format accuracy in the
    highest copies bin with facts, and on the 0-copy control facts), ``top_bin``
    (its label) and ``top_facts``, ``zero_facts``; ``cloze_top_bin`` and
    ``cloze_zero_bin`` likewise.
    """
    own = probes[probes["run"] == run]
    if own.empty:
        raise ValueError(f"run {run!r} has no probes; runs: {sorted(set(probes['run']))}")
    cloze = own[own["probe"] == "cloze"]
    question = own[own["probe"] == "question"]
    rho, p = spearman_greater(cloze["copies"], cloze["correct"])
    c_rho, c_p = spearman_greater(cloze["copies"], cloze["swapped_correct"])
    bins = copies_bin(own["copies"])
    top = str(bins[bins.cat.codes == bins.cat.codes.max()].iloc[0])

    def share(frame, label):
        sel = copies_bin(frame["copies"]).astype(str).to_numpy() == label
        return (float(frame["correct"].to_numpy()[sel].mean()) if sel.any() else float("nan")), int(sel.sum())

    q_top, n_top = share(question, top)
    q_zero, n_zero = share(question, "0")
    c_top, _ = share(cloze, top)
    c_zero, _ = share(cloze, "0")
    return {"facts": int(len(cloze)), "cloze_rho": rho, "cloze_p": p, "control_rho": c_rho, "control_p": c_p,
            "top_bin": top, "top_facts": n_top, "zero_facts": n_zero, "question_top_bin": q_top,
            "question_zero_bin": q_zero, "cloze_top_bin": c_top, "cloze_zero_bin": c_zero}


def extraction_levels(table: pd.DataFrame, run: str, partial: tuple[float, float] = PARTIAL) -> dict:
    """The inserted copy levels of ``run`` in an extraction table (``run``, ``copies``,
    ``share``: :func:`analysis.book.phenomena.extraction_by_copies`): ``partial`` (the
    levels whose share lies strictly between the two bounds), ``monotone`` (whether the
    share never falls from one inserted level to the next) and ``shares`` (level to share)."""
    own = table[(table["run"] == run) & (table["copies"] > 0)].sort_values("copies")
    if own.empty:
        raise ValueError(f"run {run!r} has no inserted levels in the table")
    shares = dict(zip(own["copies"].astype(int), own["share"].astype(float)))
    values = list(shares.values())
    lo, hi = partial
    return {"partial": [c for c, s in shares.items() if lo < s < hi],
            "monotone": all(b >= a for a, b in zip(values, values[1:])), "shares": shares}


def membership_counts(injections: pd.DataFrame) -> dict[int, int]:
    """Sequences per copy level of an injection table (``copies``), 0 the never-inserted
    non-members, levels ascending."""
    counts = injections["copies"].astype(int).value_counts().sort_index()
    return {int(k): int(v) for k, v in counts.items()}


def auc_halfwidth(n_members: int, n_nonmembers: int, auc: float = 0.5, z: float = 1.959964) -> float:
    """Half the width of a 95% interval of an AUC of ``auc`` between ``n_members`` and
    ``n_nonmembers`` (Hanley and McNeil's standard error, 1982): at chance, 102 against
    102 gives about 0.079."""
    if n_members < 1 or n_nonmembers < 1:
        raise ValueError(f"an AUC needs members and non-members, got {n_members} and {n_nonmembers}")
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    var = (auc * (1 - auc) + (n_members - 1) * (q1 - auc ** 2)
           + (n_nonmembers - 1) * (q2 - auc ** 2)) / (n_members * n_nonmembers)
    return float(z * np.sqrt(var))


def _low_high(suffix_tokens: int) -> tuple[int, int]:
    """The highest low score (a quarter of the answer's tokens) and the lowest high one
    (three quarters, rounded up) of the regime counts."""
    return suffix_tokens // 4, int(np.ceil(3 * suffix_tokens / 4))


def score_counts(scores: Sequence[float], suffix_tokens: int) -> dict:
    """Pairs per memorization score (Levenshtein distance 0..``suffix_tokens``, NaN
    scores, the errors, left out): ``counts`` (a list indexed by score), ``low`` (pairs
    with score at most a quarter of ``suffix_tokens``), ``high`` (at least three
    quarters) and ``low_high_ratio`` (low / high; NaN when nothing is high)."""
    s = np.asarray(scores, dtype=float)
    s = s[~np.isnan(s)].astype(int)
    counts = np.bincount(s, minlength=suffix_tokens + 1)[:suffix_tokens + 1]
    top_low, bottom_high = _low_high(suffix_tokens)
    low = int(counts[: top_low + 1].sum())
    high = int(counts[bottom_high:].sum())
    return {"counts": counts.tolist(), "low": low, "high": high,
            "low_high_ratio": low / high if high else float("nan")}


def ladder_span(runs: pd.DataFrame) -> float:
    """Largest over smallest parameter count of the ladder runs (``family`` starting with
    ``ladder``) of a runs table with ``params``."""
    ladder = runs[runs["family"].str.startswith("ladder")]["params"]
    if ladder.empty:
        raise ValueError("the runs table has no ladder runs")
    return float(ladder.max() / ladder.min())


def largest_perturbed(profile) -> str:
    """The perturbed run of ``profile`` (a :class:`~analysis.lab.profiles.LabProfile`) with the
    most parameters, then the most tokens: the issue's "largest perturbed model"."""
    runs = [r for r in profile.runs if r.family == "perturbed"]
    if not runs:
        raise ValueError("the profile has no perturbed runs")
    return max(runs, key=lambda r: (param_count(r.model, profile.vocab_size), r.tokens)).name


def entropy_scores(lab, run: str, prefix_tokens: int, suffix_tokens: int, n: int, temperature: float,
                   lcs_filter: str, seed: int = 0) -> pd.DataFrame:
    """The entropy chapter's main lab sample, scored as the chapter scores it: ``n``
    copy-weighted windows of ``run``'s training stream (:func:`analysis.entropy.training_stream`,
    :func:`analysis.entropy.sample_pairs`), each continued under the chapter's first
    decoding (:func:`analysis.entropy.lab_decodings`) and scored
    (:func:`analysis.entropy.discoverable`); the same queries as the chapter's, so one
    of the two reads the other's answers from the cache."""
    model = load_model(model_name(lab.name, run))
    stream = entropy.training_stream(lab, run, model)
    pool = entropy.sample_pairs(stream.tokens, prefix_tokens, suffix_tokens, n, seed=seed,
                                weights=stream.copies)
    settings = next(iter(entropy.lab_decodings(temperature, seed=seed).values()))
    scored = entropy.discoverable(model, pool, settings, lcs_filter, progress=f"{run}: entropy sample")
    doc = scored["doc_id"]
    return scored.assign(copies=doc.map(stream.copies), source=doc.map(stream.source))


def score_counts_by_level(scored: pd.DataFrame, suffix_tokens: int) -> pd.DataFrame:
    """The kept pairs of :func:`entropy_scores` per kind of document (``source``) and
    copies level: ``pairs``, ``verbatim`` (e = 0), ``e1`` (e = 1), ``partial``
    (1 ≤ e ≤ |s|/4) and ``high`` (e ≥ 3|s|/4), the level's pairs kept in their order of
    copies. A level where verbatim answers outnumber those one edit away cannot help a
    copy design reach the source's regime (:func:`regime_reason`)."""
    s = scored[scored["score"].notna()]
    top_low, bottom_high = _low_high(suffix_tokens)
    rows = []
    for (source, copies), g in s.groupby(["source", "copies"], sort=True):
        e = g["score"].astype(int)
        rows.append({"source": source, "copies": int(copies), "pairs": len(g),
                     "verbatim": int((e == 0).sum()),
                     "e1": int((e == 1).sum()), "partial": int(((e >= 1) & (e <= top_low)).sum()),
                     "high": int((e >= bottom_high).sum())})
    return pd.DataFrame(rows, columns=["source", "copies", "pairs", "verbatim", "e1", "partial", "high"])


#: the fewest pairs at e = 0 or 1 a copies level needs before its comparison of the two is read
REGIME_MIN_PAIRS = 10


def regime_reason(levels: pd.DataFrame, min_pairs: int = REGIME_MIN_PAIRS) -> str:
    """Why no spread of copies over the levels of :func:`score_counts_by_level` could put
    the pair counts in the source's regime, or what it would take. Any copy design that
    keeps each text's answers as they are is a non-negative mixture of the levels, so
    the count at e = 0 can fall to the count at e = 1 only through levels where it
    already has. The levels with at least ``min_pairs`` pairs at e = 0 or 1 are read; the
    rest hold too few to tell, and are named with their counts. (A retrained lab could
    change a level's answers; this reads the trained one.)"""
    live = levels[(levels["verbatim"] + levels["e1"]) > 0]
    if live.empty:
        return "no level has a pair at e = 0 or e = 1, so the counts say nothing about the regime"
    read = live[(live["verbatim"] + live["e1"]) >= min_pairs]
    thin = live[(live["verbatim"] + live["e1"]) < min_pairs]

    def listed(rows):
        return "; ".join(f"{r.source} at {r.copies} copies {r.verbatim:,} against {r.e1:,}"
                         for r in rows.itertuples(index=False))

    if read.empty:
        return (f"no level has {min_pairs} pairs at e = 0 or 1 to compare ({listed(thin)}), so the counts "
                "cannot say whether a copy design could reach the source's regime")
    against = read[read["verbatim"] > read["e1"]]
    thin_up = thin[thin["e1"] >= thin["verbatim"]]
    if len(against) < len(read):
        up = read[read["e1"] >= read["verbatim"]]
        return (f"{len(up)} of the {len(read)} levels with at least {min_pairs} pairs at e = 0 or 1 have as "
                f"many at e = 1 as at e = 0 ({listed(up)}), so a copy design weighted toward them could move "
                "toward the source's regime")
    text = (f"every one of the {len(read)} levels with at least {min_pairs} pairs at e = 0 or 1 has more "
            f"verbatim answers than answers one edit away ({listed(read)}), so any spread of copies over "
            "them, each text answered as it is now, keeps more pairs at e = 0 than at e = 1")
    if len(thin_up):
        text += (f"; only levels the sample barely sees have as many at e = 1 ({listed(thin_up)}, "
                 f"{int(thin_up['verbatim'].sum() + thin_up['e1'].sum())} pairs at e ≤ 1 between them), "
                 "so a copy design would have to put nearly all the corpus there")
    return text


#: the benchmarks' records of the cold lab and of the compile decision
LAB_COLD = REPO_ROOT / "bench" / "results" / "lab_cold.json"
LAB_COMPILE = REPO_ROOT / "bench" / "results" / "lab_compile.json"


def budget_sentence(profile: str, cold=LAB_COLD, compiled=LAB_COMPILE) -> str:
    """What a cold build of ``profile`` cost and why it trains eager, from the records of
    ``scripts/bench_lab_cold.py`` and ``scripts/bench_lab_compile.py``; says so visibly
    when a record is missing or is of another profile."""
    cold, compiled = Path(cold), Path(compiled)
    parts = []
    if not cold.exists():
        parts.append(f"**Not measured yet**: `scripts/bench_lab_cold.py` times a cold build ({cold.name} "
                     "is not in this checkout).")
    else:
        rec = json.loads(cold.read_text())
        if rec.get("profile", "default") != profile:
            parts.append(f"**Not measured for the {profile} lab**: {cold.name} is of the "
                         f"{rec.get('profile')} lab.")
        else:
            parts.append(f"A cold build of this lab, in one process from an empty cache, took "
                         f"{rec['minutes']} minutes on {rec['cores']} cores ({rec['trainings']} trainings, "
                         f"{rec['workers']} side by side; commit `{rec['commit']}`, {rec['date']}; "
                         f"`bench/results/{cold.name}`).")
    if compiled.exists():
        rec = json.loads(compiled.read_text())
        verdict = "trains compiled" if rec.get("compile_qualifies") else "trains eager"
        parts.append(f"It {verdict}: {rec['why']} (`bench/results/{compiled.name}`).")
    return " ".join(parts)


#: the record of a rebuild of the lab compared with a reference build (scripts/compare_lab_rebuild.py)
LAB_REBUILD = REPO_ROOT / "bench" / "results" / "lab_rebuild.json"


def rebuild_sentence(path=LAB_REBUILD) -> str:
    """What a rebuild of this lab on another machine gave against the reference build's
    fingerprints, from ``scripts/compare_lab_rebuild.py``'s record; says so visibly when
    there is none."""
    path = Path(path)
    if not path.exists():
        return ("The loss tolerance across machines is **not measured yet** "
                f"(`scripts/compare_lab_rebuild.py` writes `bench/results/{path.name}`).")
    rec = json.loads(path.read_text())
    moved = sorted((r for r in rec["rows"] if r["loss_diff"] > rec["tol"]), key=lambda r: -r["loss_diff"])
    worst = "; ".join(f"{r['run']} {r['final_loss_committed']:.3f} → {r['final_loss_rebuilt']:.3f}"
                      for r in moved)
    return (f"A cold rebuild of this lab on a second machine ({rec['cpu']}, {rec['date']}, commit "
            f"`{rec['commit']}`) against the build of {rec['reference_date']} (commit "
            f"`{rec['reference_commit']}`): {rec['identical']} of {rec['runs']} runs have bit-identical "
            f"weights, and {rec['within_tol']} of {rec['runs']} final losses lie within {rec['tol']:g} nats "
            f"of the reference (median |Δ| {rec['median_loss_diff']:.1e}, largest {rec['max_loss_diff']:.3g}"
            + (f": {worst}" if worst else "") + f"; `bench/results/{path.name}`). Across machines the "
            "lab's models are the same runs trained to the same losses, not the same weights.")


#: the range runs that insert every copy in one quarter of training
QUARTERS = ("range-q1", "range-q2", "range-q3", "range-q4")


def _rho_text(rho: float, p: float) -> str:
    """``ρ = r (one-sided p = q)``, or why no correlation could be tested."""
    if np.isfinite(rho):
        return f"ρ = {rho:.2f} (one-sided p = {number(p)})"
    return "no ρ to test: the outcome is the same for every fact"


def learned_values(learned: dict, levels: dict, extraction: pd.DataFrame, membership: Mapping[int, int],
                   counts: dict, know: pd.DataFrame, span: float, run: str) -> dict[str, str]:
    """The glued values of the lab page's "Did the models learn it?" section, formatted
    once: ``learned`` (:func:`knowledge_learned`), ``levels`` (:func:`extraction_levels`
    of ``run``), ``extraction`` (the extraction table, for the quarter runs),
    ``membership`` (:func:`membership_counts`), ``counts`` (:func:`score_counts`),
    ``know`` (the knowledge task, for decontamination) and ``span``
    (:func:`ladder_span`)."""
    n_mem1, n_mem4, n_non = membership.get(1, 0), membership.get(4, 0), membership.get(0, 0)
    runs = set(extraction["run"])
    quarter_text = ", ".join(
        f"{r.removeprefix('range-')} "
        f"{int(extraction.loc[(extraction['run'] == r) & (extraction['copies'] > 0), 'extracted'].sum())}"
        for r in QUARTERS if r in runs) or "none (no range runs)"
    middle = counts["counts"][1:8]
    return {
        "lab_span": f"{span:.0f}",
        "knowledge_cloze_rho": number(learned["cloze_rho"], ".2f"),
        "knowledge_cloze_p": number(learned["cloze_p"]),
        "knowledge_control_rho": number(learned["control_rho"], ".2f"),
        "knowledge_control_p": number(learned["control_p"]),
        "knowledge_cloze_text": _rho_text(learned["cloze_rho"], learned["cloze_p"]),
        "knowledge_control_text": (_rho_text(learned["control_rho"], learned["control_p"])
                                   if np.isfinite(learned["control_rho"])
                                   else "no model output is ever another fact's answer (no ρ to test)"),
        "knowledge_facts": f"{learned['facts']:,}", "knowledge_top_label": learned["top_bin"],
        "knowledge_top_facts": f"{learned['top_facts']:,}",
        "knowledge_zero_facts": f"{learned['zero_facts']:,}",
        "knowledge_cloze_top_bin": fmt_pct(learned["cloze_top_bin"]),
        "knowledge_cloze_zero_bin": fmt_pct(learned["cloze_zero_bin"]),
        "knowledge_question_top_bin": fmt_pct(learned["question_top_bin"]),
        "knowledge_question_zero_bin": fmt_pct(learned["question_zero_bin"]),
        "knowledge_decontaminated": str(int(know["overlap_8"].sum() + know["overlap_14"].sum()
                                            + know["prompt_overlap_8"].sum())),
        "extraction_run": run, "extraction_partial_levels": str(len(levels["partial"])),
        "extraction_partial_list": "/".join(map(str, levels["partial"])) or "none",
        "extraction_monotone": ("rises with copies at every level" if levels["monotone"]
                                else "does not rise at every level"),
        "extraction_by_quarter": quarter_text,
        "mia_nonmembers": str(n_non), "mia_members_1copy": str(n_mem1), "mia_members_4copy": str(n_mem4),
        "mia_halfwidth_1": f"{auc_halfwidth(n_mem1, n_non):.3f}" if n_mem1 and n_non else "—",
        "mia_halfwidth_4": f"{auc_halfwidth(n_mem4, n_non):.3f}" if n_mem4 and n_non else "—",
        "entropy_low_high_ratio": number(counts["low_high_ratio"], ".2f"),
        "entropy_low": f"{counts['low']:,}", "entropy_high": f"{counts['high']:,}",
        "entropy_verbatim": f"{counts['counts'][0]:,}",
        "entropy_middle": f"{min(middle):,} to {max(middle):,}" if middle else "—",
        "entropy_regime": regime_text(counts),
    }


def regime_text(counts: dict) -> str:
    """Whether the pair counts per score (:func:`score_counts`) fall steadily toward low
    scores, as in the entropy source, in words: the counts never rise from one score to
    the next lower one, or the lowest score at which they do."""
    c = counts["counts"]
    rises = [e for e in range(len(c) - 1) if c[e] > c[e + 1]]
    if not rises:
        return "fall steadily toward low scores, as in the source's regime"
    e = rises[0]
    return (f"do not fall steadily toward low scores: {c[e]:,} pairs at e = {e} against {c[e + 1]:,} at "
            f"e = {e + 1}, so the lab is not in the source's regime")


def learned_table(values: Mapping[str, str], large: str, controls_extracted: str) -> pd.DataFrame:
    """The section's table, one row per chapter: the phenomenon, what the trained models
    show (from :func:`learned_values`' ``values``; ``large`` the largest ladder model)
    and the negative control (``controls_extracted``: the predicting check's
    ``extract_controls``)."""
    v = values
    return pd.DataFrame([
        {"chapter": "size", "phenomenon": "larger models reproduce more of the popular excerpts",
         "learned (measured)": f"ladder spans {v['lab_span']}x; accuracy table above",
         "negative control": "the never-trained 2024-26 stories (dashed in the figure above)"},
        {"chapter": "distributional", "phenomenon": "facts recalled in proportion to their copies",
         "learned (measured)": (f"{large}: cloze {v['knowledge_cloze_text']} over {v['knowledge_facts']} "
                                "facts; "
                                f"question {v['knowledge_question_top_bin']} at {v['knowledge_top_label']} "
                                f"copies against {v['knowledge_question_zero_bin']} at 0"),
         "negative control": f"swapped answers: {v['knowledge_control_text']}"},
        {"chapter": "predicting", "phenomenon": "extraction rises with copies",
         "learned (measured)": (f"{v['extraction_run']}: partly extracted at "
                                f"{v['extraction_partial_levels']} levels; "
                                f"extracted per quarter: {v['extraction_by_quarter']}"),
         "negative control": f"never-inserted controls extracted: {controls_extracted}"},
        {"chapter": "entropy", "phenomenon": "members and non-members that differ only in membership",
         "learned (measured)": (f"{v['mia_nonmembers']} non-members, {v['mia_members_1copy']} and "
                                f"{v['mia_members_4copy']} members at 1 and 4 copies"),
         "negative control": ("the standard twin never saw the injections "
                              "(the entropy and predicting chapters)")},
    ])
