"""Build the lab from the command line: in one process, or data-parallel under torchrun.

::

    python -m analysis.lab.build --profile smoke
    python -m analysis.lab.build --profile default --family ladder
    python -m analysis.lab.build --profile default --runs wide-32 pert-s1x
    torchrun --standalone --nproc_per_node=4 -m analysis.lab.build --profile default

It calls :func:`analysis.lab.ladder.build_lab`, which trains the runs not yet in
the artifact cache and registers them for ``load_model("lab:...")``, exactly as
the lab page does, then prints one line per run. Under torchrun (or
``accelerate launch``) every process runs this module; torch's launcher sets
``WORLD_SIZE``, ``RANK`` and ``LOCAL_RANK``, and :mod:`analysis.lab.train` does
the rest: each process trains its share of every batch, and only the first
writes the runs and prints. An unknown profile, run or family, or a batch that
does not split over the processes, fails before any work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from analysis.lab.config import LabConfigError
from analysis.lab.ladder import PROFILES, build_lab, lab_placement
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

    try:
        place = lab_placement(args.profile, args.device)
        lab = build_lab(args.profile, progress=not args.no_progress, family=args.family, runs=args.runs,
                        device=args.device)
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
