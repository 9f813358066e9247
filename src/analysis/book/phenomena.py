"""The lab's table of phenomena: per chapter, the signal built into the lab corpus
and the measured check that it is there (the lab page, ``notebooks/lab.md``).

The lab is designed from the phenomena backwards: each chapter's method looks for
a signal that the corpus holds by construction. For each chapter this module
gives one check, computed with that chapter's own functions on a built lab
(:func:`analysis.lab.ladder.build_lab`):

* **lab**: the ladder's training and held-out losses fall with size
  (:func:`ladder_check`);
* **size**: next-word accuracy inside the popular excerpts, graded in copies, for
  the smallest and the largest ladder model (:func:`popular_accuracy`,
  :func:`size_check`);
* **distributional**: the share of the knowledge task's 3-gram pairs whose
  task-gram probability is one, and the spread of their counts
  (:func:`analysis.distributional.knowledge_pairs`, :func:`distributional_check`);
* **predicting**: the share of injected sequences extracted per injected run and
  copy level (:func:`extraction_scores`, :func:`extraction_by_copies`,
  :func:`predicting_check`);
* **entropy**: the member and non-member sets of the chapter's dataset inference,
  and a lab model's loss on each (:func:`membership_losses`, :func:`entropy_check`);
* **phrases**: the memorized rate per copy level of the phrase documents, for the
  smallest and the largest ladder model (:func:`phrase_rates`, :func:`phrases_check`).

Each ``*_check`` is a pure function of measured tables and returns a
:class:`Check`: the table, the numbers to glue, and the sentences of its row in
:func:`phenomena_table`, every one computed from the numbers. The functions that
load models (:func:`popular_accuracy`, :func:`extraction_scores`,
:func:`membership_losses`, :func:`phrase_rates`) are thin: they call the chapters'
steps and return their tables.

Where a row decides whether its signal is there, the decision is a
:class:`~analysis.core.claims.Claim` on the check (``Check.claims``), and the
row's sentence reads it: the ladder's losses fall in every family
(``lab_ladder_losses_fall``) and the entropy chapter's lab model has a lower loss
on every member set than on every non-member set (``lab_member_loss_below``, by
design: the members are its training documents). :func:`claims` gathers them for
:func:`analysis.book.report.glue_claims` and :func:`render` words one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import distributional, entropy, predicting, size
from analysis import phrases as ph
from analysis.core.claim_text import verdict
from analysis.core.claims import (
    EXTENSION,
    HOLDS,
    NOT_TESTABLE,
    REPRODUCED,
    Claim,
    as_kind,
    not_testable,
    within,
)
from analysis.core.fmt import fmt_pct
from analysis.lab.probe import monotone_families, popular_by_copies, run_loss
from analysis.lab.profiles import model_name
from analysis.models import GenerationSettings, load_model
from analysis.stats.auc import auc

#: the chapters, in the order of the table's rows
CHAPTERS = ("lab", "size", "distributional", "predicting", "entropy", "phrases")
#: prefix lengths (words) and positions per text and length of the size check: a
#: cheap version of the size chapter's probe
SIZE_PREFIX_LENS = (4, 8, 12, 24)
SIZE_N_PER_TEXT = 4
#: new tokens of a next-word answer, as the size chapter asks the lab's models
SIZE_MAX_NEW_TOKENS = 4
#: the n of the distributional check (the chapter's ``knowledge_p1_share`` is for 3-grams)
DISTRIBUTIONAL_N = 3
#: words of each set's sample in the entropy check's losses
MEMBERSHIP_WORDS = 4000
#: the claims' page: the lab page's section on the phenomena (its MyST label)
SECTION = "lab-phenomena"


@dataclass
class Check:
    """One chapter's check: ``signal`` (what the corpus holds by construction),
    ``check`` (what is measured), ``value`` (the measurement, in words), the
    measured ``table``, the ``numbers`` to glue (strings) and the ``claims``
    the row decides (none where it only measures)."""

    chapter: str
    signal: str
    check: str
    value: str
    table: pd.DataFrame
    numbers: dict[str, str] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)


def phenomena_table(checks: Sequence[Check]) -> pd.DataFrame:
    """One row per chapter: ``chapter``, ``signal built in``, ``check`` and
    ``measured``, in :data:`CHAPTERS` order (chapters without a check left out)."""
    order = {c: i for i, c in enumerate(CHAPTERS)}
    rows = sorted(checks, key=lambda c: order.get(c.chapter, len(order)))
    return pd.DataFrame([{"chapter": c.chapter, "signal built in": c.signal, "check": c.check,
                          "measured": c.value} for c in rows],
                        columns=["chapter", "signal built in", "check", "measured"])


def claims(checks: Sequence[Check]) -> list[Claim]:
    """Every claim of the checks, in the checks' order (for
    :func:`analysis.book.report.glue_claims`, with :func:`render`)."""
    return [c for check in checks for c in check.claims]


def render(claim: Claim) -> str:
    """A claim of the table of phenomena in a sentence (Markdown): the statement,
    then its verdict in the book's one voice (:func:`analysis.core.claim_text.verdict`)."""
    return f"{claim.statement[0].upper()}{claim.statement[1:]}. {verdict(claim)}"


