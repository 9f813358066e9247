"""Building a lab profile: its corpus, its tokenizer and its runs.

The profiles themselves (their corpus, tokenizer size and runs, and the lab page's
``PARAMS``) are in :mod:`analysis.lab.profiles`; their design in words in
:mod:`analysis.lab.design`.

``build_lab(profile)`` builds the corpus (handing it the English counterpart's
phrases as its phrase candidates: :func:`phrase_candidates`, from
:mod:`analysis.lab.phrase_selection`) and the tokenizer and trains every run,
each cached under the hash of everything it depends on (a killed build resumes
inside the run it was training; a registered lab archive, :mod:`analysis.lab.archive`,
supplies the runs instead when there is one), and registers the runs so
``load_model("lab:<run name>")`` finds them. Used by the lab page
(``notebooks/lab.md``) and by every chapter that needs a lab model. The notebooks
call some of the profiles' names through this module too (``ladder.PARAMS``,
``ladder.PROFILES``, ``ladder.get_profile``, ``ladder.model_name``,
``ladder.ablation_runs``, ``ladder.heldout_runs``; the lab page names
``ladder.ladder_lr``), and so does ``analysis.predicting.steps`` (``ABLATION``), whose
source is part of its memo keys: new code imports them from :mod:`analysis.lab.profiles`
(as the chapters' ``params`` modules do).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from analysis.core.cache import stable_hash
from analysis.lab.archive import ensure_lab_archive
from analysis.lab.config import WINDOWS, CorpusConfig, LabConfigError, RunConfig
from analysis.lab.corpus import Corpus, build_corpus, corpus_fingerprint
from analysis.lab.fingerprint import FINGERPRINT_FIELDS, final_loss, run_fingerprints
from analysis.lab.index import register
from analysis.lab.phrase_selection import english_phrases
from analysis.lab.profiles import (  # noqa: F401  (ABLATION to ladder_lr: re-exported, see above)
    ABLATION,
    PARAMS,
    PROFILES,
    LabProfile,
    ablation_runs,
    check_runs,
    get_profile,
    heldout_runs,
    lab_profile_param,
    ladder_lr,
    model_name,
    unlabelled,
)
from analysis.lab.tokenizer import get_tokenizer
from analysis.lab.train import (
    Placement,
    RunResult,
    barrier,
    check_batch,
    check_injections,
    flops_per_token,
    init_distributed,
    placement,
    run_folder,
    standard_twin,
    train,
    wait_for_run,
)
from analysis.lab.train.stream import cached_value, token_stream
from analysis.lab.workers import SideJob, lab_workers, train_side_by_side

#: the English counterpart's selection the phrase documents come from; its popular-text class
#: is complete (37 texts, 4 phrases each) at any size of 148 or more, and 1,000 is the
#: phrases chapter's paper profile, so the two share one cached selection
PHRASE_SELECTION_N = 1_000


@dataclass
class LabBuild:
    """A built lab: its profile, corpus, tokenizer and every trained run."""

    profile: LabProfile
    corpus: Corpus
    tokenizer: object
    results: dict[str, RunResult]
    seconds: float
    name: str | None = None

    def model_names(self) -> list[str]:
        """The ``load_model`` names of the built runs (``lab:<run>`` on the default profile)."""
        if self.name is None:
            raise LabConfigError("a lab built from an unnamed profile has no load_model names")
        return [model_name(self.name, r) for r in self.results]

    def n_params(self) -> pd.Series:
        """Parameter count of each built run, indexed by its ``load_model`` name."""
        return pd.Series({m: self.results[r].n_params for m, r in zip(self.model_names(), self.results)})

    def runs_table(self) -> pd.DataFrame:
        """The built runs' table with parameter counts, training time and speed."""
        table = self.profile.table()
        table = table[table["run"].isin(list(self.results))].reset_index(drop=True)
        table["params"] = [self.results[r].n_params for r in table["run"]]
        table["trained now"] = [self.results[r].trained for r in table["run"]]
        table["seconds"] = [round(self.results[r].seconds, 1) for r in table["run"]]
        table["tokens/s"] = [round(self.results[r].tokens_per_second) for r in table["run"]]
        table["final loss"] = [final_loss(self.results[r].curve) for r in table["run"]]
        first = {}
        for r in table["run"]:
            first.setdefault(self.results[r].path, r)
        table["same weights as"] = [first[self.results[r].path] if first[self.results[r].path] != r else ""
                                    for r in table["run"]]
        return table

    def fingerprints(self) -> pd.DataFrame:
        """One row per built run, in the build's order: ``run`` and its fingerprint
        (:func:`analysis.lab.fingerprint.run_fingerprint`: ``weights_sha256``,
        ``final_loss``, ``final_loss_last``, ``steps``). Runs sharing a checkpoint
        share the values (hashed once)."""
        rows = [{"run": run, **fp} for run, fp in run_fingerprints(self.results).items()]
        return pd.DataFrame(rows, columns=["run", *FINGERPRINT_FIELDS])

    def train_seconds(self) -> float:
        """Seconds spent training the built runs, each distinct checkpoint counted once
        (a standard twin that is a ladder run shares its folder)."""
        seen = {res.path: res.seconds for res in self.results.values()}
        return float(sum(seen.values()))


