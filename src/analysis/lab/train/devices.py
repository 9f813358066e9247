"""Devices, precision and processes: where a run trains (:func:`placement`).

* **device**: ``train(device=...)``, else ``$MEMBOOK_LAB_DEVICE`` (``cpu`` or
  ``cuda``), else the default the caller gives: the lab profile's device for
  :func:`analysis.lab.ladder.build_lab` (``cpu`` for the ``smoke`` and ``default``
  labs, whose committed results were trained there; ``cuda`` for the ``gpu`` lab),
  ``cpu`` otherwise. A GPU on the machine is never chosen unasked: a run trained
  there would be another run (:func:`analysis.lab.train.run_key`), and a chapter's
  committed results would no longer reproduce. On the CPU a run trains in fp32.
  On CUDA the model and each batch go to the GPU (``cuda:<LOCAL_RANK>`` under
  torchrun) and the forward pass and loss run under ``torch.autocast("cuda",
  dtype=torch.bfloat16)`` where the GPU has native bf16 (fp32 otherwise); the
  master weights, their gradients and the AdamW state stay fp32, and no loss
  scaling is needed;
* **processes**: launched by ``torchrun`` (``WORLD_SIZE`` > 1), every process
  joins the process group (``nccl`` on CUDA, ``gloo`` on the CPU,
  :func:`init_distributed`) and trains its share of every batch;
  :func:`mean_over_processes` averages a per-process loss, :func:`barrier`
  waits for the others;
* **files**: checkpoints hold CPU tensors whatever the device (:func:`to_cpu`).

torch is imported inside the functions that need it: it is heavy, and a run's
key and data order do without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from analysis.lab.config import LabConfigError, RunConfig


def default_threads() -> int:
    """CPU cores available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@contextmanager
def cpu_threads(threads: int | None = None) -> Iterator[None]:
    """Within the block, torch uses ``threads`` CPU threads (default: every core available)."""
    import torch  # heavy: loaded only when a run trains

    was = torch.get_num_threads()
    torch.set_num_threads(threads or default_threads())
    try:
        yield
    finally:
        torch.set_num_threads(was)


#: the devices a run trains on: ``train(device=...)``, else ``$MEMBOOK_LAB_DEVICE``, else the
#: caller's default (the lab profile's device; ``cpu`` when none is given)
DEVICES = ("cpu", "cuda")
DEVICE_ENV = "MEMBOOK_LAB_DEVICE"
PRECISIONS = ("fp32", "bf16")
#: how every run cached before devices existed was trained: a run key names only what differs
SINGLE_CPU = {"device": "cpu", "precision": "fp32", "world_size": 1}


