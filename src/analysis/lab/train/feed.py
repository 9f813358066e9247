"""What the training loop needs besides the step: its batches, its partial-checkpoint
clock and its progress bar's loss, each made so that the host never waits for a GPU.

* **batches** (:func:`batches`): on the CPU, each step's rows are written into one
  preallocated batch that torch shares (:class:`HostBatches`, the lab's path since
  its first run). On a GPU, the rows of :data:`CHUNK_STEPS` steps at a time are
  written into pinned host memory and copied to the GPU without blocking, two chunks
  in turn, and the targets are made there (:class:`DeviceBatches`): the host queues
  the next steps while the GPU runs, instead of copying pageable memory every step.
  Both give the very same token ids;
* **checkpoints** (:class:`CheckpointClock`): every ``checkpoint_every`` steps when a
  run asks for it, else when :data:`CHECKPOINT_SECONDS` have passed since the last
  one, or more when writing takes longer than :data:`CHECKPOINT_SHARE` of the time (a
  checkpoint of the GPU lab's largest model is about 1.7 GB). When a checkpoint is
  written changes nothing a run trains on: it reads the weights and the RNG's state;
* **the loss on the progress bar** (:class:`LossShow`): every tenth step's loss is
  copied to the host without blocking and shown once the copy is done, so a run on a
  GPU never stops to read it.

torch is imported inside the functions that need it: it is heavy.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from analysis.lab.train.model import IGNORE
from analysis.lab.train.order import Rows

#: steps whose rows are copied to a GPU at once (64 steps of 64 rows of 512 tokens: 16 MB)
CHUNK_STEPS = 64
#: the shortest time between two partial checkpoints of a run, and the largest share of
#: the training time writing them may take (the interval grows to keep to it)
CHECKPOINT_SECONDS = 60.0
CHECKPOINT_SHARE = 0.05
#: steps between two losses shown on the progress bar
SHOW_EVERY = 10


class HostBatches:
    """This process's rows of each step, written into one preallocated batch and target
    buffer that torch shares (no allocation per step); for the CPU."""

    def __init__(self, rows: Rows, batch_size: int, context: int, lo: int, hi: int):
        import torch  # heavy: loaded only when a run trains

        self.rows = rows
        self.x_np = np.empty((batch_size, context), dtype=np.int64)
        self.y_np = np.full((batch_size, context), IGNORE, dtype=np.int64)
        self.x, self.y = torch.from_numpy(self.x_np)[lo:hi], torch.from_numpy(self.y_np)[lo:hi]

    def batch(self, step: int):
        """The input ids and targets of ``step`` (the same two tensors, refilled)."""
        self.rows.fill(step, step + 1, self.x_np)
        self.y_np[:, :-1] = self.x_np[:, 1:]
        return self.x, self.y


class DeviceBatches:
    """This process's rows of ``chunk`` steps at a time, on ``device``: written on the host
    into one of two (pinned, on CUDA) buffers, copied without blocking, the targets made
    on the device. A host buffer is rewritten only once its last copy is done."""

    def __init__(self, rows: Rows, batch_size: int, context: int, lo: int, hi: int, steps: int, device,
                 chunk: int = CHUNK_STEPS):
        import torch  # heavy: loaded only when a run trains

        self.rows, self.lo, self.hi, self.steps, self.chunk = rows, lo, hi, steps, chunk
        self.batch_size = batch_size
        self.cuda = torch.device(device).type == "cuda"
        shape = (chunk, hi - lo, context)
        self.full = np.empty((chunk * batch_size, context), dtype=np.int64)  # every row of the chunk's steps
        self.host = [torch.empty(shape, dtype=torch.int64, pin_memory=self.cuda) for _ in range(2)]
        self.x = [torch.empty(shape, dtype=torch.int64, device=device) for _ in range(2)]
        self.y = [torch.full(shape, IGNORE, dtype=torch.int64, device=device) for _ in range(2)]
        self.copied = [None, None]  # the CUDA event after each host buffer's last copy
        self.first = [-1, -1]  # the first step each buffer holds

    def batch(self, step: int):
        """The input ids and targets of ``step``, on the device."""
        first = step - step % self.chunk
        k = (step // self.chunk) % 2
        if self.first[k] != first:
            self._load(k, first)
        return self.x[k][step - first], self.y[k][step - first]

    def _load(self, k: int, first: int) -> None:
        import torch  # heavy: loaded only when a run trains

        stop = min(first + self.chunk, self.steps)
        n = stop - first
        if self.copied[k] is not None:
            self.copied[k].synchronize()  # the buffer's previous copy has left it
        full = self.rows.fill(first, stop, self.full[: n * self.batch_size])
        mine = full.reshape(n, self.batch_size, -1)[:, self.lo : self.hi]
        self.host[k][:n].copy_(torch.from_numpy(mine))
        self.x[k][:n].copy_(self.host[k][:n], non_blocking=self.cuda)
        self.y[k][:n, :, :-1] = self.x[k][:n, :, 1:]
        if self.cuda:
            self.copied[k] = torch.cuda.Event()
            self.copied[k].record()
        self.first[k] = first


def batches(rows: Rows, batch_size: int, context: int, lo: int, hi: int, steps: int, device):
    """The batches of a run on ``device``: :class:`HostBatches` on the CPU, else
    :class:`DeviceBatches`."""
    import torch  # heavy: loaded only when a run trains

    if torch.device(device).type == "cpu":
        return HostBatches(rows, batch_size, context, lo, hi)
    return DeviceBatches(rows, batch_size, context, lo, hi, steps, device)


class CheckpointClock:
    """When a run in training writes its partial checkpoint.

    Every ``every`` steps when given (before steps ``every``, ``2·every``, ...); else
    once ``seconds`` have passed since the last checkpoint (or the start), an interval
    that grows to ``write time / share`` when writing takes longer than ``share`` of it.
    ``clock`` is :func:`time.monotonic` (a test's own otherwise).
    """

    def __init__(self, every: int | None = None, seconds: float = CHECKPOINT_SECONDS,
                 share: float = CHECKPOINT_SHARE, clock: Callable[[], float] | None = None):
        self.every, self.seconds, self.share = every, seconds, share
        self.clock = time.monotonic if clock is None else clock
        self.interval = seconds
        self.last = self.clock()

    def due(self, next_step: int) -> bool:
        """Whether to write the checkpoint of the state before ``next_step`` now."""
        if self.every is not None:
            return next_step % self.every == 0
        return self.clock() - self.last >= self.interval

    def wrote(self, seconds: float) -> None:
        """A checkpoint was just written, in ``seconds``."""
        self.last = self.clock()
        self.interval = max(self.seconds, seconds / self.share)


class LossShow:
    """The progress bar ``bar`` (None: no bar) and the loss it shows: every
    :data:`SHOW_EVERY` steps, that step's loss, read from a copy made without blocking
    once the copy is done (on the CPU, at once)."""

    def __init__(self, bar, losses, every: int = SHOW_EVERY):
        self.bar, self.losses, self.every = bar, losses, every
        self.on_device = losses.device.type != "cpu"
        self.pending: list = []  # (step, host copy, its copy's CUDA event or None)

    def tick(self, step: int) -> None:
        """``step`` is trained: advance the bar, and show the latest loss copied by now."""
        if self.bar is None:
            return
        self.bar.update(1)
        if step % self.every == 0:
            self.pending.append((step, *self._host_copy(self.losses[step])))
        shown = None
        while self.pending and (self.pending[0][2] is None or self.pending[0][2].query()):
            shown = self.pending.pop(0)[1]
        if shown is not None:
            self.bar.set_postfix(loss=f"{float(shown):.3f}", refresh=False)

    def _host_copy(self, value):
        """A host copy of the scalar ``value`` and the event that marks it done (None: done)."""
        import torch  # heavy: loaded only when a run trains

        if not self.on_device:
            return value, None
        host = torch.empty((), dtype=value.dtype, pin_memory=True)
        host.copy_(value, non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        return host, done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