def run_injections(run: RunConfig, injections: list) -> list:
    """The injected sequences a run inserts: all of them, or those with at most
    ``run.max_copies`` copies when it is set (the injection-range runs)."""
    if run.max_copies is None:
        return list(injections)
    return [i for i in injections if i.copies <= run.max_copies]



def phrase_candidates(config: CorpusConfig) -> pd.DataFrame | None:
    """The phrase candidates a corpus of ``config`` is built with: the English
    counterpart's popular-text phrases, best LASSO score first
    (:func:`analysis.lab.phrase_selection.english_phrases`, cached in the artifact
    cache); None when ``config`` asks for no phrase documents (nothing is selected)."""
    if not config.phrases_per_level:
        return None
    table = english_phrases(PHRASE_SELECTION_N, seed=0)
    return table[table["type"] == "popular"].reset_index(drop=True)


#: the modules whose source builds a corpus: a cached corpus is reused only while every one
#: of them is unchanged (with its configuration, input files and phrase candidates)
CORPUS_CODE = (*(f"analysis.lab.corpus.{m}" for m in ("assemble", "common", "documents", "facts",
                                                      "injections", "phrases", "problems", "shingles",
                                                      "tasks", "windows")),
               "analysis.lab.config", "analysis.core.data", "analysis.core.text")


def profile_corpus(profile: str | LabProfile) -> Corpus:
    """The corpus of ``profile``, built with its phrase candidates (:func:`phrase_candidates`);
    nothing is trained.

    Built once and then read from the artifact cache
    (:func:`analysis.lab.train.stream.cached_value`, keyed by the corpus's recipe, its
    phrase candidates and the source of :data:`CORPUS_CODE`): a second process, or a
    second chapter, loads in seconds a corpus that takes minutes to build (the GPU lab's).
    """
    config = get_profile(profile).corpus
    candidates = phrase_candidates(config)
    key = {"recipe": corpus_fingerprint(config), "candidates": _frame_fingerprint(candidates)}
    return cached_value("lab-corpus", key, lambda: build_corpus(config, phrase_candidates=candidates),
                        code=CORPUS_CODE)


def _frame_fingerprint(frame: pd.DataFrame | None) -> str | None:
    """Hash of a data frame's columns and every cell (None for None)."""
    if frame is None:
        return None
    cells = pd.util.hash_pandas_object(frame, index=True).to_numpy()
    return stable_hash([list(map(str, frame.columns)), hashlib.sha256(cells.tobytes()).hexdigest()])