@dataclass(frozen=True)
class Placement:
    """Where this process trains: the device, the precision of the forward pass and loss,
    and its place among torchrun's processes (``world_size`` 1, ``rank`` 0 without torchrun)."""

    device: str = "cpu"
    precision: str = "fp32"
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    local_world_size: int = 1

    @property
    def torch_device(self) -> str:
        """``cpu``, or ``cuda:<local rank>``: one GPU per process."""
        return f"cuda:{self.local_rank}" if self.device == "cuda" else "cpu"

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def key(self) -> dict:
        """The run-key fields of this placement: those that differ from a single fp32 CPU process."""
        here = {"device": self.device, "precision": self.precision, "world_size": self.world_size}
        return {k: v for k, v in here.items() if v != SINGLE_CPU[k]}

    def threads(self) -> int:
        """Default CPU threads of a process training on the CPU: one. A matmul's sums can
        depend on how many threads split them (measured on an AVX-512 Xeon: the same run
        trained on two threads and on one ends with other weights), so a run trains on one
        thread alone as it does side by side (:mod:`analysis.lab.workers`), and its weights
        do not depend on the machine's cores. On a GPU the threads only feed it: the
        cores, shared by the processes on this machine."""
        if self.device == "cpu":
            return 1
        return max(1, default_threads() // self.local_world_size)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise LabConfigError(f"${name} must be an integer (torchrun sets it), got {raw!r}") from None


def placement(device: str | None = None, default: str = "cpu") -> Placement:
    """Where this process trains.

    ``device`` (``"cpu"`` or ``"cuda"``), else ``$MEMBOOK_LAB_DEVICE``, else
    ``default`` (the lab profile's device, :attr:`analysis.lab.profiles.LabProfile.device`):
    whether torch sees a GPU never decides. On CUDA the forward pass runs in bf16
    autocast when the GPU supports it (fp32 otherwise); on the CPU in fp32.
    torchrun's ``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` give
    the processes; a CUDA process trains on ``cuda:<LOCAL_RANK>``.

    Raises
    ------
    LabConfigError
        A device other than ``cpu`` or ``cuda``, ``cuda`` without a GPU, or a
        malformed torchrun environment.
    """
    import torch  # heavy: loaded only when a run trains

    source = "device"
    if device is None and os.environ.get(DEVICE_ENV, "").strip():
        device, source = os.environ[DEVICE_ENV].strip().lower(), f"${DEVICE_ENV}"
    if device is None:
        device, source = default, "the profile's device"
    if device not in DEVICES:
        raise LabConfigError(f"{source} must be one of {', '.join(DEVICES)}; got {device!r}")
    world, rank = _env_int("WORLD_SIZE", 1), _env_int("RANK", 0)
    local, local_world = _env_int("LOCAL_RANK", 0), _env_int("LOCAL_WORLD_SIZE", world)
    if world < 1 or not 0 <= rank < world or not 0 <= local < max(local_world, 1):
        raise LabConfigError(f"a malformed torchrun environment: WORLD_SIZE={world}, RANK={rank}, "
                             f"LOCAL_RANK={local}, LOCAL_WORLD_SIZE={local_world}")
    precision = "fp32"
    if device == "cuda":
        if not torch.cuda.is_available() or local >= torch.cuda.device_count():
            raise LabConfigError(f"{source} is 'cuda', but torch {torch.__version__} sees "
                                 f"{torch.cuda.device_count()} CUDA devices (this is LOCAL_RANK {local}); "
                                 f"device='cpu' (or {DEVICE_ENV}=cpu) trains on the CPU")
        # native bf16 only (compute capability 8.0 on): emulated bf16 would be slower than fp32
        precision = "bf16" if torch.cuda.is_bf16_supported(including_emulation=False) else "fp32"
    return Placement(device, precision, world, rank, local, max(local_world, 1))


def check_batch(run: RunConfig, place: Placement) -> None:
    """Raise :class:`LabConfigError` unless ``run``'s batch splits evenly over the processes."""
    if run.batch_size % place.world_size:
        raise LabConfigError(
            f"run {run.name!r}: batch_size {run.batch_size} does not split evenly over "
            f"{place.world_size} processes (WORLD_SIZE); every process trains an equal share of each "
            f"batch, so launch a number of processes that divides {run.batch_size}")


#: how long a process of the group waits for the others at a barrier or a collective before
#: it fails: the longest wait is a cold build's, every other process waiting while the first
#: builds the corpus, its tokenizer and its token stream (the GPU lab's: 74 s, 24 s and 23 s
#: on a loaded two-core machine, after the phrase selection, minutes more when its cache is
#: cold) and later writes a run's folder and forks; torch's default, 10 minutes under NCCL,
#: leaves a slow host no margin
PROCESS_GROUP_TIMEOUT_S = 2 * 3600


def init_distributed(place: Placement) -> None:
    """Join torchrun's process group (``nccl`` on CUDA, ``gloo`` on the CPU), unless this
    process is alone or has joined already; its timeout is :data:`PROCESS_GROUP_TIMEOUT_S`."""
    import torch  # heavy: loaded only when a run trains
    import torch.distributed as dist  # heavy: loaded only when a run trains

    if not place.distributed:
        return
    if dist.is_initialized():
        if dist.get_world_size() != place.world_size:
            raise LabConfigError(f"the process group has {dist.get_world_size()} processes, "
                                 f"WORLD_SIZE says {place.world_size}")
        return
    if place.device == "cuda":
        torch.cuda.set_device(place.local_rank)
    dist.init_process_group("nccl" if place.device == "cuda" else "gloo",
                            timeout=timedelta(seconds=PROCESS_GROUP_TIMEOUT_S))


def barrier(place: Placement) -> None:
    """Wait for every process of the group (nothing to wait for when alone)."""
    import torch.distributed as dist  # heavy: loaded only when a run trains

    if place.distributed:
        dist.barrier(device_ids=[place.local_rank] if place.device == "cuda" else None)


def mean_over_processes(value, place: Placement):
    """The mean of a per-process scalar tensor over the processes (itself when alone)."""
    import torch.distributed as dist  # heavy: loaded only when a run trains

    if not place.distributed:
        return value
    dist.all_reduce(value, op=dist.ReduceOp.SUM)  # gloo has no AVG
    return value / place.world_size


def bf16_autocast(loss_fn):
    """``loss_fn`` with its forward pass and loss under CUDA bf16 autocast (the backward
    runs outside it, as autocast wants; the weights and their gradients stay fp32)."""
    import torch  # heavy: loaded only when a run trains

    def loss_bf16(model, input_ids, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_fn(model, input_ids, targets)

    return loss_bf16


def to_cpu(obj):
    """``obj`` (a state dict, nested) with every tensor on the CPU: checkpoints are the
    same files whatever device trained them."""
    import torch  # heavy: loaded only when a run trains

    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj

