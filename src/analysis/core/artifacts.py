"""The artifact cache: a folder (:func:`cache_dir`) holding derived files such as
converted model checkpoints and downloaded data, each under a key made of its
inputs (:func:`artifact_path`, :func:`stable_hash`), so a stale artifact is never
reused; and data frames computed once into it (:func:`cached_frame`).

The query cache (:mod:`analysis.core.query_cache`) and memoized computations
(:mod:`analysis.core.memo`) live in it too; :mod:`analysis.core.cache` names all three.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core.paths import REPO_ROOT

CACHE_ENV = "MEMBOOK_CACHE"
#: where converted models live, when set (default: the artifact cache)
MODEL_CACHE_ENV = "MEMBOOK_MODEL_CACHE"
#: the artifact kinds that :data:`MODEL_CACHE_ENV` moves
MODEL_KINDS = ("models", "gguf")


def cache_dir() -> Path:
    """Root of the artifact cache: ``$MEMBOOK_CACHE``, else ``<repo>/.cache``."""
    root = Path(os.environ.get(CACHE_ENV) or REPO_ROOT / ".cache")
    root.mkdir(parents=True, exist_ok=True)
    return root


def stable_hash(obj: Any, length: int = 16) -> str:
    """Hex digest of a JSON-serialisable object, independent of dict order."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def artifact_path(kind: str, key: Mapping[str, Any]) -> Path:
    """Folder for an artifact of ``kind`` whose inputs are ``key``.

    The folder name is a hash of ``key``; any change to an input gives a new
    folder, so a cached artifact is reused only if every input is unchanged.
    Converted models (kinds in :data:`MODEL_KINDS`) go under ``$MEMBOOK_MODEL_CACHE``
    when it is set: the test suite shares them across its otherwise isolated caches.
    """
    models = os.environ.get(MODEL_CACHE_ENV) if kind in MODEL_KINDS else None
    path = (Path(models) if models else cache_dir()) / kind / stable_hash(dict(key))
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def cached_frame(kind: str, key: Mapping[str, Any], compute) -> pd.DataFrame:
    """Return ``compute()``'s data frame, cached under ``artifact_path(kind, key)``.

    ``key`` must hold every input of the computation (parameters, input hashes,
    code version), so a change to any of them recomputes.
    """
    path = artifact_path(kind, key).with_suffix(".pkl")
    if path.exists():
        return pd.read_pickle(path)
    frame = compute()
    tmp = own_tmp(path)
    try:
        frame.to_pickle(tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return frame


def own_tmp(path: Path) -> Path:
    """A temporary name beside ``path`` that no other process or thread uses."""
    return path.with_name(f"{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