def glue_values(checks: Sequence[Check]) -> dict[str, str]:
    """Every check's numbers, and each row's measured value as ``phenomenon_<chapter>``."""
    out: dict[str, str] = {}
    for c in checks:
        out.update(c.numbers)
        out[f"phenomenon_{c.chapter}"] = c.value
    return out


# ---------------------------------------------------------------------------
# Helpers: the runs a check uses, the chapters' settings, words
# ---------------------------------------------------------------------------


def ladder_ends(runs: pd.DataFrame) -> list[str]:
    """The smallest and the largest ladder run by parameters (one name if the ladder
    has one run). ``runs`` is :meth:`analysis.lab.ladder.LabBuild.runs_table`."""
    ladder = runs[runs["family"].str.startswith("ladder")].sort_values(["params", "run"], kind="stable")
    if ladder.empty:
        raise ValueError("the lab has no ladder run")
    names = list(ladder["run"])
    return names[:1] if len(names) == 1 else [names[0], names[-1]]


def chapter_setting(profiles: Mapping[str, Mapping], lab_profile: str, key: str):
    """A chapter's setting ``key`` in its first profile that uses the lab profile
    ``lab_profile`` (so a check asks the lab's models what the chapter asks, and
    shares the query cache with it)."""
    for settings in profiles.values():
        if settings.get("lab_profile") == lab_profile:
            return settings[key]
    raise ValueError(f"no chapter profile uses the lab profile {lab_profile!r}")


def _range(lo, hi, fmt: str = "{:,}") -> str:
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)} to {fmt.format(hi)}"


def _levels(levels) -> str:
    return "/".join(str(int(c)) for c in sorted(set(levels)))


def _params(n: float) -> str:
    return f"{n / 1e6:.2f}M"


# ---------------------------------------------------------------------------
# lab: the ladder's losses fall with size
# ---------------------------------------------------------------------------


def ladder_signal(profile, losses: pd.DataFrame) -> str:
    """The ladder as built: its models and families (with their depth), parameter
    range and token budget, from the profile and :func:`analysis.lab.probe.loss_comparison`."""
    families = []
    for fam in dict.fromkeys(losses["family"]):
        layers = sorted({profile.run(r).model.n_layer for r in losses.loc[losses["family"] == fam, "run"]})
        families.append(f"{fam.removeprefix('ladder-')}, {_range(layers[0], layers[-1])} "
                        f"{'layer' if layers == [1] else 'layers'}")
    tokens = [profile.run(r).tokens for r in losses["run"]]
    return (f"{len(losses)} models in {len(families)} families ({'; '.join(families)}), "
            f"{_params(losses['params'].min())} to {_params(losses['params'].max())} parameters, "
            f"each trained on {_range(min(tokens), max(tokens))} tokens at a learning rate set by its width")


def ladder_check(losses: pd.DataFrame, profile) -> Check:
    """The ladder check from :func:`analysis.lab.probe.loss_comparison`'s losses:
    per family, whether training and held-out loss both fall with every step up in
    parameters (:func:`analysis.lab.probe.monotone_families`). Glues
    ``ladder_monotone_families`` (families where both fall) and ``ladder_families``;
    its claim is :func:`ladder_claim`."""
    fams = monotone_families(losses)
    k, n = int(fams["monotone"].sum()), len(fams)
    failing = []
    for r in fams[~fams["monotone"]].itertuples():
        which = [name for name, falls in (("training", r.train_falls), ("held-out", r.heldout_falls))
                 if not falls]
        failing.append(f"{r.family.removeprefix('ladder-')}: {' and '.join(which)} "
                       f"{'loss does' if len(which) == 1 else 'losses do'} not")
    value = f"both fall with every step in {k} of {n} families"
    if failing:
        value += f" ({'; '.join(failing)})"
    return Check("lab", ladder_signal(profile, losses),
                 "training and held-out loss fall with every step up in parameters, per family",
                 value, fams, {"ladder_monotone_families": str(k), "ladder_families": str(n)},
                 [ladder_claim(k, n)])


def ladder_claim(monotone: int, families: int) -> Claim:
    """``lab_ladder_losses_fall``: training and held-out loss fall with every step up
    in parameters in every ladder family. The value is the share of families where
    both fall; reproduced when it is 1 (not by design: the lab builds the sizes,
    not the losses)."""
    share = monotone / families if families else None
    status, reason = within(value=share, target=1.0, tolerance=0.0, n=families, min_n=1, exact=True,
                            unit="families")
    if status != NOT_TESTABLE:
        reason = f"both fall in {monotone} of {families} families; {reason}"
    return Claim(id="lab_ladder_losses_fall", chapter="lab", kind=EXTENSION,
                 statement="training and held-out loss fall with every step up in parameters, "
                           "in every ladder family",
                 status=as_kind(status, EXTENSION), reason=reason, value=share, n=families, min_n=1,
                 section=SECTION, unit="families", n_units=families, null_kind="target", null_value=1.0,
                 control_reason="a property of the ladder's own training, with no signal to take away",
                 comparison="share of families where both losses fall at every step = 1")


# ---------------------------------------------------------------------------
# size: next-word accuracy rises with an excerpt's copies
# ---------------------------------------------------------------------------


