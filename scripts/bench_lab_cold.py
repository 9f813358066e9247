"""Benchmark: a cold build of a lab profile, in one process, from an empty cache.

    python scripts/bench_lab_cold.py --cache /tmp/lab-cold [--profile default] [--reference .cache]
                                     [--install]

Runs ``analysis.lab.ladder.build_lab(profile)`` in a child process with ``MEMBOOK_CACHE``
pointed at ``--cache`` (which must be empty or absent: the corpus, the phrase selection,
the tokenizer and every run are built there), the runs side by side as a build trains
them (:mod:`analysis.lab.workers`). Records the wall minutes, the CPU minutes of the
child and its workers, the sum of the runs' own clocks, the trainings, the load average
before and after, the commit, ``compile`` (false: the lab trains eager, see
``bench/results/lab_compile.json``) and, for every run whose checkpoint the
``--reference`` cache also holds (a run trained earlier on this machine under the same
key), whether the two weights are bit-identical. Writes ``bench/results/lab_cold.json``.

With ``--install`` the built artifacts (``lab-*`` folders and the phrase selection) are
copied into the reference cache afterwards, so the chapters use the runs just measured
rather than train them again; every artifact is keyed by what it is built from, so a
copy never replaces another input's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from analysis.core import jsonio

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "lab_cold.json"

CHILD = r'''
import sys, time
from analysis.core import jsonio
from analysis.lab import ladder
from analysis.lab.workers import lab_workers
t = time.time()
lab = ladder.build_lab(sys.argv[1], progress=False)
wall = time.time() - t
fps = lab.fingerprints()
folders = {run: str(res.path) for run, res in lab.results.items()}
print(jsonio.dumps({"wall_s": wall, "train_s": lab.train_seconds(), "runs": len(lab.results),
                  "trainings": len({res.path for res in lab.results.values()}),
                  "workers": lab_workers(None), "fingerprints": fps.to_dict("records"), "folders": folders}))
'''


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def _reference_match(folders: dict, cache: Path, reference: Path) -> dict:
    """For each run whose folder (same relative path, the run's key) the reference cache holds
    finished, whether the weights are bit-identical."""
    from analysis.lab.fingerprint import checkpoint_sha256

    out = {}
    for run, folder in folders.items():
        rel = Path(folder).relative_to(cache)
        other = reference / rel
        if (other / "DONE.json").exists():
            out[run] = checkpoint_sha256(Path(folder)) == checkpoint_sha256(other)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True, help="an empty folder for the cold build")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--reference", type=Path, default=ROOT / ".cache",
                    help="a cache whose runs, trained earlier on this machine, are compared with the cold "
                         "build's")
    ap.add_argument("--install", action="store_true", help="copy the built lab into the reference cache")
    args = ap.parse_args()
    cache = args.cache.resolve()
    if cache.exists() and any(cache.iterdir()):
        sys.exit(f"--cache {cache} is not empty: a cold build needs an empty folder")
    cache.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    t0 = time.time()
    child = subprocess.run([sys.executable, "-c", CHILD, args.profile],
                           env={**os.environ, "MEMBOOK_CACHE": str(cache)}, capture_output=True, text=True)
    wall = time.time() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        sys.exit(f"the cold build failed:\n{child.stderr[-4000:]}")
    built = json.loads(child.stdout.strip().splitlines()[-1])
    reference = args.reference.resolve()
    same = _reference_match(built["folders"], cache, reference) if reference.exists() else {}
    record = {
        "kind": "cold lab",
        "what": (f"analysis.lab.ladder.build_lab({args.profile!r}) in one process, MEMBOOK_CACHE an "
                 "empty folder: the runs trained side by side, one torch thread each "
                 "(analysis.lab.workers), eager"),
        "profile": args.profile,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "cores": os.cpu_count(),
        "workers": built["workers"],
        "minutes": round(wall / 60, 1),
        "cpu_minutes": round((usage.ru_utime + usage.ru_stime) / 60, 1),
        "sum_of_run_clocks_minutes": round(built["train_s"] / 60, 1),
        "runs": built["runs"],
        "trainings": built["trainings"],
        "compile": False,
        "load_before": round(load_before[0], 2),
        "load_after": round(os.getloadavg()[0], 2),
        "identical_to_reference": (f"{sum(same.values())} of {len(same)}" if same
                                   else "no run of the reference cache has this build's keys"),
        "fingerprints": built["fingerprints"],
    }
    OUT.write_text(jsonio.dumps(record, indent=1) + "\n")
    print(jsonio.dumps({k: v for k, v in record.items() if k != "fingerprints"}, indent=1))
    if args.install:
        reference.mkdir(parents=True, exist_ok=True)
        for sub in cache.iterdir():
            if sub.is_dir() and (sub.name.startswith("lab") or sub.name.startswith("phrases-english")):
                shutil.copytree(sub, reference / sub.name, dirs_exist_ok=True)
        print(f"installed the built lab into {reference}")


if __name__ == "__main__":
    main()
