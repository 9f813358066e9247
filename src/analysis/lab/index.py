"""The lab's index of trained runs: run name → checkpoint folder.

Training writes every finished run here, so ``load_model("lab:<run name>")``
finds it like any other model: importing this module (``analysis.lab`` imports
it) registers :func:`run_path` with the model layer as the resolver of ``lab:``
names. The index lives in the artifact cache; a run missing from it has not been
trained on this machine yet.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

from analysis.core import jsonio
from analysis.core.cache import cache_dir
from analysis.models import register_resolver
from analysis.models.base import ModelError


def _index_file() -> Path:
    return cache_dir() / "lab" / "index.json"


def read_index() -> dict[str, str]:
    path = _index_file()
    return json.loads(path.read_text()) if path.exists() else {}


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """An exclusive lock on the index (``index.lock`` beside it), held across a
    read-modify-write, so that two processes registering runs at once (two chapters
    building the lab) never lose each other's entries."""
    lock = _index_file().with_name("index.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def register(run_name: str, path: str | Path) -> None:
    """Record that ``run_name`` was trained into ``path``: under the index's lock,
    written to a file of this process's own and moved into place (atomic), so a
    reader sees the old index or the new one, never a partial one."""
    with _locked():
        index = read_index()
        index[run_name] = str(path)
        target = _index_file()
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_text(jsonio.dumps(index, indent=1, sort_keys=True))
        tmp.replace(target)


def run_path(run_name: str) -> Path:
    """Checkpoint folder of a trained lab run, or a ModelError listing the known runs."""
    index = read_index()
    if run_name not in index or not Path(index[run_name]).is_dir():
        known = sorted(k for k, v in index.items() if Path(v).is_dir())
        raise ModelError(
            f"no trained lab run {run_name!r}; trained runs: {known or 'none yet'}. "
            "Execute the lab page (notebooks/lab.md) to train them."
        )
    return Path(index[run_name])


register_resolver("lab", run_path)
