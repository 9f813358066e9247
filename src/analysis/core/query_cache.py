"""The persistent query cache: one sqlite file shared by every model backend, keyed
by backend, model, request kind, prompt and generation settings, and written as
each answer arrives (:class:`QueryCache`); with what keeps a paid answer from being
lost or paid twice: the file checked on opening (:func:`check_file`), a rolling
backup (:func:`backup_path`), the journal (:mod:`analysis.core.journal`), claims
between processes, and one shared connection per file per process.

It lives in the artifact cache (:func:`analysis.core.artifacts.cache_dir`) unless
:data:`QUERY_CACHE_ENV` moves it. Used by every chapter through :mod:`analysis.models`;
imported, like the rest of the caches, from :mod:`analysis.core.cache`.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.core.artifacts import cache_dir, own_tmp, stable_hash
from analysis.core.journal import Journal, journal_path

#: the logger keeps the name it had when the query cache lived in analysis.core.cache
log = logging.getLogger("analysis.core.cache")

#: overrides the query cache's file alone (benchmarks use it for a cold run)
QUERY_CACHE_ENV = "MEMBOOK_QUERY_CACHE"


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer: its text, or the error that prevented one, and when it
    was stored (seconds since the epoch)."""

    text: str | None
    error: str | None
    meta: dict
    created: float | None = None


class CacheError(RuntimeError):
    """The query cache's file is damaged or empty; the message names the file, what
    was found, and how to recover (``scripts/salvage_query_cache.py``)."""


#: a claim not refreshed for this long is abandoned and may be taken over (a claim
#: whose owner runs on this host is abandoned at once when its process is gone)
CLAIM_LEASE = 600.0
#: seconds between two looks at answers another process is fetching
CLAIM_POLL = 0.25
#: seconds between two rolling backups while answers are being written
BACKUP_EVERY = 300.0
_HOST = socket.gethostname()


