"""The query cache's answer journal: every paid answer survives the loss of the
database and of its backup, and the salvage reports what each source gave."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core import jsonio
from analysis.core.cache import QueryCache, backup_path
from analysis.core.journal import journal_path, read_journal
from analysis.core.salvage import salvage
from analysis.models.api import OpenAIChatModel
from fakeserver import FakeOpenAIServer, Fault

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-membook-test-journal"
FAST = {"timeout": 5.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 1}
PROMPTS = [f"paid prompt {i} " + "words " * 30 for i in range(40)]
BROKEN = PROMPTS[-1]  # always fails: its error is stored (and journaled) too


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("MEMBOOK_API_KEY", KEY)


def cut(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def cut_last_line(path: Path) -> None:
    """As a writer killed mid-record leaves it: the last line loses its second half."""
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: start + (len(data) - start) // 2])


def salvage_command(path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                                       os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "salvage_query_cache.py"), str(path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def ask(server, path: Path, prompts=PROMPTS):
    with OpenAIChatModel("fake-model", base_url=server.base_url, cache=QueryCache(path), **FAST) as model:
        answers = model.chat(prompts)
        model.cache.close()
    return answers


def test_every_stored_row_is_journaled_as_strict_json(tmp_path):
    path = tmp_path / "q.sqlite"
    with QueryCache(path) as cache:
        cache.put("a", backend="b", model="m", kind="chat", request={"p": 1}, text="t", meta={"x": 1})
        cache.put("e", backend="b", model="m", kind="chat", request={"p": 2}, text=None, error="boom")
        with sqlite3.connect(path) as conn:
            stored = conn.execute("SELECT * FROM answers ORDER BY key").fetchall()
    lines = journal_path(path).read_text().splitlines()
    assert [jsonio.loads(line)["key"] for line in lines] == ["a", "e"]  # strict JSON, one record a line
    rows, bad = read_journal(journal_path(path))
    assert bad == 0 and [rows[k] for k in ("a", "e")] == [tuple(r) for r in stored]  # the rows, exactly


def test_no_paid_answer_is_lost_when_the_database_and_its_backup_are_damaged(tmp_path):
    """The database and its backup cut to half their bytes, and a record cut short at
    the journal's end by a killed writer: the salvage keeps every paid answer, and the
    next run sends only the request that failed."""
    path = tmp_path / "queries.sqlite"
    with FakeOpenAIServer(api_key=KEY) as server:
        server.always(BROKEN, Fault.error(500))
        first = ask(server, path)
        paid = server.count()
        assert sum(a.error is not None for a in first) == 1
        cut(path)
        cut(backup_path(path))
        with open(journal_path(path), "ab") as handle:  # a writer killed mid-record
            handle.write(b'{"key": "0123", "backend": "openai", "model": "api:fake-mo')
        out = salvage_command(path)
        kept = next(line for line in out.splitlines() if line.startswith("kept: "))
        assert kept.startswith("kept: 40 answers (")
        assert not backup_path(path).with_name("queries.sqlite.bak-shm").exists()
        assert not backup_path(path).with_name("queries.sqlite.bak-wal").exists()
        again = ask(server, path)
        assert [a.text for a in again] == [a.text for a in first]
        assert [r.prompt for r in server.requests[paid:]] == [BROKEN] * 2  # only the error is retried


def test_a_journal_whose_last_line_is_cut_loses_only_that_record(tmp_path):
    path = tmp_path / "queries.sqlite"
    with FakeOpenAIServer(api_key=KEY) as server:
        ask(server, path, PROMPTS[:-1])
        path.unlink()
        backup_path(path).unlink()
        cut_last_line(journal_path(path))
        # a later run appends after the cut line: its record is not glued to it
        with QueryCache(tmp_path / "queries.sqlite") as cache:
            cache.put("late", backend="b", model="m", kind="chat", request={"p": 0}, text="late answer")
        path.unlink()
        backup_path(path).unlink()
        report = salvage(path)
        assert (report.read, report.from_backup, report.from_journal) == (0, 0, 39 - 1 + 1)
        assert report.journal_unreadable == 1 and report.missing == ("database", "backup")
        paid = server.count()
        ask(server, path, PROMPTS[:-1])
        assert server.count() == paid + 1  # the one answer whose record was cut


def test_the_kept_line_counts_each_source_and_an_unreadable_file_is_unknown(tmp_path):
    path = tmp_path / "queries.sqlite"
    with QueryCache(path) as cache:
        for i in range(30):
            cache.put(f"k{i}", backend="b", model="m", kind="chat", request={"i": i}, text=f"a{i}")
    with QueryCache(path) as cache:  # 10 answers no backup holds (killed before it)
        for i in range(30, 40):
            cache.put(f"k{i}", backend="b", model="m", kind="chat", request={"i": i}, text=f"a{i}")
        cache._entry.written = False
    path.write_bytes(os.urandom(path.stat().st_size))  # cannot be opened at all
    out = salvage_command(path)
    lines = out.splitlines()
    assert lines[0] == "kept: 40 answers (database 0, backup 30, journal 10)"
    assert lines[1] == ("unreadable: database unknown (the file cannot be read), backup 0 row(s), "
                        "journal 0 record(s)")
    with QueryCache(path) as cache:
        assert cache.count() == 40
