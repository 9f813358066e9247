"""The check at the end of every test run (tests/conftest.py): a run that created,
changed or removed anything under the repository's ``.cache/`` fails, naming the paths."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

import conftest


def _fill(root):
    (root / "models" / "m1").mkdir(parents=True)
    (root / "models" / "m1" / "config.json").write_text("{}")
    (root / "queries.sqlite").write_bytes(b"1234")
    (root / "old.tmp").write_text("x")


def test_folder_state_lists_every_file_and_folder(tmp_path):
    root = tmp_path / ".cache"
    assert conftest.folder_state(root) == {}  # absent
    _fill(root)
    state = conftest.folder_state(root)
    assert sorted(state) == [".", "models", "models/m1", "models/m1/config.json", "old.tmp", "queries.sqlite"]
    assert state["."] is None and state["models/m1"] is None
    assert state["queries.sqlite"] == (4, (root / "queries.sqlite").stat().st_mtime_ns)


def test_state_changes_name_what_was_created_modified_and_removed(tmp_path):
    root = tmp_path / ".cache"
    _fill(root)
    before = conftest.folder_state(root)
    assert conftest.state_changes(before, conftest.folder_state(root)) == []
    (root / "queries.sqlite").write_bytes(b"12345")  # a new size
    (root / "old.tmp").unlink()
    (root / "lab").mkdir()
    (root / "lab" / "index.json").write_text("{}")
    st = (root / "models" / "m1" / "config.json").stat()
    os.utime(root / "models" / "m1" / "config.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # touched
    assert conftest.state_changes(before, conftest.folder_state(root)) == [
        "created lab", "created lab/index.json", "modified models/m1/config.json", "removed old.tmp",
        "modified queries.sqlite"]


def test_a_cache_folder_that_appears_is_a_change(tmp_path):
    root = tmp_path / ".cache"
    before = conftest.folder_state(root)
    root.mkdir()
    assert conftest.state_changes(before, conftest.folder_state(root)) == ["created ."]


@pytest.fixture
def watched(tmp_path, monkeypatch):
    """The end-of-run hooks pointed at a folder of this test, as the only process of a run."""
    root = tmp_path / ".cache"
    _fill(root)
    monkeypatch.setattr(conftest, "REPO_CACHE", root)
    monkeypatch.setattr(conftest, "WORKER", None)
    monkeypatch.setattr(conftest, "SESSION_CACHE", tmp_path / "session-cache")  # the hook removes it
    config = SimpleNamespace(stash=pytest.Stash())
    conftest.pytest_configure(config)
    return root, SimpleNamespace(config=config, exitstatus=pytest.ExitCode.OK)


def test_a_run_that_wrote_into_the_cache_fails_and_names_the_path(watched):
    root, session = watched
    (root / "models" / "m2").mkdir()
    conftest.pytest_sessionfinish(session, pytest.ExitCode.OK)
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    assert session.config.stash[conftest._REPO_CACHE_CHANGES] == ["created models/m2"]


def test_a_run_that_left_the_cache_alone_keeps_its_status(watched):
    _, session = watched
    conftest.pytest_sessionfinish(session, pytest.ExitCode.OK)
    assert session.exitstatus == pytest.ExitCode.OK
    assert session.config.stash[conftest._REPO_CACHE_CHANGES] == []


def test_a_worker_leaves_the_check_to_the_controller(watched, monkeypatch):
    root, session = watched
    monkeypatch.setattr(conftest, "WORKER", "gw1")
    (root / "queries.sqlite").unlink()
    conftest.pytest_sessionfinish(session, pytest.ExitCode.OK)
    assert session.exitstatus == pytest.ExitCode.OK