def popular_accuracy(lab, runs: Sequence[str], prefix_lens: Sequence[int] = SIZE_PREFIX_LENS,
                     n: int = SIZE_N_PER_TEXT, seed: int = 0) -> pd.DataFrame:
    """The size chapter's accuracy table (:func:`analysis.size.accuracy_table`) of the
    lab runs ``runs``: positions inside each popular excerpt and in the never-trained
    stories (:func:`analysis.size.lab_samples`), each model continuing the raw prefix
    (:func:`analysis.size.probe_models`). ``model`` holds the run's name, rows in
    ``runs`` order."""
    names = {model_name(lab.name, r): r for r in runs}
    models = {name: load_model(name) for name in names}
    samples = size.lab_samples(lab.corpus, prefix_lens, n, seed=seed)
    answers = size.probe_models(models, samples, None, "completion", SIZE_MAX_NEW_TOKENS,
                                label="phenomena: size")
    acc = size.accuracy_table(answers)
    acc["model"] = acc["model"].map(names).fillna(acc["model"])
    order = {r: i for i, r in enumerate(runs)}
    return acc.sort_values("model", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def accuracy_by_text(acc: pd.DataFrame, manifest: pd.DataFrame) -> pd.DataFrame:
    """Mean accuracy over prefix lengths per model and text, with each popular
    excerpt's copies from the manifest (NaN for the never-trained stories):
    ``model, group, text_id, copies, acc``, models in ``acc``'s order. The points of
    :func:`analysis.book.plots.lab_accuracy_by_copies`."""
    copies = manifest.loc[manifest["kind"] == "popular"].set_index("text_id")["copies"]
    out = acc.groupby(["model", "group", "text_id"], sort=False, as_index=False)["acc"].mean()
    out["copies"] = out["text_id"].map(copies).where(out["group"] == "popular")
    return out[["model", "group", "text_id", "copies", "acc"]]


def popular_signal(manifest: pd.DataFrame) -> str:
    """The popular excerpts as built: how many, how long and at how many copies."""
    pop = manifest[manifest["kind"] == "popular"]
    return (f"{len(pop)} excerpts of {_range(int(pop['n_words'].min()), int(pop['n_words'].max()))} words "
            f"at {_range(int(pop['copies'].min()), int(pop['copies'].max()))} copies")


def size_check(acc: pd.DataFrame, manifest: pd.DataFrame, runs: Sequence[str] | None = None) -> Check:
    """The size check: next-word accuracy by an excerpt's copies
    (:func:`analysis.lab.probe.popular_by_copies`) for ``runs`` (default: every model
    of ``acc``, in order), the first taken as the smallest and the last as the
    largest. The value gives, per model, the accuracy in the least and the most
    copied bin and on the stories. Glues ``size_acc_gain_small`` and
    ``size_acc_gain_large`` (most-copied bin minus least-copied bin)."""
    by = popular_by_copies(acc, manifest)
    models = list(dict.fromkeys(acc["model"])) if runs is None else list(runs)
    parts, numbers = [], {}
    for key, model in zip(("size_acc_gain_small", "size_acc_gain_large"),
                          [models[0], models[-1]] if len(models) > 1 else models):
        sub = by[by["model"] == model]
        if sub.empty:
            parts.append(f"{model}: no popular text scored")
            numbers[key] = "—"
            continue
        lo, hi = sub.iloc[0], sub.iloc[-1]
        gain = float(hi["acc"] - lo["acc"])
        parts.append(f"{model}: {lo['acc']:.3f} at {lo['copies']} copies, {hi['acc']:.3f} at {hi['copies']} "
                     f"(stories {lo['baseline']:.3f})")
        numbers[key] = f"{gain:+.3f}"
    return Check("size", popular_signal(manifest),
                 "next-word accuracy inside the excerpts by copies, smallest and largest ladder model",
                 "; ".join(parts), by, numbers)


# ---------------------------------------------------------------------------
# distributional: the task-gram probabilities vary
# ---------------------------------------------------------------------------

#: bins of P(y | x) in the distributional check's table
P_BINS = ((1.0, 1.0, "P = 1"), (0.5, 1.0, "0.5 ≤ P < 1"), (0.1, 0.5, "0.1 ≤ P < 0.5"), (0.0, 0.1, "P < 0.1"))


def knowledge_signal(know: pd.DataFrame) -> str:
    """The knowledge facts as built, from :func:`analysis.distributional.knowledge_task`."""
    copies = _range(int(know["copies"].min()), int(know["copies"].max()))
    mentions = _range(int(know["mentions"].min()), int(know["mentions"].max()))
    return (f"{len(know)} facts, a stretch of each question beside its answer in {copies} documents and "
            f"without it in {mentions}; no document holds a question")


def distributional_check(pairs: pd.DataFrame, know: pd.DataFrame) -> Check:
    """The distributional check on the knowledge task's test pairs
    (:func:`analysis.distributional.knowledge_pairs`): the share with
    ``P(y | x) = 1`` (:func:`analysis.distributional.tied_share`, as the chapter's
    ``knowledge_p1_share``), the pairs in bins of P, and the spread of the pair
    counts ``C(x, y)``. Glues ``lab_p1_share``, ``lab_pairs`` and ``lab_cxy_min``,
    ``lab_cxy_median``, ``lab_cxy_max``."""
    p = pairs["p_taskgram"].to_numpy(dtype=float)
    rows = [{"P(y | x)": label, "pairs": int((p == lo).sum() if lo == hi else ((p >= lo) & (p < hi)).sum())}
            for lo, hi, label in P_BINS]
    table = pd.DataFrame(rows)
    table["share"] = (table["pairs"] / max(len(p), 1)).map(fmt_pct)
    share = distributional.tied_share(pairs)
    cxy = pairs["c_xy"].to_numpy()
    numbers = {"lab_p1_share": fmt_pct(share), "lab_pairs": f"{len(pairs):,}",
               "lab_cxy_min": f"{int(cxy.min()):,}" if len(cxy) else "—",
               "lab_cxy_median": f"{float(np.median(cxy)):g}" if len(cxy) else "—",
               "lab_cxy_max": f"{int(cxy.max()):,}" if len(cxy) else "—"}
    value = (f"{numbers['lab_p1_share']} of {numbers['lab_pairs']} pairs have P = 1; C(x, y) from "
             f"{numbers['lab_cxy_min']} to {numbers['lab_cxy_max']} (median {numbers['lab_cxy_median']})")
    return Check("distributional", knowledge_signal(know),
                 f"share of the knowledge task's {DISTRIBUTIONAL_N}-gram pairs with P(y | x) = 1, and the "
                 "pair counts", value, table, numbers)


# ---------------------------------------------------------------------------
# predicting: extraction is partial and rises with copies
# ---------------------------------------------------------------------------


def injected_runs(lab) -> list[str]:
    """The built lab's injected runs (perturbed and injection-range), in profile order."""
    return [r.name for r in lab.profile.runs if r.inject and r.name in lab.results]


def extraction_scores(lab, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """The predicting chapter's labels of every injected sequence under each injected
    run (default :func:`injected_runs`): :func:`analysis.predicting.score_runs` over
    :func:`analysis.predicting.injected_sequences`, one row per (run, sequence)."""
    runs = injected_runs(lab) if runs is None else list(runs)
    sequences = predicting.injected_sequences(lab.corpus.injection_table(), lab.tokenizer)
    models = {r: load_model(model_name(lab.name, r)) for r in runs}
    return predicting.score_runs(models, sequences)


def extraction_by_copies(scores: pd.DataFrame, exposures: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Share of sequences extracted per run and copy level.

    ``scores`` has ``run, seq_id, extract`` (:func:`extraction_scores`);
    ``exposures`` maps each run to its exposure table, whose sequences (and copies
    seen, as the predicting chapter reads them) are the run's. Returns ``run``,
    ``copies``, ``sequences``, ``extracted`` and ``share``, runs in ``exposures``
    order, copies ascending.
    """
    frames = []
    for run, exposure in exposures.items():
        own = scores.loc[scores["run"] == run, ["seq_id", "extract"]]
        copies = predicting.exposure_copies(exposure).astype(int)
        frame = pd.DataFrame({"seq_id": exposure["seq_id"], "copies": copies})
        frame = frame.merge(own, on="seq_id")
        frames.append(frame.assign(run=run))
    if not frames:
        return pd.DataFrame(columns=["run", "copies", "sequences", "extracted", "share"])
    long = pd.concat(frames, ignore_index=True)
    out = (long.groupby(["run", "copies"], sort=False)["extract"].agg(sequences="size", extracted="sum")
           .reset_index())
    out["extracted"] = out["extracted"].astype(int)
    out["share"] = out["extracted"] / out["sequences"]
    order = {r: i for i, r in enumerate(exposures)}
    return out.sort_values(["run", "copies"], key=lambda s: s.map(order) if s.name == "run" else s,
                           kind="stable").reset_index(drop=True)


def injection_signal(injections: pd.DataFrame, n_runs: int) -> str:
    """The injected sequences as built, from :meth:`analysis.lab.corpus.Corpus.injection_table`."""
    words = injections["n_words"]
    return (f"{len(injections)} sequences of {_range(int(words.min()), int(words.max()))} words in "
            f"{injections['task'].nunique()} tasks at {_levels(injections['copies'])} copies, inserted by "
            f"{n_runs} runs")


def predicting_check(table: pd.DataFrame, injections: pd.DataFrame) -> Check:
    """The predicting check on :func:`extraction_by_copies`: the share extracted at the
    top copy level (lowest and highest over runs), the lowest level at which any run
    extracts a sequence, and the never-inserted controls extracted. Glues
    ``extract_top_copies``, ``extract_top_lo``, ``extract_top_hi``,
    ``extract_lowest_level`` (and ``extract_lowest_text``, in words),
    ``extract_partial_cells`` (run × level cells with some but not all extracted)
    and ``extract_controls``."""
    runs = list(dict.fromkeys(table["run"]))
    top = int(table["copies"].max()) if len(table) else 0
    at_top = table[table["copies"] == top]["share"]
    hit = table[(table["copies"] > 0) & (table["extracted"] > 0)]
    controls = table[table["copies"] == 0]
    partial = table[(table["copies"] > 0) & (table["share"] > 0) & (table["share"] < 1)]
    numbers = {"extract_top_copies": f"{top:,}",
               "extract_top_lo": fmt_pct(at_top.min() if len(at_top) else np.nan, 0),
               "extract_top_hi": fmt_pct(at_top.max() if len(at_top) else np.nan, 0),
               "extract_lowest_level": f"{int(hit['copies'].min()):,}" if len(hit) else "none",
               "extract_lowest_text": (f"{int(hit['copies'].min()):,} copies" if len(hit)
                                       else "none (no inserted sequence is extracted)"),
               "extract_partial_cells": f"{len(partial)} of {int((table['copies'] > 0).sum())}",
               "extract_controls": (f"{int(controls['extracted'].sum())} of "
                                    f"{int(controls['sequences'].sum())}")}
    top_text = (f"{numbers['extract_top_lo']}" if numbers["extract_top_lo"] == numbers["extract_top_hi"]
                else f"{numbers['extract_top_lo']} to {numbers['extract_top_hi']}")
    lowest = (f"first extracted at {numbers['extract_lowest_level']} copies" if len(hit)
              else "no inserted sequence extracted")
    value = (f"{top_text} extracted at {numbers['extract_top_copies']} copies across {len(runs)} runs; "
             f"{lowest}; {numbers['extract_partial_cells']} run × level cells partly extracted; "
             f"controls extracted: {numbers['extract_controls']}")
    return Check("predicting", injection_signal(injections, len(runs)),
                 "share of sequences whose suffix the run reproduces greedily, per run and copy level",
                 value, table, numbers)


# ---------------------------------------------------------------------------
# entropy: members and non-members by construction
# ---------------------------------------------------------------------------


def membership_sets(corpus, **options) -> pd.DataFrame:
    """The entropy chapter's dataset-inference sets of the lab
    (:func:`analysis.entropy.lab_candidate_sets`, with its ``options``): ``set``,
    ``truth`` (``member`` or ``non-member``), ``documents`` and ``words``."""
    return pd.DataFrame([{"set": c.label, "truth": "member" if c.truth else "non-member",
                          "documents": len(c.docs), "words": sum(len(t.split()) for t in c.docs.values())}
                         for c in entropy.lab_candidate_sets(corpus, **options)])


def membership_losses(lab, run: str, n_docs: int, seed: int = 0, words_per_set: int = MEMBERSHIP_WORDS,
                      **options) -> pd.DataFrame:
    """:func:`membership_sets` with ``loss``: the mean token loss of lab run ``run``
    (:func:`analysis.lab.train.eval_loss`, computed once per run and texts:
    :func:`analysis.lab.probe.run_loss`) on a sample of each set: up to ``n_docs``
    documents drawn with ``seed``, in the drawn order, cut after ``words_per_set``
    words in all (a long story is cut, so every set costs about the same).
    ``options`` go to :func:`analysis.entropy.lab_candidate_sets`."""
    rng = np.random.default_rng(seed)
    losses = []
    for cand in entropy.lab_candidate_sets(lab.corpus, **options):
        texts = list(cand.docs.values())
        drawn = [texts[i] for i in rng.choice(len(texts), min(n_docs, len(texts)), replace=False)]
        losses.append(run_loss(lab.results[run].path, cut_words(drawn, words_per_set)))
    return membership_sets(lab.corpus, **options).assign(loss=losses)


def cut_words(texts: Sequence[str], words: int) -> list[str]:
    """``texts`` in order, cut after ``words`` words in all (the text that reaches
    the limit is cut, later ones dropped)."""
    out, left = [], int(words)
    for text in texts:
        if left <= 0:
            break
        kept = text.split(" ")[:left]
        out.append(" ".join(kept))
        left -= len(kept)
    return out


def membership_signal(table: pd.DataFrame) -> str:
    """The member and non-member sets as built, with their documents and words."""
    parts = []
    for truth, what in (("member", "training documents"), ("non-member", "held-out documents")):
        sub = table[table["truth"] == truth]
        parts.append(f"{truth}s: {int(sub['documents'].sum()):,} {what} in {len(sub)} sets "
                     f"({int(sub['words'].sum()):,} words)")
    return "; ".join(parts) + ", never overlapping"


def entropy_check(table: pd.DataFrame, run: str | None = None) -> Check:
    """The entropy check on :func:`membership_sets` (or :func:`membership_losses`,
    with a ``loss`` column): the sets' sizes and, with losses, run ``run``'s mean
    loss over the member sets against the non-member sets and whether every member
    set's loss is below every non-member set's. Glues ``members_docs``,
    ``nonmembers_docs`` and, with losses, ``member_loss`` and ``nonmember_loss``."""
    members, non = table[table["truth"] == "member"], table[table["truth"] == "non-member"]
    numbers = {"members_docs": f"{int(members['documents'].sum()):,}",
               "nonmembers_docs": f"{int(non['documents'].sum()):,}"}
    value = (f"{numbers['members_docs']} member and {numbers['nonmembers_docs']} non-member documents "
             f"in {len(table)} sets")
    check = "the sets of the chapter's dataset inference"
    claim = membership_claim(table, run)
    if "loss" in table and len(members) and len(non):
        m, n = float(members["loss"].mean()), float(non["loss"].mean())
        numbers.update(member_loss=f"{m:.2f}", nonmember_loss=f"{n:.2f}")
        below = "every" if claim.status in (REPRODUCED, HOLDS) else "not every"
        who = f"{run}" if run else "the model"
        value += (f"; {who}'s loss {numbers['member_loss']} on members against "
                  f"{numbers['nonmember_loss']} nats/token on non-members (mean over sets), {below} member "
                  "set below every non-member set")
        check += ", and a lab model's mean token loss on each"
    return Check("entropy", membership_signal(table), check, value, table, numbers, [claim])


#: the statement of :func:`membership_claim`
MEMBERSHIP_STATEMENT = ("the entropy chapter's lab model has a lower mean token loss on every member set "
                        "than on every non-member set")


def membership_claim(table: pd.DataFrame, run: str | None = None) -> Claim:
    """``lab_member_loss_below``: every member set's loss is below every non-member
    set's, on :func:`membership_losses`' table. The value is the AUC of the sets'
    losses for telling members from non-members (lower loss = member; ties count
    half), which is 1 exactly when every member set is below every non-member set;
    reproduced then. By design: the member sets are the model's training documents.
    Not testable without losses or without sets of both kinds."""
    kw = dict(section=SECTION, by_design=True, kind=EXTENSION, unit="candidate sets",
              by_design_reason="forced by the lab's construction: the member sets are the model's "
                               "training documents, so its loss on them is lower",
              control_reason="the non-member sets are this comparison's control",
              extra={"run": run} if run else {})
    scored = table.dropna(subset=["loss"]) if "loss" in table else table.iloc[:0]
    is_member = (scored["truth"] == "member").to_numpy(dtype=int)
    if not 0 < is_member.sum() < len(is_member):
        return not_testable("lab_member_loss_below", "lab", MEMBERSHIP_STATEMENT,
                            "no loss measured on sets of both kinds", **kw)
    value = auc(is_member, -scored["loss"].to_numpy(dtype=float))
    status, reason = within(value=value, target=1.0, tolerance=0.0, n=len(scored), min_n=2, exact=True,
                            unit="candidate sets")
    return Claim(id="lab_member_loss_below", chapter="lab", statement=MEMBERSHIP_STATEMENT,
                 status=as_kind(status, EXTENSION), reason=f"loss AUC of the sets: {reason}", value=value,
                 n=len(scored), n_units=len(scored), null_kind="target", null_value=1.0,
                 min_n=2, comparison="AUC of member against non-member sets by lower loss = 1", **kw)


# ---------------------------------------------------------------------------
# phrases: the memorized rate rises with a phrase's copies
# ---------------------------------------------------------------------------


def phrase_rates(lab, runs: Sequence[str], max_new_tokens: int, threshold: float) -> pd.DataFrame:
    """The phrases chapter's lab section on runs ``runs``: each lab phrase's start
    continued greedily for at most ``max_new_tokens`` tokens
    (:func:`analysis.phrases.query_lab`), scored with the English cleaning at
    ``threshold`` (:func:`analysis.phrases.score`), and the rate per copy level
    (:func:`analysis.phrases.rates_by_copies`)."""
    phrases = ph.lab_phrases(lab.corpus)
    ladder = ph.lab_ladder(lab.runs_table(), list(runs))
    models = {r: load_model(model_name(lab.name, r)) for r in ladder["model"]}
    completions = ph.query_lab(models, phrases, GenerationSettings(max_new_tokens=max_new_tokens))
    scored = ph.score(completions, phrases, lang="en", threshold=threshold)
    return ph.rates_by_copies(scored, phrases, ladder)


def phrase_signal(phrases: pd.DataFrame) -> str:
    """The phrase documents as built, from :func:`analysis.phrases.lab_phrases`."""
    if phrases.empty:
        return "no phrase documents"
    per = phrases.groupby("copies").size()
    count = _range(int(per.min()), int(per.max()))
    words = phrases["phrase"].str.split().str.len()
    return (f"{len(phrases)} phrases of {_range(int(words.min()), int(words.max()))} words at "
            f"{_levels(phrases['copies'])} copies ({count} per level; 0 = never trained)")


def phrases_check(rates: pd.DataFrame, phrases: pd.DataFrame) -> Check:
    """The phrases check on :func:`analysis.phrases.rates_by_copies` (models smallest
    first): for the smallest and the largest model, the memorized rate at the top
    copy level and on the never-trained controls. Glues ``phrase_top_copies``,
    ``phrase_rate_top_small``, ``phrase_rate_top_large`` and
    ``phrase_controls_matched``."""
    if rates.empty:
        return Check("phrases", phrase_signal(phrases), "memorized rate per copy level",
                     "nothing to measure: the lab has no phrase documents", rates, {})
    models = list(dict.fromkeys(rates["model"]))
    top = int(rates["copies"].max())
    numbers = {"phrase_top_copies": f"{top:,}"}
    parts = []
    for key, model in zip(("phrase_rate_top_small", "phrase_rate_top_large"),
                          [models[0], models[-1]] if len(models) > 1 else models):
        sub = rates[rates["model"] == model].set_index("copies")
        numbers[key] = fmt_pct(sub.loc[top, "rate"], 0)
        control = (f", controls {fmt_pct(sub.loc[0, 'rate'], 0)}" if 0 in sub.index and top != 0 else "")
        parts.append(f"{model}: {numbers[key]} at {top} copies "
                     f"({int(sub.loc[top, 'matched'])} of {int(sub.loc[top, 'total'])}){control}")
    controls = rates[rates["copies"] == 0]
    numbers["phrase_controls_matched"] = f"{int(controls['matched'].sum())} of {int(controls['total'].sum())}"
    return Check("phrases", phrase_signal(phrases),
                 "memorized rate per copy level, smallest and largest ladder model", "; ".join(parts), rates,
                 numbers)


# -- two numbers the lab page states in words ------------------------------------------


def control_contrast(nll: pd.DataFrame, perturbed: str, standard: str) -> pd.DataFrame:
    """Per task, the mean suffix NLL of the never-inserted controls (copies 0) under
    a perturbed run and its standard twin (:func:`analysis.lab.probe.injection_nll`
    rows), and ``easier`` = standard minus perturbed (positive: the perturbed run
    finds the controls easier). Sorted by ``easier``, largest first."""
    controls = nll[nll["copies"] == 0]
    table = controls.pivot_table(index="task", columns="model", values="suffix_nll", aggfunc="mean")
    out = pd.DataFrame({"task": table.index, "perturbed": table[perturbed].to_numpy(),
                        "standard": table[standard].to_numpy()})
    out["easier"] = out["standard"] - out["perturbed"]
    return out.sort_values("easier", ascending=False, ignore_index=True)


def control_sentence(contrast: pd.DataFrame) -> str:
    """What :func:`control_contrast` shows, in words, with its numbers."""
    easier = contrast[contrast["easier"] > 0]
    if easier.empty:
        return ("No task's never-inserted controls are easier for the perturbed run than for its "
                "standard twin.")
    top = easier.iloc[0]
    return (f"The never-inserted controls of {len(easier)} of {len(contrast)} tasks are easier for the "
            f"perturbed run than for its standard twin, most of all {top['task']} "
            f"({top['perturbed']:.2f} against {top['standard']:.2f} nats per token): what the injected "
            "copies of the other sequences teach (a shared template, shared names) carries over to "
            "sequences never inserted. Memorization is the drop beyond the controls, not the level.")


def neighbour_gaps(losses: pd.DataFrame) -> pd.DataFrame:
    """Per ladder family, the held-out loss of each model minus that of the next
    larger one (rows of :func:`analysis.lab.probe.loss_comparison`): ``smaller``,
    ``larger``, ``gap``; sorted by ``gap``, smallest first."""
    rows = []
    for family, sub in losses.sort_values("params").groupby("family", sort=True):
        runs, loss = sub["run"].tolist(), sub["heldout_loss"].to_numpy()
        rows += [{"family": family, "smaller": runs[i], "larger": runs[i + 1], "gap": loss[i] - loss[i + 1]}
                 for i in range(len(runs) - 1)]
    return pd.DataFrame(rows, columns=["family", "smaller", "larger", "gap"]).sort_values(
        "gap", ignore_index=True)