class QueryCache:
    """Persistent sqlite store of model answers, shared by every backend.

    Each answer is committed as soon as it is written, so a run killed midway
    keeps everything it had received. Errors are stored too (a failed request
    is an error, never an answer); :meth:`get` returns them so callers can
    decide to retry.

    Four protections keep a paid answer from being lost or paid twice:

    * **checked on opening**: an empty file, or one that fails sqlite's
      ``quick_check``, stops the run with a :class:`CacheError` naming the file and
      the way to recover, instead of being silently treated as a new cache;
    * **a rolling backup**: ``<file>.bak``, written with sqlite's online backup
      when the last user in a process closes the file and at most every
      :data:`BACKUP_EVERY` seconds while answers arrive, and kept only if it passes
      the same check (``scripts/salvage_query_cache.py`` merges it with whatever
      can still be read from a damaged file);
    * **the journal**: ``<file>.journal.jsonl``, every row stored, once more, as a line
      of JSON written after each commit (:mod:`analysis.core.journal`), from
      which the salvage rebuilds what neither the file nor its backup holds;
    * **claims**: before sending requests, a process claims them (:meth:`claim`);
      another process that needs the same answers waits for them
      (:meth:`wait_for`) instead of sending them again.
    """

    _SCHEMA = """
        CREATE TABLE IF NOT EXISTS answers (
            key TEXT PRIMARY KEY,
            backend TEXT, model TEXT, kind TEXT,
            request TEXT,
            text TEXT, error TEXT, meta TEXT,
            created REAL
        );
        CREATE TABLE IF NOT EXISTS claims (
            key TEXT PRIMARY KEY, owner TEXT, host TEXT, pid INTEGER, expires REAL
        );
    """

    def __init__(self, path: str | os.PathLike | None = None):
        default = os.environ.get(QUERY_CACHE_ENV) or cache_dir() / "queries.sqlite"
        self.path = Path(path or default)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._entry = _acquire(self.path, self._SCHEMA)
        self._conn, self._lock = self._entry.conn, self._entry.lock
        self._closed = False

    @property
    def owner(self) -> str:
        """This process's name on its claims: host, process id and a random tag."""
        return self._entry.owner

    @staticmethod
    def key(backend: str, model: str, kind: str, request: Mapping[str, Any]) -> str:
        """Cache key of one request: backend, model, kind and the full request."""
        return stable_hash(
            {"backend": backend, "model": model, "kind": kind, "request": dict(request)},
            length=64,
        )

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedAnswer]:
        """Stored answers for those of ``keys`` that are present."""
        self._check_open()
        with self._lock, _named(self.path):
            return self._rows(keys)

    def _rows(self, keys: Iterable[str]) -> dict[str, CachedAnswer]:
        """The stored rows of ``keys`` (the caller holds the lock)."""
        keys = list(keys)
        found: dict[str, CachedAnswer] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, text, error, meta, created FROM answers WHERE key IN ({marks})", chunk
            ).fetchall()
            for key, text, error, meta, created in rows:
                found[key] = CachedAnswer(text, error, json.loads(meta or "{}"), created)
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
        """Store one answer (or error), release this process's claim on it and
        commit at once; then append the row to the journal."""
        self._check_open()
        now = time.time()
        row = (key, backend, model, kind, json.dumps(dict(request), sort_keys=True, ensure_ascii=False),
               text, error, json.dumps(dict(meta or {}), default=str), now)
        with self._lock, _named(self.path):
            self._conn.execute("INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?,?,?,?,?)", row)
            self._conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))
            # every answer stored renews the lease of this process's other claims
            self._conn.execute("UPDATE claims SET expires = ? WHERE owner = ?",
                               (now + CLAIM_LEASE, self.owner))
            self._conn.commit()
            self._entry.journal.append(row)  # the same row, once more, in the journal
            self._entry.written = True
        if now - self._entry.backed_up > BACKUP_EVERY:
            self.backup()

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
        with self._lock, _named(self.path):
            return self._conn.execute(sql, args).fetchone()[0]

    # -- claims: one process pays for a request, the others wait for its answer ----
    def claim(self, seen: Mapping[str, float | None]) -> tuple[list[str], dict[str, CachedAnswer], list[str]]:
        """Claim the keys of ``seen`` (each with the ``created`` time of the stored
        row the caller saw, or None) before sending them, in one transaction.

        Returns ``(mine, answered, theirs)``: the keys this process now holds and
        must send; those answered since the caller looked (by another process); and
        those another live process holds (wait for them with :meth:`wait_for`).
        An abandoned claim (its process gone, or its lease run out) is taken over.
        """
        self._check_open()
        mine, answered, theirs = [], {}, []
        now = time.time()
        with self._lock, _named(self.path):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                fresh = self._answered_since(seen)
                for key in seen:
                    if key in fresh:
                        answered[key] = fresh[key]
                        continue
                    row = self._conn.execute("SELECT owner, host, pid, expires FROM claims WHERE key = ?",
                                             (key,)).fetchone()
                    if row is not None and row[0] != self.owner and _alive(*row[1:]):
                        theirs.append(key)
                        continue
                    self._conn.execute("INSERT OR REPLACE INTO claims VALUES (?,?,?,?,?)",
                                       (key, self.owner, _HOST, os.getpid(), now + CLAIM_LEASE))
                    mine.append(key)
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise
        return mine, answered, theirs

    def wait_for(self, seen: Mapping[str, float | None]) -> tuple[dict[str, CachedAnswer], list[str]]:
        """Wait until at least one of the keys of ``seen``, claimed by other
        processes, is settled. Returns ``(answered, orphaned)``: the answers stored
        since the caller looked, and the keys whose claim was given up or
        abandoned with no answer (the caller claims and sends those itself)."""
        while True:
            self._check_open()
            with self._lock, _named(self.path):
                answered = self._answered_since(seen)
                claimed = {}
                for key in seen:
                    row = self._conn.execute("SELECT host, pid, expires FROM claims WHERE key = ?",
                                             (key,)).fetchone()
                    claimed[key] = row is not None and _alive(*row)
            orphaned = [k for k in seen if k not in answered and not claimed[k]]
            if answered or orphaned:
                return answered, orphaned
            time.sleep(CLAIM_POLL)

    def release(self, keys: Iterable[str] | None = None) -> None:
        """Give up this process's claims on ``keys`` (all of them when None)."""
        if self._closed:
            return
        with self._lock, _named(self.path):
            if keys is None:
                self._conn.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
            else:
                self._conn.executemany("DELETE FROM claims WHERE key = ? AND owner = ?",
                                       [(k, self.owner) for k in keys])
            self._conn.commit()

    def _answered_since(self, seen: Mapping[str, float | None]) -> dict[str, CachedAnswer]:
        """The stored rows of ``seen``'s keys that are newer than what the caller saw."""
        return {key: row for key, row in self._rows(seen).items()
                if seen[key] is None or (row.created or 0) > seen[key]}

    # -- the rolling backup --------------------------------------------------------
    @property
    def backup_path(self) -> Path:
        """Where the rolling backup of this cache lives: ``<file>.bak``."""
        return backup_path(self.path)

    def backup(self) -> bool:
        """Write the rolling backup now; return whether it was written (a copy that
        fails the integrity check never replaces the last good backup)."""
        self._check_open()
        with self._lock:
            return _backup(self._entry)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the query cache {self.path} is closed")

    def close(self) -> None:
        """Let go of this cache's share of the file's connection; the connection
        closes when the last :class:`QueryCache` on the file in this process closes
        (or at exit), after the rolling backup when answers were written."""
        if not self._closed:
            self._closed = True
            _release(self.path)

    def __enter__(self) -> QueryCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def backup_path(path: str | os.PathLike) -> Path:
    """The rolling backup of the query cache at ``path``."""
    return Path(str(path) + ".bak")