def build_lab(profile: str | LabProfile = "default", progress: bool = True, family: str | None = None,
              runs: Sequence[str] | None = None, device: str | None = None,
              wait_for_twins: bool = False, workers: int | None = None) -> LabBuild:
    """Build the corpus and tokenizer and train every run of ``profile``, or only
    the runs whose family starts with ``family`` (such as ``"ladder"``), or only the
    runs named in ``runs``.

    The one way a chapter gets the lab's models: runs already in the artifact
    cache are loaded, the others trained now (with a progress bar per run); any
    other error propagates. A named profile's runs missing from the cache are
    first installed from the profile's lab archive when one is registered and
    available (:func:`analysis.lab.archive.ensure_lab_archive`, after the corpus
    and tokenizer are built: the archive's name is keyed by every run's folder);
    they are then loaded like runs trained here. Every injected run's schedule is
    checked before the first run trains, so a configuration that cannot be
    scheduled fails at once.
    Standard runs train first: an injection-range run whose window opens after
    step 0 then starts from its standard twin's fork at that step (see
    :mod:`analysis.lab.train`), and only the standard runs some such run of the
    profile forks from save forks. Results keep the profile's order.

    ``device`` (``"cpu"`` or ``"cuda"``; default ``$MEMBOOK_LAB_DEVICE``, else the
    profile's :attr:`LabProfile.device`: the CPU for the ``smoke`` and ``default``
    labs even on a machine with a GPU, CUDA for the ``gpu`` lab) is where every run
    trains (:func:`lab_placement`). Under
    torchrun (``torchrun --standalone --nproc_per_node=N -m analysis.lab.build``)
    every process calls this: the first builds the corpus and tokenizer into the
    cache while the others wait, then they load them; all processes train every run
    together, data-parallel, and only the first shows progress and registers the runs.
    A batch that does not split evenly over the processes fails before any work.

    Runs are trained in :func:`training_order`. Several single-process builds may
    share the runs of a profile (:func:`shard_runs`, ``python -m analysis.lab.build
    --shard I/N``, one a GPU): with ``wait_for_twins`` a run that forks from a
    standard twin another build is training waits for it rather than train from step 0.
    On the CPU, one process, the runs missing from the cache train ``workers`` at a time
    (default ``$MEMBOOK_LAB_WORKERS``, else every core), one thread each: the same weights,
    sooner (:mod:`analysis.lab.workers`).
    """
    t0 = time.time()
    prof = get_profile(profile)
    chosen = _chosen_runs(prof, family, runs)
    place = lab_placement(prof, device)
    workers = 1 if wait_for_twins else lab_workers(workers, place)
    if wait_for_twins and place.distributed:
        raise LabConfigError("wait_for_twins is for single-process builds that share a profile's runs "
                             "(--shard); under torchrun every process trains every run together")
    for run in chosen:
        check_batch(run, place)
    init_distributed(place)
    corpus, texts, key, tokenizer = _corpus_and_tokenizer(prof, place)
    injected = {run.name: run_injections(run, corpus.injections) for run in chosen}
    for run in chosen:
        if run.inject:
            check_injections(run, injected[run.name], tokenizer)
    name = profile if isinstance(profile, str) else None
    if name is not None:
        _install_archive(name, prof, corpus, key, tokenizer, place)
    built = _train_runs(prof, chosen, injected, corpus, texts, key, tokenizer, place, progress, name,
                        wait_for_twins, workers)
    results = {run.name: built[run.name] for run in chosen}
    return LabBuild(prof, corpus, tokenizer, results, time.time() - t0, name=name)


def lab_folders(profile: str | LabProfile, corpus: Corpus, tokenizer, corpus_key: str,
                device: str | None = None) -> dict[str, Path]:
    """Every run of ``profile`` → the folder :func:`build_lab` trains it into on ``device``
    (:func:`analysis.lab.train.run_folder`; the folders need not exist)."""
    prof = get_profile(profile)
    return {run.name: run_folder(run, run_injections(run, corpus.injections), tokenizer,
                                 run_corpus_key(run, corpus_key), device=device) for run in prof.runs}


def _as_built(run: RunConfig) -> bool:
    return run.popular_copies_factor == 1 and run.popular_dropped == 0


def run_corpus_key(run: RunConfig, corpus_key: str) -> str:
    """The key of the stream ``run`` trains on: the corpus's, or, for an ablation run
    whose popular excerpts train at other copies, one of its own."""
    if _as_built(run):
        return corpus_key
    return stable_hash([corpus_key, "popular_copies_factor", run.popular_copies_factor,
                        "popular_dropped", float(run.popular_dropped)])


def run_texts(run: RunConfig, corpus: Corpus, texts: list[str]) -> list[str]:
    """The training stream of ``run``: the corpus's (``texts``), or its ablation's."""
    if _as_built(run):
        return texts
    return corpus.training_texts(popular_factor=run.popular_copies_factor,
                                 popular_dropped=run.popular_dropped)


