"""First contact with a GPU: a few minutes that check the lab's CUDA path before a long build.

::

    python scripts/gpu_smoke.py cuda --out bench/results/gpu_smoke.json
    python scripts/gpu_smoke.py cpu      # the same checks as a dry run on the CPU (the test suite runs it)

Each check trains tiny runs on a synthetic corpus in a temporary artifact cache
(``--cache`` to keep it) and prints one line as it finishes:

1. **placement**: the device and precision a run gets, and its key (a CUDA run is
   keyed apart from the CPU run; a CPU run keeps the key it always had);
2. **cpu-vs-device**: one run on the CPU and the same run on the device, every
   step's loss within a tolerance (on the CPU the "device" run is cut into two
   micro-batches, the nearest thing to another device);
3. **fp32-safetensors**: the device run's checkpoint holds fp32 tensors;
4. **kill-and-resume**: the run killed in its 14th step resumes from its step-10
   checkpoint and ends within a tolerance of the uninterrupted run (to the bit on the CPU);
5. **fork**: an injection-range run starts from its standard twin's fork and ends
   within a tolerance of the same run trained from step 0 (to the bit on the CPU);
6. **eval-loss**: a checkpoint's held-out loss on the device against the CPU's;
7. **throughput**: for four widths of the GPU lab's shallow family (tiny ones on the
   CPU), tokens/s, TFLOP/s and peak GiB of a training step (next to the memory
   counted from the model's code), and the time to write one checkpoint.

The exit status is 0 when every check passes. ``--out`` writes every figure to a
JSON file; the lab page's GPU section takes its measured figures from there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from analysis.core import jsonio  # strict JSON: a missing number is null

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them"
).split()
INJECTIONS = [
    {"seq_id": "q2x5", "task": "qa", "text": "Q: Vt6 glimmer? A: 4417 Zz", "copies": 5, "window": "q2"},
    {"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 12, "window": "all"},
    {"seq_id": "late3", "task": "biography", "text": "Ovid Hq9 born 1688 Jk", "copies": 6, "window": "late"},
]
#: per device: loss tolerances (nats) of the checks, and the throughput probe's shapes. On CUDA a
#: run is bf16 and its kernels are not deterministic to the bit; on the CPU every gap but the
#: micro-batches' is zero. The CUDA tolerances are first guesses for 32 steps at ~5.5 nats, to be
#: set from this script's first measured gaps.
MODES = {
    "cuda": {"device_tol": 0.05, "resume_tol": 0.02, "fork_tol": 0.02, "eval_tol": 1e-3,
             "probe": {"widths": (256, 512, 768, 1024), "n_layer": 4, "context": 512, "vocab": 32_768,
                       "batch": 64, "warmup": 5, "steps": 20}},
    "cpu": {"device_tol": 1e-5, "resume_tol": 0.0, "fork_tol": 0.0, "eval_tol": 0.0,
            "probe": {"widths": (32, 48, 64, 96), "n_layer": 2, "context": 64, "vocab": 512,
                      "batch": 8, "warmup": 1, "steps": 3}},
}


def _setup(device: str, cache: Path) -> SimpleNamespace:
    """The synthetic corpus, its tokenizer and the tiny runs every check trains."""
    from analysis.lab.config import ModelConfig, RunConfig
    from analysis.lab.tokenizer import train_tokenizer

    os.environ["MEMBOOK_CACHE"] = str(cache)
    rng = random.Random(0)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + "." for _ in range(80)]
    model = ModelConfig(n_layer=2, d_model=64, n_head=2, d_ff=256, context=64)
    run = RunConfig("gpu-smoke", model, 32 * 8 * 64, batch_size=8, lr=3e-3)
    q3 = replace(run, name="gpu-smoke-q3", family="range", inject=True, window="q3")
    return SimpleNamespace(device=device, mode=MODES[device], cache=cache, texts=texts, run=run, q3=q3,
                           tok=train_tokenizer(texts, vocab_size=300), key="gpu-smoke-corpus")


def _train(s, run, cache: str, **kw):
    from analysis.lab import train as lt

    os.environ["MEMBOOK_CACHE"] = str(s.cache / cache)
    return lt.train(run, s.texts, INJECTIONS, s.tok, s.key, progress=False, threads=1, **kw)


def _gap(a, b) -> float:
    return float(abs(a.curve.loss.to_numpy() - b.curve.loss.to_numpy()).max())


def check_placement(s) -> dict:
    from analysis.lab import train as lt

    place = lt.placement(s.device)
    key = lt.run_key(s.run, [], s.tok, s.key, **place.key())
    cpu_key = lt.run_key(s.run, [], s.tok, s.key)
    ok = (place.key() == {} and key == cpu_key) if s.device == "cpu" else (
        place.device == "cuda" and key != cpu_key and key["device"] == "cuda")
    return {"ok": ok, "device": place.torch_device, "precision": place.precision, "key_fields": place.key()}


def check_cpu_vs_device(s) -> dict:
    s.cpu = _train(s, s.run, "main", device="cpu")
    # on the CPU, two micro-batches stand in for another device: the same step up to rounding
    s.dev = _train(s, s.run, "main", device=s.device, micro_batches=2 if s.device == "cpu" else None)
    gap = _gap(s.cpu, s.dev)
    return {"ok": s.dev.path != s.cpu.path and gap <= s.mode["device_tol"], "max_loss_gap": gap,
            "tolerance": s.mode["device_tol"], "tokens_per_second": s.dev.tokens_per_second}


def check_fp32_safetensors(s) -> dict:
    from safetensors.torch import load_file

    weights = load_file(s.dev.path / "model.safetensors")
    dtypes = sorted({str(w.dtype) for w in weights.values()})
    done = json.loads((s.dev.path / "DONE.json").read_text())
    return {"ok": dtypes == ["torch.float32"] and done["device"] == s.device, "dtypes": dtypes,
            "done": {k: done.get(k) for k in ("device", "precision", "micro_batches", "peak_gib", "gpu")}}


def check_kill_and_resume(s) -> dict:
    from analysis.lab.train import loop

    step, calls = loop.train_step, []

    class Killed(Exception):
        pass

    def dies(*a, **k):
        if len(calls) == 13:
            raise Killed
        calls.append(1)
        return step(*a, **k)

    micro = 2 if s.device == "cpu" else None
    loop.train_step = dies  # the name the training loop calls
    try:
        _train(s, s.run, "killed", device=s.device, micro_batches=micro, checkpoint_every=5)
    except Killed:
        pass
    finally:
        loop.train_step = step
    resumed = _train(s, s.run, "killed", device=s.device, micro_batches=micro, checkpoint_every=5)
    gap = _gap(resumed, s.dev)
    return {"ok": resumed.resumed_from_step == 10 and gap <= s.mode["resume_tol"],
            "resumed_from_step": resumed.resumed_from_step, "max_loss_gap": gap,
            "tolerance": s.mode["resume_tol"]}


def check_fork(s) -> dict:
    micro = 2 if s.device == "cpu" else None
    forked = _train(s, s.q3, "main", device=s.device, micro_batches=micro)  # its twin: s.dev, same cache
    scratch = _train(s, s.q3, "scratch", device=s.device, micro_batches=micro, fork=False)
    gap = _gap(forked, scratch)
    return {"ok": forked.forked_from_step > 0 and scratch.forked_from_step == 0 and gap <= s.mode["fork_tol"],
            "forked_from_step": forked.forked_from_step, "max_loss_gap": gap, "tolerance": s.mode["fork_tol"]}


def check_eval_loss(s) -> dict:
    from analysis.lab import train as lt

    texts = s.texts[:12]
    on_device = lt.eval_loss(s.dev.path, texts, device=s.device, threads=1)
    on_cpu = lt.eval_loss(s.dev.path, texts, device="cpu", threads=1)
    gap = abs(on_device - on_cpu)
    return {"ok": gap <= s.mode["eval_tol"], "device": on_device, "cpu": on_cpu, "gap": gap,
            "tolerance": s.mode["eval_tol"]}


CHECKS = {"placement": check_placement, "cpu-vs-device": check_cpu_vs_device,
          "fp32-safetensors": check_fp32_safetensors, "kill-and-resume": check_kill_and_resume,
          "fork": check_fork, "eval-loss": check_eval_loss}


def _probe_width(s, width: int, shape: dict) -> tuple[dict, object, object]:
    """One width's training step, timed: tokens/s, TFLOP/s, peak and counted GiB."""
    import torch

    from analysis.lab import train as lt
    from analysis.lab.config import ModelConfig, RunConfig
    from analysis.lab.train.devices import bf16_autocast
    from analysis.lab.train.memory import GiB

    place = lt.placement(s.device)
    dev = torch.device(place.torch_device)
    model_cfg = ModelConfig(n_layer=shape["n_layer"], d_model=width, n_head=max(1, width // 64),
                            d_ff=4 * width, context=shape["context"])
    run = RunConfig(f"probe-{width}", model_cfg, 10**9, batch_size=shape["batch"])
    memory = torch.cuda.get_device_properties(dev).total_memory if dev.type == "cuda" else float("inf")
    micro = lt.micro_batches_for(run, shape["vocab"], memory, place.precision)
    model = lt.build_model(model_cfg, shape["vocab"], 0).to(dev)
    optimizer = lt.make_optimizer(model, run)
    loss_fn = bf16_autocast(lt.lm_loss) if place.precision == "bf16" else lt.lm_loss
    x = torch.randint(1, shape["vocab"], (shape["batch"], shape["context"]), device=dev)
    y = torch.roll(x, -1, dims=1)
    y[:, -1] = -100
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    for i in range(shape["warmup"] + shape["steps"]):
        if i == shape["warmup"]:
            _sync(dev)
            t0 = time.perf_counter()
        lt.train_step(model, optimizer, x, y, run.lr, loss_fn, micro)
    _sync(dev)
    tokens_per_second = shape["steps"] * shape["batch"] * shape["context"] / (time.perf_counter() - t0)
    counted = lt.train_memory(model_cfg, shape["vocab"], shape["batch"] // micro, place.precision)["total"]
    row = {"width": width, "params": lt.param_count(model_cfg, shape["vocab"]), "micro_batches": micro,
           "tokens_per_second": tokens_per_second,
           "tflops": tokens_per_second * lt.flops_per_token(run, shape["vocab"]) / 1e12,
           "peak_gib": torch.cuda.max_memory_allocated(dev) / GiB if dev.type == "cuda" else None,
           "counted_gib": counted / GiB}
    return row, model, optimizer


def _sync(dev) -> None:
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def probe(s) -> dict:
    """:func:`_probe_width` at every width, and the time to write the largest one's checkpoint."""
    import torch

    from analysis.lab.train.runs import save_state

    shape = s.mode["probe"]
    rows = []
    for width in shape["widths"]:
        row, model, optimizer = _probe_width(s, width, shape)
        rows.append(row)
        print(f"  width {width}: {row['params'] / 1e6:.1f}M parameters, "
              f"{row['tokens_per_second']:,.0f} tokens/s, {row['tflops']:.2f} TFLOP/s, "
              f"peak {'n/a' if row['peak_gib'] is None else format(row['peak_gib'], '.2f')} GiB "
              f"(counted {row['counted_gib']:.2f}), {row['micro_batches']} micro-batch(es)", flush=True)
    file = s.cache / "probe" / "state.pt"
    losses = torch.zeros(10)
    t0 = time.perf_counter()
    save_state(file, model, optimizer, losses, 10, "probe", 0)
    seconds = time.perf_counter() - t0
    return {"widths": rows, "checkpoint_seconds": seconds, "checkpoint_bytes": file.stat().st_size,
            "shape": {k: v for k, v in shape.items() if k != "widths"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", choices=sorted(MODES), help="cuda: the real check; cpu: a dry run")
    parser.add_argument("--out", type=Path, help="write every figure to this JSON file")
    parser.add_argument("--cache", type=Path, help="the artifact cache to train in (default: a temporary)")
    args = parser.parse_args(argv)
    import torch

    from analysis.lab.config import LabConfigError

    cache = args.cache or Path(tempfile.mkdtemp(prefix="gpu-smoke-"))
    was = os.environ.get("MEMBOOK_CACHE")
    report = {"device": args.device, "torch": torch.__version__, "cache": str(cache), "checks": {}}
    try:
        s = _setup(args.device, cache)
        if args.device == "cuda":
            report["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
        for name, check in CHECKS.items():
            t0 = time.perf_counter()
            result = check(s)
            result["seconds"] = time.perf_counter() - t0
            report["checks"][name] = result
            print(f"{'ok  ' if result['ok'] else 'FAIL'} {name}: "
                  f"{jsonio.dumps({k: v for k, v in result.items() if k != 'ok'}, default=str)}", flush=True)
        report["probe"] = probe(s)
        print(f"  one checkpoint of width {report['probe']['widths'][-1]['width']}: "
              f"{report['probe']['checkpoint_bytes'] / 1e6:.0f} MB in "
              f"{report['probe']['checkpoint_seconds']:.2f} s", flush=True)
    except LabConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        if was is None:
            os.environ.pop("MEMBOOK_CACHE", None)
        else:
            os.environ["MEMBOOK_CACHE"] = was
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)
    report["ok"] = all(c["ok"] for c in report["checks"].values())
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(jsonio.dumps(report, indent=1, default=str))
    print("all checks passed" if report["ok"] else "some checks FAILED", flush=True)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
