"""The lab's index of trained runs: run name → checkpoint folder.

Training writes every finished run here, so ``load_model("lab:<run name>")``
finds it like any other model. The index lives in the artifact cache; a run
missing from it has not been trained on this machine yet.
"""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cache import cache_dir
from analysis.models.base import ModelError


def _index_file() -> Path:
    return cache_dir() / "lab" / "index.json"


def read_index() -> dict[str, str]:
    path = _index_file()
    return json.loads(path.read_text()) if path.exists() else {}


def register(run_name: str, path: str | Path) -> None:
    """Record that ``run_name`` was trained into ``path`` (written atomically)."""
    index = read_index()
    index[run_name] = str(path)
    target = _index_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(index, indent=1, sort_keys=True))
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
