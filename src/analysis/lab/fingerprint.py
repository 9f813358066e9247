"""Run fingerprints: what a trained run's weights and final losses were, in a few values.

A fingerprint says whether a rebuilt lab is the lab the committed results came from:
``weights_sha256`` is equal only for bit-identical weights, and the final losses
show how far apart two runs that are not identical ended. The weights hash is
taken over the tensors themselves in a canonical order, not over the checkpoint
file (whose header, metadata and tensor order may vary between library
versions), so it is the same on every machine that holds the same weights.
Used by :class:`analysis.lab.ladder.LabBuild` and :mod:`analysis.lab.archive`.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from analysis.lab.train.runs import RunResult

#: training-loss values averaged into a run's final loss (``LabBuild.runs_table``'s "final loss")
FINAL_LOSS_STEPS = 10
#: the columns of a fingerprint, in order
FINGERPRINT_FIELDS = ("weights_sha256", "final_loss", "final_loss_last", "steps")


def weights_sha256(tensors: Mapping[str, Any]) -> str:
    """sha256 of a set of named tensors, independent of their order, device and dtype.

    Parameters
    ----------
    tensors : mapping of str to tensor
        Parameter name to tensor (a ``state_dict()``, or the tensors of a
        safetensors file); anything ``numpy.asarray`` takes also works.

    Returns
    -------
    str
        The hex digest of, for each name in sorted order, the line
        ``"<name> <shape, comma-separated>\\n"`` (UTF-8) followed by the tensor's
        values as little-endian float32 in C order. Equal for equal names, shapes
        and float32 values, whatever the insertion order of the mapping.
    """
    digest = hashlib.sha256()
    for name in sorted(tensors):
        values = _float32(tensors[name])
        digest.update(f"{name} {','.join(map(str, values.shape))}\n".encode())
        digest.update(values.tobytes(order="C"))
    return digest.hexdigest()


def _float32(tensor: Any) -> np.ndarray:
    if hasattr(tensor, "detach"):  # a torch tensor: to the CPU, as float32 (numpy has no bfloat16)
        import torch  # heavy: loaded only when a torch tensor is hashed

        tensor = tensor.detach().to("cpu", torch.float32).contiguous().numpy()
    return np.ascontiguousarray(np.asarray(tensor), dtype="<f4")


def checkpoint_sha256(path: str | os.PathLike) -> str:
    """:func:`weights_sha256` of the tensors a checkpoint folder stores in its
    ``*.safetensors`` files (tied weights, such as the lab's output embedding, are
    stored once, under the input embedding's name)."""
    from safetensors.torch import load_file  # heavy: loaded only when a checkpoint is hashed

    files = sorted(Path(path).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors weights in {path}")
    tensors: dict[str, Any] = {}
    for file in files:
        tensors.update(load_file(file))
    return weights_sha256(tensors)


def final_loss(curve: pd.DataFrame) -> float:
    """Mean training loss of the last :data:`FINAL_LOSS_STEPS` steps of a run's curve."""
    return float(curve["loss"].tail(FINAL_LOSS_STEPS).mean())


def run_fingerprint(result: RunResult) -> dict:
    """The fingerprint of one trained run.

    Parameters
    ----------
    result : RunResult
        A finished run (:func:`analysis.lab.train.train` or ``load_run``).

    Returns
    -------
    dict
        ``weights_sha256`` (:func:`checkpoint_sha256` of the run's folder),
        ``final_loss`` (:func:`final_loss`: the mean of the last 10 training
        losses, the figure ``LabBuild.runs_table`` reports), ``final_loss_last``
        (the last step's loss) and ``steps`` (the steps of the curve). Plain
        Python values, ready for JSON.
    """
    curve = result.curve
    return {
        "weights_sha256": checkpoint_sha256(result.path),
        "final_loss": final_loss(curve),
        "final_loss_last": float(curve["loss"].iloc[-1]),
        "steps": int(len(curve)),
    }


def run_fingerprints(results: Mapping[str, RunResult]) -> dict[str, dict]:
    """:func:`run_fingerprint` of each run of ``results`` (run name → result), in its
    order; runs sharing a checkpoint folder share one fingerprint, hashed once."""
    by_path: dict[Path, dict] = {}
    out = {}
    for run, res in results.items():
        if res.path not in by_path:
            by_path[res.path] = run_fingerprint(res)
        out[run] = dict(by_path[res.path])
    return out


def compare_fingerprints(
    committed: Mapping[str, dict], rebuilt: Mapping[str, dict], tol: float
) -> pd.DataFrame:
    """Run by run, whether a rebuilt lab matches the committed fingerprints.

    Parameters
    ----------
    committed, rebuilt : mapping of run name to fingerprint
        Fingerprints (:func:`run_fingerprint`) keyed by run name.
    tol : float
        The largest absolute difference of final losses (nats) still called a match.

    Returns
    -------
    pandas.DataFrame
        One row per run of either mapping (``committed``'s order, then the runs only
        ``rebuilt`` has): ``run``, ``weights_identical`` (equal weight hashes),
        ``final_loss_committed``, ``final_loss_rebuilt``, ``loss_diff`` (their
        absolute difference) and ``within_tol`` (``loss_diff <= tol``). A run
        missing on one side has NaN losses and False in both boolean columns.

    Raises
    ------
    ValueError
        If ``tol`` is negative or not a number.
    """
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or math.isnan(tol) or tol < 0:
        raise ValueError(f"tol must be a non-negative number of nats, got {tol!r}")
    rows = []
    for run in [*committed, *(r for r in rebuilt if r not in committed)]:
        old, new = committed.get(run), rebuilt.get(run)
        both = old is not None and new is not None
        a = float(old["final_loss"]) if old is not None else math.nan
        b = float(new["final_loss"]) if new is not None else math.nan
        diff = abs(a - b) if both else math.nan
        rows.append(
            {
                "run": run,
                "weights_identical": bool(both and old["weights_sha256"] == new["weights_sha256"]),
                "final_loss_committed": a,
                "final_loss_rebuilt": b,
                "loss_diff": diff,
                "within_tol": bool(both and diff <= tol),
            }
        )
    columns = [
        "run",
        "weights_identical",
        "final_loss_committed",
        "final_loss_rebuilt",
        "loss_diff",
        "within_tol",
    ]
    return pd.DataFrame(rows, columns=columns)
