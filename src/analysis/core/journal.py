"""The query cache's answer journal: every stored answer, once more, as a line of JSON.

:class:`~analysis.core.cache.QueryCache` appends each answer (or error) it stores to
``<file>.journal.jsonl`` beside the database, one strict-JSON record per line with
every column of the row (its full key, the request and meta exactly as stored),
written right after the database's commit. It keeps the database's rhythm: the
cache commits each answer to its WAL without an fsync (``synchronous=NORMAL``: a
killed process loses nothing, an OS crash may lose the last commits), and the
journal writes each record to the OS at once, so a killed process loses nothing,
and fsyncs it at most every :data:`SYNC_EVERY` seconds and when the cache closes. An
fsync per answer costs about 5 ms on this project's disk, 50 s per 10,000 answers
(``scripts/bench_cache_journal.py``). The sqlite file stays the
index the book reads; the journal exists so that the database can be rebuilt when
it and its backup are damaged or gone (:func:`analysis.core.salvage.salvage`).

A record cut short by a killed writer loses that record only: a writer that finds
the journal not ending in a newline ends the cut line before appending, and a reader
skips what it cannot parse (and recovers a whole record glued after a cut one).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from analysis.core import jsonio

#: the columns of the cache's ``answers`` table, in order: one record's fields
FIELDS = ("key", "backend", "model", "kind", "request", "text", "error", "meta", "created")
SUFFIX = ".journal.jsonl"
#: the most seconds between two fsyncs of the journal while answers arrive (0: every answer)
SYNC_EVERY = 1.0
_START = '{"key": '  # how every record begins (its first field, as jsonio.dumps writes it)


def journal_path(path: str | os.PathLike) -> Path:
    """The journal of the query cache at ``path``: ``<file>.journal.jsonl``."""
    return Path(str(path) + SUFFIX)


class Journal:
    """Appends rows to one journal file (opened on the first row, closed by :meth:`close`)."""

    def __init__(self, path: Path, sync_every: float | None = None):
        self.path = Path(path)
        self.sync_every = SYNC_EVERY if sync_every is None else sync_every
        self._fd: int | None = None
        self._synced = 0.0

    def append(self, row: tuple) -> None:
        """Write one row (the values of :data:`FIELDS`) as a line, handed to the OS at
        once; fsync the journal when :attr:`sync_every` seconds have passed since the last."""
        line = (jsonio.dumps(dict(zip(FIELDS, row, strict=True)), ensure_ascii=False) + "\n").encode()
        try:
            if self._fd is None:
                self._fd = self._open()
            _write_all(self._fd, line)
            if time.monotonic() - self._synced >= self.sync_every:
                self.sync()
        except OSError as exc:
            raise OSError(exc.errno, f"the query cache's journal {self.path} could not be written: "
                                     f"{exc.strerror}") from exc

    def _open(self) -> int:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        if size:
            with open(self.path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":  # a line cut by a killed writer: end it
                    _write_all(fd, b"\n")
        return fd

    def sync(self) -> None:
        """fsync what was written (nothing to do before the first row)."""
        if self._fd is not None:
            os.fsync(self._fd)
            self._synced = time.monotonic()

    def close(self) -> None:
        """fsync and close the file."""
        if self._fd is not None:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = None


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def read_journal(path: str | os.PathLike) -> tuple[dict[str, tuple], int]:
    """The rows of the journal at ``path`` by key (a key's last record wins), and how
    many records could not be read (a line cut mid-record, or noise)."""
    rows: dict[str, tuple] = {}
    bad = 0
    decoder = json.JSONDecoder()
    with open(path, "rb") as handle:
        for raw in handle:
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            try:
                records, lost = [json.loads(line)], 0
            except ValueError:
                records, lost = _pieces(line, decoder)
            bad += lost
            for record in records:
                row = _row(record)
                if row is None:
                    bad += 1
                else:
                    rows[row[0]] = row
    return rows, bad


def _pieces(line: str, decoder: json.JSONDecoder) -> tuple[list, int]:
    """The whole records in a line that is not one record (a cut record with the next
    one glued after it), and how many pieces of it could not be read."""
    records, lost = [], 0
    starts = [i for i in range(len(line)) if line.startswith(_START, i)]
    if not starts or starts[0] > 0:
        lost += 1
    for start in starts:
        try:
            record, end = decoder.raw_decode(line, start)
        except ValueError:
            lost += 1
            continue
        records.append(record)
    return records, lost


def _row(record) -> tuple | None:
    if not isinstance(record, dict) or not all(f in record for f in FIELDS):
        return None
    if not isinstance(record["key"], str):
        return None
    return tuple(record[f] for f in FIELDS)
