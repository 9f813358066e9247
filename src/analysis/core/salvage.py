"""Recover a damaged query cache: every answer that can still be read, plus its backup.

``scripts/salvage_query_cache.py`` is the command; :func:`salvage` does the work.
The damaged file is never changed: it is moved aside to
``<file>.damaged-<time>``, and a new file at the original path receives

1. every row of the damaged file that sqlite can still read, found by reading
   the table in ranges of row ids and halving a range that fails until the
   unreadable rows are isolated;
2. every row of the rolling backup (``<file>.bak``, see
   :class:`~analysis.core.cache.QueryCache`) whose key was not read in step 1.

The new file then passes the cache's check on opening, and a re-run sends only
the requests whose answers were in neither.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from analysis.core.cache import QueryCache, backup_path, check_file

COLUMNS = "key, backend, model, kind, request, text, error, meta, created"
#: row ids read at once before a failing range is halved
CHUNK = 512


@dataclass
class SalvageReport:
    """What :func:`salvage` recovered."""

    path: Path
    damaged: Path
    read: int  # rows read from the damaged file
    unreadable: int  # row-id ranges of the damaged file that could not be read
    from_backup: int  # rows taken from the backup, missing from what was read
    total: int  # rows in the new file

    def __str__(self) -> str:
        return (f"{self.path}: {self.total:,} answers kept ({self.read:,} read from the damaged file, "
                f"{self.from_backup:,} more from its backup; {self.unreadable:,} unreadable row(s) "
                f"left behind). The damaged file is kept at {self.damaged}.")


def readable_rows(path: Path) -> tuple[list[tuple], int]:
    """The rows of ``path``'s answers table that sqlite can read, and how many row
    ids in its range could not be read (a file too damaged to open gives none)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return [], 0
    with closing(conn):
        try:
            lo, hi = conn.execute("SELECT MIN(rowid), MAX(rowid) FROM answers").fetchone()
        except sqlite3.DatabaseError:
            lo, hi = _rowid_bounds(conn)
        if lo is None:
            return [], 0
        rows: list[tuple] = []
        bad = 0
        for start in range(lo, hi + 1, CHUNK):
            bad += _read_range(conn, start, min(start + CHUNK - 1, hi), rows)
        return rows, bad


def _rowid_bounds(conn: sqlite3.Connection) -> tuple[int | None, int | None]:
    """A generous row-id range when the table cannot report its own (the file's
    page count bounds how many rows it can hold)."""
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    except sqlite3.DatabaseError:
        return None, None
    return 1, max(1, pages * 64)


def _read_range(conn: sqlite3.Connection, lo: int, hi: int, rows: list[tuple]) -> int:
    """Append the readable rows with row ids in ``[lo, hi]``; return how many row
    ids of the range were unreadable (halving the range on failure)."""
    try:
        rows += conn.execute(f"SELECT {COLUMNS} FROM answers WHERE rowid BETWEEN ? AND ?",
                             (lo, hi)).fetchall()
        return 0
    except sqlite3.DatabaseError:
        if lo == hi:
            return 1
        mid = (lo + hi) // 2
        return _read_range(conn, lo, mid, rows) + _read_range(conn, mid + 1, hi, rows)


def salvage(path: str | Path, backup: str | Path | None = None) -> SalvageReport:
    """Rebuild the query cache at ``path`` from what can be read of it and from its
    backup (default ``<path>.bak``); the damaged file is moved to
    ``<path>.damaged-<time>``. Returns what was recovered."""
    path = Path(path)
    backup = backup_path(path) if backup is None else Path(backup)
    if not path.exists() and not backup.exists():
        raise FileNotFoundError(f"neither the cache {path} nor its backup {backup} exists")
    rows, bad = readable_rows(path) if path.exists() else ([], 0)
    keys = {r[0] for r in rows}
    extra = []
    if backup.exists():
        check_file(backup)  # a damaged backup is reported, never merged
        with closing(sqlite3.connect(f"file:{backup}?mode=ro", uri=True)) as conn:
            extra = [r for r in conn.execute(f"SELECT {COLUMNS} FROM answers") if r[0] not in keys]
    new = path.with_name(path.name + ".salvaged")
    new.unlink(missing_ok=True)
    with QueryCache(new) as cache:  # the schema of today's cache
        cache.release()
    with closing(sqlite3.connect(new)) as conn:
        conn.executemany(f"INSERT OR REPLACE INTO answers ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                         [*rows, *extra])
        conn.commit()
        total = conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    check_file(new)
    damaged = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    if path.exists():
        path.replace(damaged)
        for suffix in ("-wal", "-shm"):  # the damaged file's journal goes with it
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.replace(damaged.with_name(damaged.name + suffix))
    new.replace(path)
    return SalvageReport(path, damaged, len(rows), bad, len(extra), total)
