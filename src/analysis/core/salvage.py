"""Recover a damaged query cache: every answer that can still be read, then its
backup, then its journal.

``scripts/salvage_query_cache.py`` is the command; :func:`salvage` does the work.
The damaged file is never changed: it is moved aside to
``<file>.damaged-<time>``, and a new file at the original path receives

1. every row of the damaged file that sqlite can still read, found by reading
   the table in ranges of row ids and halving a range that fails until the
   unreadable rows are isolated;
2. every row of the rolling backup (``<file>.bak``, see
   :class:`~analysis.core.cache.QueryCache`) whose key was not read in step 1,
   read the same way (a damaged backup gives what can be read of it);
3. every row of the answer journal (``<file>.journal.jsonl``,
   :mod:`analysis.core.journal`) whose key neither gave, each key's last record.

The report says what each source gave and what it could not read. A file sqlite
cannot read at all (its header or its table's pages gone, as in a file cut in half)
has an *unknown* number of unreadable rows, never 0. The new file then passes the
cache's check on opening, and a re-run sends only the requests whose answers were
in none of the three.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from analysis.core.cache import QueryCache, backup_path, check_file
from analysis.core.journal import journal_path, read_journal

COLUMNS = "key, backend, model, kind, request, text, error, meta, created"
#: row ids read at once before a failing range is halved
CHUNK = 512
#: the sources, in the order they are read
SOURCES = ("database", "backup", "journal")


@dataclass
class SalvageReport:
    """What :func:`salvage` recovered."""

    path: Path
    damaged: Path
    read: int  # rows read from the damaged file
    unreadable: int | None  # rows of the damaged file that could not be read (None: unknown)
    from_backup: int  # rows taken from the backup, missing from what was read
    total: int  # rows in the new file
    from_journal: int = 0  # rows taken from the journal, missing from both
    backup_unreadable: int | None = 0
    journal_unreadable: int = 0
    missing: tuple[str, ...] = ()  # the sources that do not exist

    def kept_line(self) -> str:
        """``kept: N answers (database a, backup b, journal c)``."""
        return (f"kept: {self.total:,} answers (database {self.read:,}, backup {self.from_backup:,}, "
                f"journal {self.from_journal:,})")

    def unreadable_line(self) -> str:
        """``unreadable: database …, backup …, journal …``: unknown where a file could
        not be read at all, "no file" where a source does not exist."""
        def say(source, n, what):
            if source in self.missing:
                return f"{source} no file"
            return f"{source} unknown (the file cannot be read)" if n is None else f"{source} {n:,} {what}"

        return "unreadable: " + ", ".join([say("database", self.unreadable, "row(s)"),
                                           say("backup", self.backup_unreadable, "row(s)"),
                                           say("journal", self.journal_unreadable, "record(s)")])

    def __str__(self) -> str:
        return (f"{self.kept_line()}\n{self.unreadable_line()}\n"
                f"{self.path}: {self.total:,} answers kept ({self.read:,} read from the damaged file, "
                f"{self.from_backup:,} more from its backup, {self.from_journal:,} more from its journal). "
                f"The damaged file is kept at {self.damaged}.")


def readable_rows(path: Path) -> tuple[list[tuple], int | None]:
    """The rows of ``path``'s answers table that sqlite can read, and how many row
    ids in its range could not be read: None (unknown) when the table cannot tell
    its range (a file too damaged to open or to read its table's bounds)."""
    sides = {s: path.with_name(path.name + s).exists() for s in ("-wal", "-shm")}
    try:
        return _readable_rows(path)
    finally:  # opening a file in WAL mode leaves these beside it: remove the ones it made
        for suffix, existed in sides.items():
            if not existed:
                path.with_name(path.name + suffix).unlink(missing_ok=True)


def _readable_rows(path: Path) -> tuple[list[tuple], int | None]:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return [], None
    with closing(conn):
        known = True
        try:
            lo, hi = conn.execute("SELECT MIN(rowid), MAX(rowid) FROM answers").fetchone()
        except sqlite3.DatabaseError:
            lo, hi = _rowid_bounds(conn)
            known = False  # a guessed range: its unreadable row ids are not rows
        if lo is None:
            return [], (0 if known else None)
        rows: list[tuple] = []
        bad = 0
        for start in range(lo, hi + 1, CHUNK):
            bad += _read_range(conn, start, min(start + CHUNK - 1, hi), rows)
        return rows, (bad if known else None)


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


def salvage(path: str | Path, backup: str | Path | None = None, journal: str | Path | None = None
            ) -> SalvageReport:
    """Rebuild the query cache at ``path`` from what can be read of it, then of its
    backup (default ``<path>.bak``), then of its journal (default
    ``<path>.journal.jsonl``); the damaged file is moved to ``<path>.damaged-<time>``.
    Returns what each source gave."""
    path = Path(path)
    backup = backup_path(path) if backup is None else Path(backup)
    journal = journal_path(path) if journal is None else Path(journal)
    missing = tuple(name for name, p in zip(SOURCES, (path, backup, journal)) if not p.exists())
    if len(missing) == len(SOURCES):
        raise FileNotFoundError(f"none of the cache {path}, its backup {backup} and its journal {journal} "
                                "exists")
    rows, bad = readable_rows(path) if path.exists() else ([], 0)
    keys = {r[0] for r in rows}
    extra, bak_bad = [], 0
    if backup.exists():
        from_bak, bak_bad = readable_rows(backup)
        extra = [r for r in from_bak if r[0] not in keys]
        keys |= {r[0] for r in extra}
    logged, log_bad = read_journal(journal) if journal.exists() else ({}, 0)
    late = [r for k, r in logged.items() if k not in keys]
    new = path.with_name(path.name + ".salvaged")
    new.unlink(missing_ok=True)
    with QueryCache(new) as cache:  # the schema of today's cache
        cache.release()
    with closing(sqlite3.connect(new)) as conn:
        conn.executemany(f"INSERT OR REPLACE INTO answers ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                         [*rows, *extra, *late])
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
    for suffix in ("-wal", "-shm"):  # the new file's, closed and checkpointed
        new.with_name(new.name + suffix).unlink(missing_ok=True)
    new.replace(path)
    return SalvageReport(path, damaged, len(rows), bad, len(extra), total, from_journal=len(late),
                         backup_unreadable=bak_bad, journal_unreadable=log_bad, missing=missing)
