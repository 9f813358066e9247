"""Training a lab's missing runs side by side on the CPU: one process a core, one thread each.

The lab's models are small (0.06M-1.05M parameters in the default lab), so a training
step is mostly per-operation overhead that a second thread does not share: deep-12
trained in 100 s on two threads and in 121 s on one. Two runs on one thread each
therefore finish sooner than the same two runs one after the other on two threads.
A run trained one process at a time trains on one thread too
(:meth:`analysis.lab.train.devices.Place.threads`): a matmul's sums can depend on the
number of threads (on an AVX-512 Xeon a run trained on two threads and on one ends with
other weights, though earlier machines gave bit-identical ones), so a run's key
(:func:`analysis.lab.train.run_key`) is the same either way and a run trained here is
the run a one-process build trains, bit for bit (``tests/test_lab_workers.py``).

:func:`train_side_by_side` trains :class:`SideJob`\\ s in ``workers`` processes forked
from the caller (so they share its tokenizer and token streams, and a script needs no
``__main__`` guard), each training on one thread, as PyTorch's data-loader workers do
after a fork. A job starts when a worker is
free, the costliest first (ties in the order given: the runs others fork from first,
:func:`analysis.lab.ladder.training_order`), except that a run which forks from a
standard twin trained in the same call waits until the twin is done (it then starts
from the twin's fork, as it would one process). Runs with one key train once. An error
in a worker stops the others and is raised here; a stopped run resumes from its
partial checkpoint on the next build. The caller then loads every run from the cache.

``workers``: the argument, else ``$MEMBOOK_LAB_WORKERS``, else every core available
(:func:`lab_workers`); 1 trains nothing here (the caller trains one run at a time on
every core). Only a single-process CPU build trains side by side.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from analysis.lab.config import LabConfigError, RunConfig
from analysis.lab.train import Placement, run_folder, train
from analysis.lab.train.devices import default_threads

__all__ = ["WORKERS_ENV", "SideJob", "lab_workers", "train_side_by_side"]

WORKERS_ENV = "MEMBOOK_LAB_WORKERS"
DONE = "DONE.json"


@dataclass(frozen=True)
class SideJob:
    """One run to train: its config, the key of the token stream it trains on (its corpus
    key), its injections, whether it forks (``train``'s ``fork``), the folder of the
    standard twin it starts from (None when it trains from step 0) and what it costs
    (:func:`analysis.lab.ladder.train_cost`: the costliest start first)."""

    run: RunConfig
    stream: str
    injections: tuple
    fork: bool
    twin: Path | None = None
    cost: float = 0.0


def lab_workers(workers: int | None = None, place: Placement | None = None) -> int:
    """How many runs train at once: ``workers``, else ``$MEMBOOK_LAB_WORKERS``, else every
    core available; always 1 for a build on CUDA or under torchrun. Raises
    :class:`LabConfigError`, naming the setting and the allowed range, outside 1..cores."""
    cores = default_threads()
    source = "workers"
    if workers is None:
        raw = os.environ.get(WORKERS_ENV, "").strip()
        source = f"${WORKERS_ENV}"
        try:
            workers = int(raw) if raw else cores
        except ValueError:
            raise LabConfigError(f"{source} must be an integer from 1 to {cores} (the cores available), "
                                 f"got {raw!r}") from None
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= cores:
        raise LabConfigError(f"{source} must be an integer from 1 to {cores} (the cores available), "
                             f"got {workers!r}")
    if place is not None and (place.device != "cpu" or place.distributed):
        return 1
    return workers


#: the token streams and the tokenizer, set by :func:`train_side_by_side` before its workers fork
_WORKER: dict = {}


def _train(job: SideJob) -> str:
    """Train one job on one thread (a worker's task, in a forked process); its folder."""
    result = train(job.run, _WORKER["streams"][job.stream], job.injections, _WORKER["tokenizer"], job.stream,
                   progress=False, threads=1, fork=job.fork, device="cpu")
    return str(result.path)


def _folder(job: SideJob, tokenizer) -> Path:
    return run_folder(job.run, job.injections, tokenizer, job.stream, device="cpu")


def train_side_by_side(jobs: Sequence[SideJob], streams: Mapping[str, Sequence[str]], tokenizer,
                       workers: int, progress: bool = True) -> list[str]:
    """Train the ``jobs`` not yet in the cache, ``workers`` at a time, one thread each;
    ``streams`` maps each job's ``stream`` to its training texts. Returns the names of
    the runs trained, in the order they finished; trains nothing (and returns ``[]``)
    when ``workers`` is 1 or fewer than two runs are missing."""
    todo: dict[Path, SideJob] = {}
    for job in jobs:
        folder = _folder(job, tokenizer)
        if not (folder / DONE).exists():
            todo.setdefault(folder, job)
    if workers < 2 or len(todo) < 2:
        return []
    waiting = sorted(todo.items(), key=lambda item: -item[1].cost)  # stable: ties keep the given order
    running: dict[Future, tuple[Path, SideJob]] = {}
    done_folders: set[Path] = set()
    finished: list[str] = []
    bar = tqdm(total=len(todo), desc=f"lab runs, {workers} at a time, one thread each", disable=not progress,
               leave=False)
    _WORKER.update(streams=streams, tokenizer=tokenizer)  # the forked workers read them from here
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    try:
        while waiting or running:
            for item in list(waiting):
                if len(running) >= workers:
                    break
                twin = item[1].twin
                if twin in todo and twin not in done_folders:
                    continue  # it forks from a twin still training here
                waiting.remove(item)
                running[pool.submit(_train, item[1])] = item
            bar.set_postfix_str(", ".join(j.run.name for _, j in running.values()))
            if not running:
                raise LabConfigError("no run can start: " + ", ".join(j.run.name for _, j in waiting)
                                     + " wait for standard twins that are not trained")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                folder, job = running.pop(future)
                future.result()  # a worker's error is raised here
                done_folders.add(folder)
                finished.append(job.run.name)
                bar.update()
    except BaseException:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()  # a stopped run resumes from its partial checkpoint
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
        _WORKER.clear()
    pool.shutdown()
    return finished

