"""Build the lab from the command line: in one process, or data-parallel under torchrun.

::

    python -m analysis.lab.build --profile smoke
    python -m analysis.lab.build --profile default --family ladder
    python -m analysis.lab.build --profile default --runs wide-56 pert-s1x
    torchrun --standalone --nproc_per_node=4 -m analysis.lab.build --profile default

    # one run per GPU: the corpus once, then a shard of the runs on each of 8 GPUs
    python -m analysis.lab.build --profile gpu --prepare
    for i in 0 1 2 3 4 5 6 7; do
        CUDA_VISIBLE_DEVICES=$i python -m analysis.lab.build --profile gpu --shard $i/8 --no-progress &
    done; wait

It calls :func:`analysis.lab.ladder.build_lab`, which trains the runs not yet in
the artifact cache and registers them for ``load_model("lab:...")``, exactly as
the lab page does, then prints one line per run. Under torchrun (or
``accelerate launch``) every process runs this module; torch's launcher sets
``WORLD_SIZE``, ``RANK`` and ``LOCAL_RANK``, and :mod:`analysis.lab.train` does
the rest: each process trains its share of every batch, and only the first
writes the runs and prints. An unknown profile, run or family, or a batch that
does not split over the processes, fails before any work.

Data parallelism pays for large models; the GPU lab's small ones keep a GPU busy
alone. ``--shard I/N`` trains the I-th of N shares of the runs
(:func:`analysis.lab.ladder.shard_runs`: the runs others fork from first, the costs
balanced), in one process on one GPU; a run whose standard twin is in another shard
waits for it to finish and forks from it. ``--prepare`` builds the corpus, the
tokenizer and the token stream only, so that the shards then read them in seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from analysis.lab.config import LabConfigError
from analysis.lab.ladder import build_lab, lab_placement, prepare_lab, shard_runs
from analysis.lab.profiles import PROFILES
from analysis.lab.train import DEVICE_ENV, DEVICES


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; exits with a usage message on an unknown profile, run or family."""
    parser = argparse.ArgumentParser(
        prog="python -m analysis.lab.build",
        description="Train the lab's runs (or load them from the cache): in one process, or "
                    "data-parallel under torchrun --standalone --nproc_per_node=N -m analysis.lab.build.")
    parser.add_argument("--profile", default="default", choices=sorted(PROFILES),
                        help="the lab profile (default: %(default)s)")
    parser.add_argument("--runs", nargs="+", metavar="NAME", help="only these runs of the profile")
    parser.add_argument("--family", metavar="PREFIX",
                        help="only the runs whose family starts with PREFIX (such as ladder)")
    parser.add_argument("--device", choices=DEVICES,
                        help=f"where to train (default: ${DEVICE_ENV}, else the profile's device: cpu for "
                             "smoke and default, whose results were trained there, cuda for gpu)")
    parser.add_argument("--shard", metavar="I/N", type=_shard,
                        help="train only the I-th of N shares of the runs (0 <= I < N), one process a GPU")
    parser.add_argument("--prepare", action="store_true",
                        help="build the corpus, tokenizer and token stream only, training nothing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    prof = PROFILES[args.profile]
    names = [r.name for r in prof.runs]
    unknown = [n for n in args.runs or () if n not in names]
    if unknown:
        parser.error(f"no run {', '.join(map(repr, unknown))} in profile {args.profile!r}; "
                     f"its runs: {', '.join(names)}")
    chosen = [prof.run(n) for n in args.runs] if args.runs else list(prof.runs)
    if args.family is not None and not any(r.family.startswith(args.family) for r in chosen):
        families = sorted({r.family for r in chosen})
        parser.error(f"no run of family {args.family!r} among the chosen runs; "
                     f"families: {', '.join(families)}")
    return args


def _shard(text: str) -> tuple[int, int]:
    """``"I/N"`` as ``(I, N)``; argparse reports the error."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be I/N, two integers such as 0/8, got {text!r}") from None
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"must be I/N with 0 <= I < N, got {text!r}")
    return i, n


def shard_of(args: argparse.Namespace) -> list[str] | None:
    """The runs this process builds: ``--runs`` (None: every run); with ``--shard``, those
    of its shard that ``--runs`` and ``--family`` choose, in the order it trains them."""
    if args.shard is None:
        return args.runs
    i, n = args.shard
    prof = PROFILES[args.profile]
    wanted = {r.name for r in prof.runs if (not args.runs or r.name in args.runs)
              and (args.family is None or r.family.startswith(args.family))}
    return [name for name in shard_runs(args.profile, n)[i] if name in wanted]


def summary(name: str, result) -> str:
    """One line about a built run: trained or loaded, size, final loss, speed, folder."""
    how = "trained" if result.trained else "cached"
    if result.forked_from_step:
        how += f" (forked at step {result.forked_from_step})"
    elif result.resumed_from_step:
        how += f" (resumed at step {result.resumed_from_step})"
    loss = float(result.curve["loss"].tail(10).mean())
    return (f"{name}: {how}, {result.n_params:,} parameters, final loss {loss:.3f}, "
            f"{result.tokens_per_second:,.0f} tokens/s, {result.path}")


def main(argv: Sequence[str] | None = None) -> int:
    """Build the lab the command line asks for; print one line per run (first process only).
    Returns the exit status: 0, or 2 on a bad configuration."""
    args = parse_args(argv)
    import torch.distributed as dist  # heavy: loaded once the command line is valid

    if args.prepare:
        prepare_lab(args.profile)
        print(f"lab {args.profile!r}: corpus, tokenizer and token stream ready")
        return 0
    runs = shard_of(args)
    if runs == []:
        print(f"lab {args.profile!r}: shard {args.shard[0]}/{args.shard[1]} has none of the chosen runs")
        return 0
    try:
        place = lab_placement(args.profile, args.device)
        lab = build_lab(args.profile, progress=not args.no_progress, family=args.family, runs=runs,
                        device=args.device, wait_for_twins=args.shard is not None)
    except LabConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    if place.rank == 0:
        procs = f"{place.world_size} processes" if place.distributed else "1 process"
        print(f"lab {args.profile!r}: {len(lab.results)} runs on {place.device} ({place.precision}, {procs}) "
              f"in {lab.seconds:.0f} s")
        for name, result in lab.results.items():
            print(summary(name, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