def _install_archive(name: str, prof: LabProfile, corpus: Corpus, key: str, tokenizer,
                     place: Placement) -> None:
    """Install the runs of the lab ``name`` from its registered archive, when it has one
    (:func:`analysis.lab.archive.ensure_lab_archive`), before any run trains; the first
    process installs while the others wait. Without an archive nothing happens."""
    if place.rank == 0:
        ensure_lab_archive(name, lab_folders(prof, corpus, tokenizer, key, place.device))
    barrier(place)


def lab_placement(profile: str | LabProfile, device: str | None = None) -> Placement:
    """Where :func:`build_lab` trains ``profile``'s runs: ``device``, else
    ``$MEMBOOK_LAB_DEVICE``, else the profile's :attr:`LabProfile.device`
    (:func:`analysis.lab.train.placement`)."""
    return placement(device, default=get_profile(profile).device)


def _chosen_runs(prof: LabProfile, family: str | None, runs: Sequence[str] | None) -> list[RunConfig]:
    """The runs of ``prof`` named in ``runs`` (default: all), of ``family`` when given;
    an unknown run name or family fails here, before the corpus is built."""
    wanted = [prof.run(name) for name in runs] if runs is not None else prof.runs
    chosen = [r for r in wanted if family is None or r.family.startswith(family)]
    if not chosen:
        families = sorted({r.family for r in prof.runs})
        raise LabConfigError(f"no run of family {family!r}; families: {families}")
    return chosen


def prepare_lab(profile: str | LabProfile) -> tuple[Corpus, object]:
    """Build ``profile``'s corpus, tokenizer and token stream into the artifact cache (or read
    them from it), training nothing: what builds sharing the profile's runs then read in seconds."""
    prof = get_profile(profile)
    corpus = profile_corpus(prof)
    texts = corpus.training_texts()
    tokenizer = get_tokenizer(texts, corpus.fingerprint(), prof.vocab_size)
    token_stream(texts, tokenizer)
    return corpus, tokenizer


def _corpus_and_tokenizer(prof: LabProfile, place: Placement) -> tuple[Corpus, list[str], str, object]:
    """The profile's corpus, its training texts, its key and its tokenizer.

    Under torchrun the first process builds the corpus, the tokenizer and the token
    stream into the artifact cache while the others wait at the barrier (within the
    process group's timeout, :data:`analysis.lab.train.devices.PROCESS_GROUP_TIMEOUT_S`);
    then they read all three from the cache, in seconds.
    """
    first = place.rank == 0
    if not first:
        barrier(place)
    corpus = profile_corpus(prof)
    texts = corpus.training_texts()
    key = corpus.fingerprint()
    tokenizer = get_tokenizer(texts, key, prof.vocab_size)
    if first:
        if place.distributed:
            token_stream(texts, tokenizer)  # cached for every process's runs
        barrier(place)
    return corpus, texts, key, tokenizer


def _train_runs(prof: LabProfile, runs: list[RunConfig], injected: dict, corpus: Corpus, texts: list[str],
                key: str, tokenizer, place: Placement, progress: bool, name: str | None,
                wait_for_twins: bool = False, workers: int = 1) -> dict[str, RunResult]:
    """Train (or load) ``runs`` in :func:`training_order` (the missing ones ``workers`` at a time first),
    and register them under the profile ``name`` (if any); only the first process shows progress and
    registers. With ``wait_for_twins``, a run that forks from a twin another process trains waits for it."""
    first, forked = place.rank == 0, fork_sources(prof)
    progress = progress and first
    fork = {run.name: run.inject or unlabelled(run) in forked for run in runs}
    jobs = [SideJob(run, run_corpus_key(run, key), tuple(injected[run.name]), fork[run.name],
                    run_folder(standard_twin(run), [], tokenizer, key, device="cpu") if _forks(run) else None,
                    train_cost(run, prof.vocab_size)) for run in training_order(prof, runs)
            if workers > 1 and len(runs) > 1]
    side = set(train_side_by_side(jobs, {j.stream: run_texts(j.run, corpus, texts) for j in jobs}, tokenizer,
                                  workers, progress))
    built = {}
    for run in tqdm(training_order(prof, runs), desc=f"lab runs ({len(runs)})", disable=not progress,
                    leave=False):
        if wait_for_twins and _forks(run):
            twin = run_folder(standard_twin(run), [], tokenizer, key, device=place.device)
            if not (twin / "DONE.json").exists() and first:
                tqdm.write(f"{run.name}: waiting for its standard twin {twin.name}, trained elsewhere, "
                           "to fork from it")
            wait_for_run(twin)
        result = train(run, run_texts(run, corpus, texts), injected[run.name], tokenizer,
                       run_corpus_key(run, key), progress=progress, fork=fork[run.name], device=place.device)
        built[run.name] = replace(result, trained=True) if run.name in side else result  # workers trained it
        if name is not None and first:
            register(model_name(name, run.name).removeprefix("lab:"), built[run.name].path)
    return built


def _forks(run: RunConfig) -> bool:
    """Whether ``run`` starts from its standard twin's fork: injected, its window opening after step 0."""
    return run.inject and WINDOWS[run.window or "all"][0] > 0


def fork_sources(profile: str | LabProfile) -> set[RunConfig]:
    """The standard runs (:func:`unlabelled`) that some run of ``profile`` forks from: they save forks."""
    return {unlabelled(standard_twin(r)) for r in get_profile(profile).runs if _forks(r)}


def _phase(run: RunConfig, sources: set[RunConfig]) -> int:
    """0: a run others fork from; 1: another standard run; 2: an injected run from step 0;
    3: a run that forks from its twin."""
    if not run.inject:
        return 0 if unlabelled(run) in sources else 1
    return 3 if _forks(run) else 2


def training_order(profile: str | LabProfile, runs: Sequence[RunConfig]) -> list[RunConfig]:
    """``runs`` in the order a build trains them: the runs others fork from first, then the
    other standard runs, the injected runs that start at step 0, and last the runs that
    fork from their twins (so the forks exist when they start); the profile's order within each."""
    sources = fork_sources(profile)
    return sorted(runs, key=lambda r: _phase(r, sources))


def train_cost(run: RunConfig, vocab_size: int) -> float:
    """FLOPs a build spends training ``run``: the steps after its fork only, when it forks."""
    lo = WINDOWS[run.window or "all"][0] if _forks(run) else 0.0
    trained = run.steps - math.ceil(lo * run.steps)
    return trained * run.batch_size * run.model.context * flops_per_token(run, vocab_size)


def shard_runs(profile: str | LabProfile, shards: int) -> list[list[str]]:
    """The runs of ``profile`` split over ``shards`` processes that build at once (one a GPU):
    the run names of each shard, in the order it trains them.

    Runs with one key (:func:`unlabelled`) go to one shard, which trains them once. A
    greedy list schedule over :func:`train_cost`: in :func:`training_order` (runs others
    fork from first), the costliest first within each phase, each to the shard where it
    would finish first, a forking run no earlier than its twin's estimated end. A shard
    whose run forks from a twin of another shard waits for it (``build_lab(...,
    wait_for_twins=True)``). Deterministic: every shard computes the same split.
    """
    prof = get_profile(profile)
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise LabConfigError(f"shards must be a positive integer, got {shards!r}")
    groups: dict[RunConfig, list[RunConfig]] = {}
    for run in prof.runs:
        groups.setdefault(unlabelled(run), []).append(run)
    sources = fork_sources(prof)
    heads = sorted(groups, key=lambda u: (_phase(groups[u][0], sources), -train_cost(u, prof.vocab_size)))
    free, done_at = [0.0] * shards, {}
    out: list[list[str]] = [[] for _ in range(shards)]
    for unit in heads:
        cost = train_cost(unit, prof.vocab_size)
        ready = done_at.get(unlabelled(standard_twin(unit)), 0.0) if _forks(unit) else 0.0
        shard = min(range(shards), key=lambda i: (max(free[i], ready) + cost, i))
        free[shard] = done_at[unit] = max(free[shard], ready) + cost
        out[shard] += [r.name for r in groups[unit]]
    return out
