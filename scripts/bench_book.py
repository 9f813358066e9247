"""Benchmark: the whole book from a cold (or warm) cache, timed per chapter.

    python scripts/bench_book.py --cache /tmp/cold-cache            # cold: the folder must be empty
    python scripts/bench_book.py --cache ~/.cache/membook --warm    # a warm re-run of every chapter
    python scripts/bench_book.py --cache ~/.cache/membook --warm --jobs 2   # two chapters at a time

Runs what ``nox -s book`` runs after its install step, in one process each:
``scripts/execute_chapters.py --profile default`` (every chapter, the lab first)
and ``jupyter-book build . -W --keep-going``, with ``MEMBOOK_CACHE`` pointed at
``--cache``. Records the total minutes, each step's CPU minutes and exit status (a
failed step is recorded and the run goes on), the minutes of each chapter (from the
run's ``book/chapters/_timings.json``, with its queries and model calls), the
build's minutes, the commit, the date, the cores and torch threads, and the load
average before and after (a loaded machine shows there), in
``bench/results/book_cold.json`` (``book_warm.json`` with ``--warm``,
``book_warm-jobs2.json`` with ``--warm --jobs 2``).

A cold run writes ``results/*.json`` and ``book/chapters/`` like any default
execution: run it in a clean worktree of the commit to measure
(``git worktree add``), then copy the figures back. With ``--jobs N`` the chapters
after the lab page run N at a time, so the chapters' minutes overlap and add up to
more than the execution's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from analysis.core import jsonio  # strict JSON: a missing number is null

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results"


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return head + ("-dirty" if dirty else "")


def run(cmd: list[str], env: dict) -> tuple[float, float, int]:
    """Run ``cmd``; its wall seconds, the CPU seconds of its process tree (user +
    system, from the finished children's usage) and its exit status. A failed step
    is recorded, not raised, so a long run's figures are never lost."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    rc = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.time() - t0, cpu, rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True, help="the MEMBOOK_CACHE of the run")
    ap.add_argument("--warm", action="store_true", help="time a warm re-run (the cache must hold the book)")
    ap.add_argument("--chapters", nargs="*", default=None, help="default: every chapter")
    ap.add_argument("--jobs", type=int, default=1, help="execute_chapters.py --jobs (default 1)")
    args = ap.parse_args(argv)
    cache = args.cache.expanduser().resolve()
    if not args.warm and cache.exists() and any(cache.iterdir()):
        ap.error(f"--cache {cache} is not empty: a cold run needs an empty folder (or pass --warm)")
    if args.warm and not (cache / "queries.sqlite").exists():
        ap.error(f"--warm: {cache} holds no query cache; run a cold build into it first")
    cache.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMBOOK_CACHE": str(cache)}
    import torch  # the threads the chapters' kernels will use

    record = {"kind": "warm" if args.warm else "cold", "commit": commit(),
              "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "jobs": args.jobs,
              "load_before": [round(x, 2) for x in os.getloadavg()]}
    execute = [sys.executable, str(ROOT / "scripts" / "execute_chapters.py"), "--profile", "default",
               "--jobs", str(args.jobs)]
    if args.chapters:
        execute += ["--chapters", *args.chapters]
    t0 = time.time()
    seconds, cpu, rc = run(execute, env)
    record |= {"execute_minutes": round(seconds / 60, 1), "execute_cpu_minutes": round(cpu / 60, 1),
               "execute_status": rc}
    build = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "-W", "--keep-going"]
    seconds, cpu, rc = run(build, env)
    record |= {"build_minutes": round(seconds / 60, 1), "build_cpu_minutes": round(cpu / 60, 1),
               "build_status": rc}
    record["total_minutes"] = round((time.time() - t0) / 60, 1)
    record["load_after"] = [round(x, 2) for x in os.getloadavg()]
    timings = json.loads((ROOT / "book" / "chapters" / "_timings.json").read_text())
    record["chapters"] = {name: {"minutes": round(t["seconds"] / 60, 1), **t.get("usage", {})}
                          for name, t in timings.items() if not args.chapters or name in args.chapters}
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"book_{record['kind']}{f'-jobs{args.jobs}' if args.jobs > 1 else ''}.json"
    path.write_text(jsonio.dumps(record, indent=1) + "\n")
    print(jsonio.dumps(record, indent=1))
    return int(bool(record["execute_status"] or record["build_status"]))


if __name__ == "__main__":
    raise SystemExit(main())
