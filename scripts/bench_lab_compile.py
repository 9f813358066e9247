"""Benchmark: does ``torch.compile`` qualify for the lab? Whole trainings, eager against compiled.

    python scripts/bench_lab_compile.py [--runs deep-10:300,deep-10:1200,wide-128:300] [--repeat-compiled 2]

Each arm trains a shortened copy of a default-lab run (its model, batch, learning rate
and corpus; ``steps`` optimizer steps) in a fresh process on one torch thread, with a
fresh inductor cache (``TORCHINDUCTOR_CACHE_DIR``, so compilation is cold as in a cold
lab build) and ``torch._dynamo.reset()`` before it trains, and records its wall and CPU
seconds and the sha256 of its saved weights. The lab adopts compile only if two compiled
trainings give bit-identical weights and a compiled run is at least 1.2 times faster
than an eager one, compilation included (a lab run trains one shape once, so its
compile time is paid per run). Arms of one shape run one after the other in one
invocation, so they share the machine's load. Writes bench/results/lab_compile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from analysis.core import jsonio

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "lab_compile.json"

ONE = r'''
import hashlib, shutil, sys, time
from analysis.core import jsonio
from dataclasses import replace
import torch
from analysis.lab import ladder, profiles
from analysis.lab.train import run_folder, train
arm, name, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(1)
prof = profiles.get_profile("default")
corpus, tok = ladder.prepare_lab("default")
texts, key = corpus.training_texts(), corpus.fingerprint()
base = prof.run(name)
run = replace(base, name=f"bench-{name}", tokens=steps * base.batch_size * base.model.context)
compiled = arm == "compiled"
shutil.rmtree(run_folder(run, [], tok, key, compile=compiled), ignore_errors=True)
torch._dynamo.reset()
t, c = time.time(), time.process_time()
res = train(run, texts, [], tok, key, progress=False, compile=compiled, fork=False)
wall, cpu = time.time() - t, time.process_time() - c
sha = hashlib.sha256((res.path / "model.safetensors").read_bytes()).hexdigest()
shutil.rmtree(res.path, ignore_errors=True)
print(jsonio.dumps({"arm": arm, "run": name, "steps": steps, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                  "weights_sha256": sha}))
'''


def one(arm: str, run: str, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as inductor:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": inductor}
        out = subprocess.run([sys.executable, "-c", ONE, arm, run, str(steps)], env=env, check=True,
                             capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="deep-10:300,deep-10:1200,wide-128:300",
                    help="run:steps pairs of the default lab, comma-separated")
    ap.add_argument("--repeat-compiled", type=int, default=2, help="compiled trainings per shape (>= 2)")
    args = ap.parse_args()
    rows = []
    for spec in args.runs.split(","):
        run, steps = spec.split(":")
        rows.append(one("eager", run, int(steps)))
        for _ in range(args.repeat_compiled):
            rows.append(one("compiled", run, int(steps)))
        print(jsonio.dumps(rows[-args.repeat_compiled - 1:]), flush=True)
    shapes = []
    for spec in args.runs.split(","):
        run, steps = spec.split(":")
        arms = [r for r in rows if r["run"] == run and r["steps"] == int(steps)]
        eager = next(r for r in arms if r["arm"] == "eager")
        comp = [r for r in arms if r["arm"] == "compiled"]
        shapes.append({"run": run, "steps": int(steps), "eager_wall_s": eager["wall_s"],
                       "compiled_wall_s": [r["wall_s"] for r in comp],
                       "speedup_wall": round(eager["wall_s"] / min(r["wall_s"] for r in comp), 2),
                       "compiled_identical": len({r["weights_sha256"] for r in comp}) == 1,
                       "compiled_equals_eager": comp[0]["weights_sha256"] == eager["weights_sha256"]})
    qualifies = (all(s["compiled_identical"] for s in shapes)
                 and all(s["speedup_wall"] >= 1.2 for s in shapes))
    record = {"what": "whole shortened trainings of default-lab runs, eager against compiled (inductor), "
                      "each in a fresh process on one torch thread with a fresh inductor cache",
              "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                       text=True).stdout.strip(),
              "load_average_at_end": os.getloadavg()[0], "arms": rows, "shapes": shapes,
              "rule": "adopt when two compiled trainings are bit-identical and compiled is >= 1.2x faster",
              "compile_qualifies": qualifies}
    jsonio.write(OUT, record)
    print(jsonio.dumps(shapes, indent=1))
    print("compile qualifies:", qualifies)


if __name__ == "__main__":
    main()
