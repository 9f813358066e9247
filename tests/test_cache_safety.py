"""A query cache that cannot lose or double-pay an answer: checked when it opens,
backed up as it goes, salvaged when damaged, and shared between processes that
claim a request before sending it (the others wait for its answer)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from analysis.core import query_cache as C
from analysis.core.cache import CacheError, QueryCache, backup_path
from analysis.core.salvage import salvage
from analysis.models.api import OpenAIChatModel
from fakeserver import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
KEY = "sk-membook-test-cache"
FAST = {"timeout": 5.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 2}


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_API_KEY", KEY)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "membook-cache"))


def python_path() -> str:
    return os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))


def fill(path: Path, n: int) -> None:
    with QueryCache(path) as cache:
        for i in range(n):
            cache.put(f"k{i:05d}", backend="b", model="m", kind="chat", request={"i": i},
                      text=f"answer {i} " + "x" * 200)


def damage(path: Path, at: float = 0.5, size: int = 4096) -> None:
    """Overwrite one page-sized stretch in the middle of the file with noise."""
    data = bytearray(path.read_bytes())
    start = int(len(data) * at) // 4096 * 4096
    data[start: start + size] = os.urandom(size)
    path.write_bytes(bytes(data))


# -- checked when it opens -------------------------------------------------------------


def test_an_empty_file_where_a_cache_was_expected_stops_with_the_way_out(tmp_path):
    path = tmp_path / "queries.sqlite"
    path.write_bytes(b"")
    with pytest.raises(CacheError) as err:
        QueryCache(path)
    message = str(err.value)
    assert str(path) in message and "0 bytes" in message
    assert "scripts/salvage_query_cache.py" in message and "no backup" in message
    assert path.stat().st_size == 0  # nothing was written over it


def test_a_damaged_file_is_named_with_what_was_found_and_the_way_out(tmp_path):
    path = tmp_path / "queries.sqlite"
    fill(path, 2000)
    damage(path)
    with pytest.raises(CacheError) as err:
        QueryCache(path)
    message = str(err.value)
    assert str(path) in message and "integrity check" in message
    assert "scripts/salvage_query_cache.py" in message and "its backup" in message


def test_a_missing_file_is_a_new_cache(tmp_path):
    with QueryCache(tmp_path / "new.sqlite") as cache:
        assert cache.count() == 0


# -- the rolling backup and the salvage ------------------------------------------------


def test_closing_a_written_cache_leaves_a_checked_backup_with_every_answer(tmp_path):
    path = tmp_path / "queries.sqlite"
    fill(path, 30)
    bak = backup_path(path)
    with sqlite3.connect(bak) as conn:
        assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 30
    before = bak.stat().st_mtime_ns
    QueryCache(path).close()  # opened and closed without a write: the backup is left alone
    assert bak.stat().st_mtime_ns == before


def test_the_backup_rolls_while_answers_arrive(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "BACKUP_EVERY", 0.0)
    path = tmp_path / "queries.sqlite"
    cache = QueryCache(path)
    for i in range(3):
        cache.put(f"k{i}", backend="b", model="m", kind="chat", request={"i": i}, text="t")
        with sqlite3.connect(backup_path(path)) as conn:  # before any close
            assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == i + 1
    cache.close()


def test_salvage_keeps_every_readable_row_and_adds_the_backup(tmp_path):
    path = tmp_path / "queries.sqlite"
    fill(path, 2000)  # closing writes the backup of all 2,000
    with QueryCache(path) as cache:  # 10 answers that only the damaged file holds
        for i in range(2000, 2010):
            cache.put(f"k{i:05d}", backend="b", model="m", kind="chat", request={"i": i}, text=f"answer {i}")
        cache._entry.written = False  # as if killed before its backup
    damage(path, at=0.3)
    report = salvage(path)
    assert report.damaged.exists() and report.damaged.name.startswith("queries.sqlite.damaged-")
    assert report.read > 0 and report.from_backup > 0 and report.unreadable > 0
    assert report.total == report.read + report.from_backup + report.from_journal
    with QueryCache(path) as cache:  # the new file passes the check on opening
        found = cache.get_many([f"k{i:05d}" for i in range(2010)])
    assert set(found) >= {f"k{i:05d}" for i in range(2000)}  # every answer the backup held
    assert found["k00007"].text.startswith("answer 7 ")
    assert len(found) == report.total


def test_a_damaged_cache_costs_no_paid_answer(tmp_path):
    """Answers paid for, the cache damaged, the salvage command run as a reader would:
    the next run sends nothing."""
    path = tmp_path / "queries.sqlite"
    prompts = [f"paid prompt {i}" for i in range(40)]
    with FakeOpenAIServer(api_key=KEY) as server:
        with OpenAIChatModel("fake-model", base_url=server.base_url, cache=QueryCache(path), **FAST) as model:
            first = model.chat(prompts)
            model.cache.close()
        assert server.count() == 40
        damage(path, at=0.6)
        with pytest.raises(CacheError):
            QueryCache(path)
        env = {**os.environ, "PYTHONPATH": python_path()}
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / "salvage_query_cache.py"), str(path)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "answers kept" in done.stdout and "damaged file is kept" in done.stdout
        with OpenAIChatModel("fake-model", base_url=server.base_url, cache=QueryCache(path), **FAST) as model:
            again = model.chat(prompts)
            model.cache.close()
        assert server.count() == 40 and model.calls == 0
        assert [a.text for a in again] == [a.text for a in first]


# -- claims: two processes sharing a cache pay once --------------------------------------


def test_a_claim_held_by_a_live_process_is_waited_for_and_an_orphaned_one_taken_over(tmp_path):
    path = tmp_path / "q.sqlite"
    other = QueryCache(path)
    other._entry.owner = "another:1:run"  # a second owner on the same file (same live pid)
    mine, _, _ = other.claim({"k1": None, "k2": None})
    assert mine == ["k1", "k2"]
    cache = QueryCache(path)
    cache._entry = C._Entry(path, sqlite3.connect(path, check_same_thread=False), threading.Lock(), "me:2:x")
    cache._conn, cache._lock = cache._entry.conn, cache._entry.lock
    got, answered, theirs = cache.claim({"k1": None, "k2": None, "k3": None})
    assert got == ["k3"] and answered == {} and theirs == ["k1", "k2"]

    def the_other_run():
        time.sleep(0.3)
        other.put("k1", backend="b", model="m", kind="chat", request={}, text="from the other run")
        other.release(["k2"])  # given up without an answer (a not-sent request)

    thread = threading.Thread(target=the_other_run)
    thread.start()
    waiting = {"k1": None, "k2": None}
    answers, orphaned = {}, []
    while waiting:
        done, lost = cache.wait_for(waiting)
        answers.update(done)
        orphaned += lost
        for key in [*done, *lost]:
            waiting.pop(key)
    thread.join()
    assert answers["k1"].text == "from the other run" and orphaned == ["k2"]


def test_a_claim_whose_process_is_gone_is_taken_over_at_once(tmp_path):
    path = tmp_path / "q.sqlite"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    pid = int(dead.stdout)
    with QueryCache(path) as cache:
        cache._conn.execute("INSERT INTO claims VALUES (?,?,?,?,?)",
                            ("k1", f"{C._HOST}:{pid}:gone", C._HOST, pid, time.time() + 600))
        cache._conn.commit()
        mine, _, theirs = cache.claim({"k1": None})
    assert mine == ["k1"] and theirs == []


RUNNER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from analysis.core.cache import QueryCache
    from analysis.models import load_model

    start = Path(sys.argv[2])
    while not start.exists():
        time.sleep(0.005)
    prompts = [f"shared prompt {i:02d}" for i in range(48)]
    model = load_model("api:fake-model", cache=QueryCache(sys.argv[1]), concurrency=4,
                       base_delay=0.01, max_delay=0.05, timeout=5)
    answers = model.chat(prompts)
    print(json.dumps({"calls": model.calls, "answers": [[a.text, a.error] for a in answers]}))
    """
)


def test_two_processes_sharing_a_cache_send_each_request_once(tmp_path):
    path = tmp_path / "shared.sqlite"
    start = tmp_path / "start"
    QueryCache(path).close()
    with FakeOpenAIServer(api_key=KEY, delay=0.05) as server:
        env = {**os.environ, "MEMBOOK_API_BASE_URL": server.base_url,
               "PYTHONPATH": python_path()}
        procs = [subprocess.Popen([sys.executable, "-c", RUNNER, str(path), str(start)], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        time.sleep(2.0)  # both processes started and waiting
        start.touch()
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
        results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
        assert server.count() == 48  # not 96: the second process waited for the first one's answers
        assert sorted(r["calls"] for r in results) == [0, 48]
        assert results[0]["answers"] == results[1]["answers"]
        assert all(error is None for _, error in results[0]["answers"])
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # every claim released
