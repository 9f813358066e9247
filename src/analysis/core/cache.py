"""Content-addressed artifact cache and the persistent query cache.

Two caches make re-runs cheap and interrupted runs resumable:

* the **artifact cache**, a folder (``cache_dir()``) holding derived files such as
  converted model checkpoints and downloaded data, each under a key made of its
  inputs, so a stale artifact is never reused;
* the **query cache**, one sqlite file shared by every model backend, keyed by
  backend, model, request kind, prompt and generation settings, and written as
  each answer arrives.

Used by every chapter through :mod:`analysis.models` and :mod:`analysis.core.data`.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core.paths import REPO_ROOT

CACHE_ENV = "MEMBOOK_CACHE"
#: where converted models live, when set (default: the artifact cache)
MODEL_CACHE_ENV = "MEMBOOK_MODEL_CACHE"
#: the artifact kinds that :data:`MODEL_CACHE_ENV` moves
MODEL_KINDS = ("models", "gguf")
#: overrides the query cache's file alone (benchmarks use it for a cold run)
QUERY_CACHE_ENV = "MEMBOOK_QUERY_CACHE"


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


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer: its text, or the error that prevented one."""

    text: str | None
    error: str | None
    meta: dict


class QueryCache:
    """Persistent sqlite store of model answers, shared by every backend.

    Each answer is committed as soon as it is written, so a run killed midway
    keeps everything it had received. Errors are stored too (a failed request
    is an error, never an answer); :meth:`get` returns them so callers can
    decide to retry.
    """

    _SCHEMA = """
        CREATE TABLE IF NOT EXISTS answers (
            key TEXT PRIMARY KEY,
            backend TEXT, model TEXT, kind TEXT,
            request TEXT,
            text TEXT, error TEXT, meta TEXT,
            created REAL
        )
    """

    def __init__(self, path: str | os.PathLike | None = None):
        default = os.environ.get(QUERY_CACHE_ENV) or cache_dir() / "queries.sqlite"
        self.path = Path(path or default)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn, self._lock = _acquire(self.path, self._SCHEMA)
        self._closed = False

    @staticmethod
    def key(backend: str, model: str, kind: str, request: Mapping[str, Any]) -> str:
        """Cache key of one request: backend, model, kind and the full request."""
        return stable_hash(
            {"backend": backend, "model": model, "kind": kind, "request": dict(request)},
            length=64,
        )

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedAnswer]:
        """Stored answers for those of ``keys`` that are present."""
        keys = list(keys)
        found: dict[str, CachedAnswer] = {}
        self._check_open()
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, text, error, meta FROM answers WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, text, error, meta in rows:
                    found[key] = CachedAnswer(text, error, json.loads(meta or "{}"))
        return found

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        return self.get_many([key]).get(key)

    def put(
        self,
        key: str,
        *,
        backend: str,
        model: str,
        kind: str,
        request: Mapping[str, Any],
        text: str | None,
        error: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Store one answer (or error) and commit at once."""
        self._check_open()
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    key,
                    backend,
                    model,
                    kind,
                    json.dumps(dict(request), sort_keys=True, ensure_ascii=False),
                    text,
                    error,
                    json.dumps(dict(meta or {}), default=str),
                    time.time(),
                ),
            )
            self._conn.commit()

    def count(self, model: str | None = None, errors: bool | None = None) -> int:
        """Number of stored rows, optionally for one model and/or only errors."""
        sql, args = "SELECT COUNT(*) FROM answers WHERE 1=1", []
        if model is not None:
            sql += " AND model = ?"
            args.append(model)
        self._check_open()
        if errors is True:
            sql += " AND error IS NOT NULL"
        elif errors is False:
            sql += " AND error IS NULL"
        with self._lock:
            return self._conn.execute(sql, args).fetchone()[0]

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the query cache {self.path} is closed")

    def close(self) -> None:
        """Let go of this cache's share of the file's connection; the connection
        closes when the last :class:`QueryCache` on the file in this process closes
        (or at exit)."""
        if not self._closed:
            self._closed = True
            _release(self.path)

    def __enter__(self) -> QueryCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# One sqlite connection per cache file per process, shared by every QueryCache (and
# so by every Model) on that file: a chapter that loads 25 models opens one. Keyed
# by process id as well, so a forked child opens its own instead of sharing its
# parent's. Each entry: [connection, lock, number of open QueryCache objects].
_CONNECTIONS: dict[tuple[int, str], list] = {}
_REGISTRY_LOCK = threading.Lock()


def _conn_key(path: Path) -> tuple[int, str]:
    return (os.getpid(), str(Path(path).resolve()))


def _acquire(path: Path, schema: str) -> tuple[sqlite3.Connection, threading.Lock]:
    key = _conn_key(path)
    with _REGISTRY_LOCK:
        entry = _CONNECTIONS.get(key)
        if entry is None:
            conn = sqlite3.connect(path, check_same_thread=False, timeout=60)
            conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL survives a killed process (only an OS crash can lose the last commits)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(schema)
            conn.commit()
            entry = _CONNECTIONS[key] = [conn, threading.Lock(), 0]
        entry[2] += 1
        return entry[0], entry[1]


def _release(path: Path) -> None:
    key = _conn_key(path)
    with _REGISTRY_LOCK:
        entry = _CONNECTIONS.get(key)
        if entry is None:
            return
        entry[2] -= 1
        if entry[2] <= 0:
            with entry[1]:
                entry[0].close()
            del _CONNECTIONS[key]


def open_connections() -> int:
    """How many query-cache connections this process holds (one per cache file)."""
    with _REGISTRY_LOCK:
        return sum(1 for pid, _ in _CONNECTIONS if pid == os.getpid())


@atexit.register
def close_connections() -> None:
    """Close every query-cache connection of this process (run at exit)."""
    with _REGISTRY_LOCK:
        for key in [k for k in _CONNECTIONS if k[0] == os.getpid()]:
            conn, lock, _ = _CONNECTIONS.pop(key)
            with lock:
                conn.close()


def cached_frame(kind: str, key: Mapping[str, Any], compute) -> pd.DataFrame:
    """Return ``compute()``'s data frame, cached under ``artifact_path(kind, key)``.

    ``key`` must hold every input of the computation (parameters, input hashes,
    code version), so a change to any of them recomputes.
    """
    path = artifact_path(kind, key).with_suffix(".pkl")
    if path.exists():
        return pd.read_pickle(path)
    frame = compute()
    tmp = path.with_suffix(".tmp")
    frame.to_pickle(tmp)
    tmp.replace(path)
    return frame