def _alive(host: str, pid: int, expires: float) -> bool:
    """Whether a claim's owner may still answer it: on this host, its process
    exists; elsewhere, its lease has not run out."""
    if time.time() > expires:
        return False
    if host != _HOST:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


RECOVER = "scripts/salvage_query_cache.py"


def _recovery(path: Path) -> str:
    bak = backup_path(path)
    has = f"its backup {bak} exists" if bak.exists() else f"no backup ({bak}) exists"
    journal = journal_path(path)
    has += f", its journal {journal} " + ("exists" if journal.exists() else "does not")
    return (f"To recover, run `python {RECOVER} {path}`: it keeps the damaged file, copies every "
            f"readable answer into a new file at the same path, and adds the answers of the backup "
            f"and of the journal ({has}). To start an empty cache instead, move the file away "
            "(every answer is then asked again).")


class _named:
    """Turn a database error inside the block into a :class:`CacheError` naming the file."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is not None and _damage(exc):
            raise CacheError(f"the query cache {self.path} is damaged ({exc}). "
                             f"{_recovery(self.path)}") from exc
        return False


def _damage(exc: BaseException) -> bool:
    """A database error that means a damaged file (not a lock or a constraint)."""
    return (isinstance(exc, sqlite3.DatabaseError)
            and not isinstance(exc, (sqlite3.OperationalError, sqlite3.IntegrityError))) or (
        isinstance(exc, sqlite3.OperationalError) and "malformed" in str(exc))


def check_file(path: Path) -> None:
    """Raise :class:`CacheError` when ``path`` holds an empty file where a cache
    was expected, or a file that fails sqlite's ``quick_check``. A missing file is
    fine (a new cache)."""
    if not path.exists():
        return
    size = path.stat().st_size
    if size == 0:
        raise CacheError(f"the query cache {path} is an empty file (0 bytes), where a cache of stored "
                         "answers was expected (a full disk or a copy cut short leaves this). It is not "
                         "treated as a new cache, since every answer would then be paid for again. "
                         f"{_recovery(path)}")
    problems = []
    try:
        with closing(sqlite3.connect(path, timeout=60)) as conn:
            problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        if not _damage(exc):
            raise
        problems = [str(exc)]
    if problems != ["ok"]:
        shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        raise CacheError(f"the query cache {path} ({size:,} bytes) fails its integrity check: {shown}. "
                         f"{_recovery(path)}")


# One sqlite connection per cache file per process, shared by every QueryCache (and
# so by every Model) on that file: a chapter that loads 25 models opens one. Keyed
# by process id as well, so a forked child opens its own instead of sharing its
# parent's.
@dataclass
class _Entry:
    path: Path
    conn: sqlite3.Connection
    lock: threading.Lock
    owner: str
    users: int = 0
    written: bool = False
    backed_up: float = 0.0
    journal: Journal | None = None

    def __post_init__(self):
        self.journal = Journal(journal_path(self.path))


_CONNECTIONS: dict[tuple[int, str], _Entry] = {}
_REGISTRY_LOCK = threading.Lock()


def _conn_key(path: Path) -> tuple[int, str]:
    return (os.getpid(), str(Path(path).resolve()))


def _acquire(path: Path, schema: str) -> _Entry:
    key = _conn_key(path)
    with _REGISTRY_LOCK:
        entry = _CONNECTIONS.get(key)
        if entry is None:
            check_file(path)
            with _named(path):
                conn = sqlite3.connect(path, check_same_thread=False, timeout=60)
                conn.execute("PRAGMA journal_mode=WAL")
                # WAL + NORMAL survives a killed process (only an OS crash can lose the last commits)
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(schema)
                conn.commit()
            owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
            entry = _CONNECTIONS[key] = _Entry(path, conn, threading.Lock(), owner, backed_up=time.time())
        entry.users += 1
        return entry


def _backup(entry: _Entry) -> bool:
    """Copy the cache to its rolling backup through a checked temporary file."""
    target = backup_path(entry.path)
    # a name of this process's own: two processes closing the same cache at once each
    # write their copy, and the last rename wins (a shared name lost one's file)
    tmp = own_tmp(target)
    try:
        with closing(sqlite3.connect(tmp)) as copy:
            entry.conn.backup(copy)
        check_file(tmp)
    except (sqlite3.DatabaseError, CacheError) as exc:
        tmp.unlink(missing_ok=True)
        log.warning("the backup of the query cache %s failed (%s); the last backup is kept", entry.path, exc)
        return False
    tmp.replace(target)
    entry.written, entry.backed_up = False, time.time()
    return True


def _close(entry: _Entry) -> None:
    with entry.lock:
        try:
            entry.conn.execute("DELETE FROM claims WHERE owner = ?", (entry.owner,))
            entry.conn.commit()
            if entry.written:
                _backup(entry)
        except sqlite3.DatabaseError as exc:  # closing must not hide the error that ended the run
            log.warning("closing the query cache %s: %s", entry.path, exc)
        entry.conn.close()
        entry.journal.close()


def _release(path: Path) -> None:
    key = _conn_key(path)
    with _REGISTRY_LOCK:
        entry = _CONNECTIONS.get(key)
        if entry is None:
            return
        entry.users -= 1
        if entry.users <= 0:
            _close(entry)
            del _CONNECTIONS[key]


def open_connections() -> int:
    """How many query-cache connections this process holds (one per cache file)."""
    with _REGISTRY_LOCK:
        return sum(1 for pid, _ in _CONNECTIONS if pid == os.getpid())


@atexit.register
def close_connections() -> None:
    """Close every query-cache connection of this process (run at exit), releasing
    its claims and writing the rolling backup of a cache it wrote to."""
    with _REGISTRY_LOCK:
        for key in [k for k in _CONNECTIONS if k[0] == os.getpid()]:
            _close(_CONNECTIONS.pop(key))
