"""Resources the model layer holds: one query-cache connection per file per
process, models that close, a lab index that two processes can update at once,
and a query cache that two processes share without losing or duplicating answers."""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3

import pytest

from analysis.core import cache as C
from analysis.core.cache import QueryCache
from analysis.models.base import Answer, Model, ModelError


class Counter(Model):
    """A backend that answers with the prompt's length and counts what it was sent."""

    backend = "counter"

    def __init__(self, name="counter", **kw):
        super().__init__(name, **kw)
        self.released = False

    def _generate(self, requests):
        for i, r in enumerate(requests):
            yield i, Answer(str(len(r.prompt)))

    def _release(self):
        self.released = True


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    monkeypatch.delenv("MEMBOOK_QUERY_CACHE", raising=False)
    C.close_connections()
    yield tmp_path
    C.close_connections()


def test_twenty_five_models_share_one_connection(cache_root):
    models = [Counter(f"m{i}") for i in range(25)]
    assert C.open_connections() == 1
    assert models[3].complete(["abc"])[0].text == "3"
    assert models[17].cache.count() == 1  # one file: every model sees the others' answers
    other = QueryCache(cache_root / "other.sqlite")
    assert C.open_connections() == 2  # a second file, a second connection
    other.close()
    for m in models:
        m.close()
    assert C.open_connections() == 0  # the last one out closes it


def test_a_model_is_a_context_manager_that_releases_and_refuses_after(cache_root):
    with Counter() as model:
        assert model.complete(["ab"])[0].text == "2"
        assert C.open_connections() == 1
    assert model.closed and model.released
    assert C.open_connections() == 0
    with pytest.raises(ModelError, match="is closed"):
        model.complete(["ab"])
    model.close()  # twice is harmless


def test_a_shared_cache_is_not_closed_by_a_model(cache_root):
    shared = QueryCache(cache_root / "q.sqlite")
    with Counter(cache=shared) as model:
        model.complete(["x"])
    assert shared.count() == 1  # the model did not own it
    shared.close()
    with pytest.raises(RuntimeError, match="is closed"):
        shared.count()


def test_connections_close_at_exit(cache_root):
    QueryCache(cache_root / "a.sqlite")
    QueryCache(cache_root / "b.sqlite")
    assert C.open_connections() == 2
    C.close_connections()  # what atexit runs
    assert C.open_connections() == 0


# -- two processes ------------------------------------------------------------------


def _writer(path: str, start: int, n: int, barrier) -> None:
    cache = QueryCache(path)
    barrier.wait()
    for i in range(start, start + n):
        key = QueryCache.key("test", "m", "complete", {"i": i})
        if cache.get(key) is None:
            cache.put(key, backend="test", model="m", kind="complete", request={"i": i}, text=str(i))
    cache.close()


def test_two_processes_sharing_a_query_cache_lose_and_duplicate_nothing(tmp_path):
    path = str(tmp_path / "q.sqlite")
    QueryCache(path).close()  # the schema, before both start
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    # overlapping ranges: 0-299 and 200-499, so 100 keys are written by both
    procs = [ctx.Process(target=_writer, args=(path, start, 300, barrier)) for start in (0, 200)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rows = sqlite3.connect(path).execute("SELECT request, text FROM answers").fetchall()
    assert len(rows) == 500  # every answer once: none lost, none duplicated
    assert sorted(json.loads(r)["i"] for r, _ in rows) == list(range(500))
    assert all(json.loads(r)["i"] == int(t) for r, t in rows)


def _register(root: str, prefix: str, n: int, barrier) -> None:
    import os

    os.environ["MEMBOOK_CACHE"] = root
    from analysis.lab.index import register

    barrier.wait()
    for i in range(n):
        register(f"{prefix}-{i}", f"/runs/{prefix}/{i}")


def test_two_processes_registering_lab_runs_keep_every_entry(tmp_path):
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_register, args=(str(tmp_path), prefix, 60, barrier))
             for prefix in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    index = json.loads((tmp_path / "lab" / "index.json").read_text())
    assert len(index) == 120
    assert index["a-59"] == "/runs/a/59" and index["b-0"] == "/runs/b/0"
    assert not list((tmp_path / "lab").glob("*.tmp"))
