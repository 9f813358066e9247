"""Settings and fixtures shared by the whole test suite.

The tests never write to the book's own caches. At import, before any test module
loads the package:

* ``MEMBOOK_CACHE`` points at a fresh temporary folder of this session (whatever the
  user had set), removed when the session ends;
* ``MEMBOOK_QUERY_CACHE`` is unset, so the query cache follows ``MEMBOOK_CACHE``;
* ``MEMBOOK_MODEL_CACHE`` (converted models, kinds ``models`` and ``gguf`` of
  :func:`analysis.core.cache.artifact_path`) defaults to one folder outside the
  repository, ``~/.cache/membook-test-models``, shared by every session, so a real
  model is converted once; set the variable to put it elsewhere.

Then every test gets its own empty cache (:func:`isolated_cache`), unless a module or
session fixture has pointed ``MEMBOOK_CACHE`` elsewhere before it; tests that share
work on purpose (the smoke executions reuse one trained smoke lab) ask for
:func:`use_shared_cache`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# the lab trains on the CPU in the tests, even on a machine with a GPU: their run paths and
# bit-identity checks (resume, forks) are those of one CPU process; set MEMBOOK_LAB_DEVICE
# to run them elsewhere
os.environ.setdefault("MEMBOOK_LAB_DEVICE", "cpu")

# the names are analysis.core.cache's CACHE_ENV, QUERY_CACHE_ENV and MODEL_CACHE_ENV, spelled
# out so that they are set before anything imports the package
CACHE_ENV, QUERY_CACHE_ENV, MODEL_CACHE_ENV = "MEMBOOK_CACHE", "MEMBOOK_QUERY_CACHE", "MEMBOOK_MODEL_CACHE"
SESSION_PREFIX = "membook-test-cache-"


def _sweep_dead_sessions() -> None:
    """Remove the session caches left by test processes that were killed before their
    end (each folder is named after its process id)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SESSION_PREFIX}*-*"):
        pid = folder.name.removeprefix(SESSION_PREFIX).split("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # alive, another user's
            pass


_sweep_dead_sessions()
#: this session's default cache: what a test that asked for nothing else falls back to
SESSION_CACHE = Path(tempfile.mkdtemp(prefix=f"{SESSION_PREFIX}{os.getpid()}-"))
#: converted models, shared across sessions (outside the repository)
DEFAULT_MODEL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "membook-test-models"

os.environ[CACHE_ENV] = str(SESSION_CACHE)
os.environ.pop(QUERY_CACHE_ENV, None)
os.environ.setdefault(MODEL_CACHE_ENV, str(DEFAULT_MODEL_CACHE))


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(SESSION_CACHE, ignore_errors=True)


def on_session_cache() -> bool:
    """Whether ``MEMBOOK_CACHE`` is still the session's default (no fixture set its own)."""
    return os.environ.get(CACHE_ENV) == str(SESSION_CACHE)


@pytest.fixture(autouse=True)
def isolated_cache(request, monkeypatch) -> Path:
    """The test's own empty artifact and query cache (``MEMBOOK_CACHE``), in its
    temporary folder, and that folder's path.

    Left alone when a module or session fixture already pointed ``MEMBOOK_CACHE``
    somewhere (a module that trains a lab once for all its tests); then the path
    returned is that folder."""
    if not on_session_cache():
        return Path(os.environ[CACHE_ENV])
    path = request.getfixturevalue("tmp_path") / "membook-cache"
    path.mkdir()
    monkeypatch.setenv(CACHE_ENV, str(path))
    monkeypatch.delenv(QUERY_CACHE_ENV, raising=False)
    return path


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One cache folder for the whole session, for tests that share work on purpose
    (through :func:`use_shared_cache`)."""
    return tmp_path_factory.mktemp("shared-cache")


@pytest.fixture(scope="module")
def use_shared_cache(shared_cache) -> Path:
    """Point ``MEMBOOK_CACHE`` at :func:`shared_cache` for a whole module: its tests
    (and the kernels they start) share everything the first one built, such as the
    trained smoke lab. Use with ``pytest.mark.usefixtures("use_shared_cache")``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(shared_cache))
        mp.delenv(QUERY_CACHE_ENV, raising=False)
        yield shared_cache


@pytest.fixture
def shared_artifacts(shared_cache, monkeypatch, tmp_path) -> Path:
    """One test on :func:`shared_cache`'s artifacts (a lab trained by an earlier test
    is reused) but with its own empty query cache, so what reaches a model (or a fake
    server) is this test's alone."""
    monkeypatch.setenv(CACHE_ENV, str(shared_cache))
    monkeypatch.setenv(QUERY_CACHE_ENV, str(tmp_path / "queries.sqlite"))
    return shared_cache


@pytest.fixture(scope="session")
def model_cache() -> Path:
    """Where converted models go (``MEMBOOK_MODEL_CACHE``), shared by every test."""
    return Path(os.environ[MODEL_CACHE_ENV])


@pytest.fixture
def cache(tmp_path):
    """An empty query cache in the test's temporary folder (it replaces pytest's own
    ``cache`` fixture, which no test uses)."""
    from analysis.core.cache import QueryCache

    c = QueryCache(tmp_path / "queries.sqlite")
    yield c
    c.close()


@pytest.fixture
def server(request):
    """The fake OpenAI-compatible server (tests/fakeserver.py), accepting the test
    module's ``KEY``."""
    from fakeserver import FakeOpenAIServer

    with FakeOpenAIServer(api_key=request.module.KEY) as s:
        yield s
