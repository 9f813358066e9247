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
:func:`use_shared_cache` or :func:`smoke_lab`. A run that created, changed or removed
anything under the repository's ``.cache/`` fails at its end, naming the paths.

Under pytest-xdist (``nox -s tests`` runs ``pytest -n auto --dist loadscope``) each
worker is a session of its own. So that work meant to be done once is done once:

* :func:`shared_cache` is one folder for the whole run, every worker's, and the
  smoke lab is trained into it once, under a file lock (:func:`smoke_lab`);
* a built-in model is converted by one process at a time (:func:`one_conversion_at_a_time`);
* every test is scheduled with the other tests of its module (or of its class),
  so a module's fixtures are built on one worker, and the longest units start
  first (:func:`pytest_collection_modifyitems`);
* each worker gets its share of the cores for torch's threads.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
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
REPO_ROOT = Path(__file__).resolve().parents[1]
#: the book's own artifact cache, which no test may touch
REPO_CACHE = REPO_ROOT / ".cache"

#: this process's pytest-xdist worker ("gw0", "gw1", ...), None in a run without workers
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER:
    # the workers share the cores: each gets its share of torch's threads (unless set), so
    # two workers on two cores do not run four threads
    _cores = len(os.sched_getaffinity(0))
    _share = max(1, _cores // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, str(_share))


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


# -- the repository's cache is left alone ------------------------------------------------------


def folder_state(folder: Path) -> dict[str, tuple[int, int] | None]:
    """What is under ``folder``: relative path -> (size, mtime in ns) of each file, None
    for each folder (``"."`` for ``folder`` itself); empty when it does not exist."""
    if not folder.is_dir():
        return {}
    state: dict[str, tuple[int, int] | None] = {".": None}
    for parent, dirs, files in os.walk(folder):
        here = Path(parent)
        for name in dirs:
            state[str((here / name).relative_to(folder))] = None
        for name in files:
            path = here / name
            with contextlib.suppress(FileNotFoundError):
                st = path.lstat()
                state[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return state


def state_changes(before: dict, after: dict) -> list[str]:
    """The differences between two :func:`folder_state`, one line a path, sorted:
    ``created``, ``modified`` or ``removed``."""
    lines = [f"created {p}" for p in after.keys() - before.keys()]
    lines += [f"removed {p}" for p in before.keys() - after.keys()]
    lines += [f"modified {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(lines, key=lambda line: (line.split(" ", 1)[1], line))


_REPO_CACHE_BEFORE = pytest.StashKey[dict]()
_REPO_CACHE_CHANGES = pytest.StashKey[list]()


def pytest_configure(config):
    if not WORKER:  # the controller (or the only process) watches the whole run
        config.stash[_REPO_CACHE_BEFORE] = folder_state(REPO_CACHE)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(SESSION_CACHE, ignore_errors=True)
    if WORKER or _REPO_CACHE_BEFORE not in session.config.stash:
        return
    changes = state_changes(session.config.stash[_REPO_CACHE_BEFORE], folder_state(REPO_CACHE))
    session.config.stash[_REPO_CACHE_CHANGES] = changes
    if changes and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    changes = config.stash.get(_REPO_CACHE_CHANGES, [])
    if changes:
        terminalreporter.section("the tests wrote into the repository's .cache/", sep="!", red=True)
        terminalreporter.line(f"{REPO_CACHE}: {len(changes)} change(s) during the run (a test or a "
                              "process it started used the book's cache, or another process did):")
        for line in changes[:50]:
            terminalreporter.line(f"  {line}")


# -- scheduling under pytest-xdist ---------------------------------------------------------------

#: work units (pytest-xdist's ``loadscope``: a module, or a class) that start first, longest
#: first: the smoke executions, the tests that train a lab or load a real model, then the
#: longest of the others. The smoke lab trains first; the units after it that do not need it
#: keep the other worker busy meanwhile; the book is built once the chapters are executed
FIRST = ("test_chapters.py::TestLab", "test_chapters_api.py::TestOwnLadder", "test_models_local.py",
         "test_lab_ddp.py", "test_chapters.py::TestPhrases", "test_chapters.py::TestEntropy",
         "test_chapters.py::TestSize", "test_chapters.py::TestPredicting",
         "test_chapters.py::TestDistributional", "test_chapters_api.py", "test_lab_phenomena.py",
         "test_chapters.py::TestSite", "test_lab_budget.py", "test_lab_resume.py", "test_site.py",
         "test_distributional_run.py", "test_plan.py", "test_lab_train.py", "test_lab_corpus.py",
         "test_params.py", "test_papermill_direct.py", "test_models_api.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core this process may run on."""
    return len(os.sched_getaffinity(0))


def work_unit(nodeid: str) -> str:
    """The unit ``--dist loadscope`` schedules a test in (its module, or its class), without
    the test folder: ``test_chapters.py::TestLab``."""
    return nodeid.rsplit("::", 1)[0].rsplit("/", 1)[-1]


def pytest_collection_modifyitems(config, items):
    """Put the units of :data:`FIRST` first, in that order; the others keep theirs, and the
    tests of a unit stay together (under ``--no-loadscope-reorder``, pytest-xdist starts the
    units in this order)."""
    rank = {unit: i for i, unit in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(FIRST)))


# -- caches --------------------------------------------------------------------------------------


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


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if absent), held for the block: one process
    of the run at a time (pytest-xdist's workers are processes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def run_folder(tmp_path_factory) -> Path:
    """A temporary folder for the whole run: under pytest-xdist the same folder for every
    worker (their base temporary folders share a parent, one per run)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if WORKER else base


@pytest.fixture(scope="session")
def shared_cache(run_folder) -> Path:
    """One cache folder for the whole run (every worker's), for tests that share work
    on purpose (through :func:`use_shared_cache` and :func:`smoke_lab`)."""
    path = run_folder / "shared-cache"
    path.mkdir(exist_ok=True)
    return path


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
def smoke_lab(shared_cache) -> Path:
    """Every run of the smoke lab, trained once in the whole run into :func:`shared_cache`
    (the first process to ask trains it, under a lock; the others wait, then find it), so
    that no two processes train the same run at once. Returns the cache folder."""
    from analysis.lab import ladder

    done = shared_cache / "smoke-lab.done"
    with file_lock(shared_cache / "smoke-lab.lock"):
        if not done.exists():
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv(CACHE_ENV, str(shared_cache))
                mp.delenv(QUERY_CACHE_ENV, raising=False)
                ladder.build_lab("smoke", progress=False)
            done.write_text("")
    return shared_cache


@pytest.fixture(scope="session")
def model_cache() -> Path:
    """Where converted models go (``MEMBOOK_MODEL_CACHE``), shared by every test."""
    return Path(os.environ[MODEL_CACHE_ENV])


@pytest.fixture(scope="session", autouse=True)
def one_conversion_at_a_time(model_cache):
    """Convert a built-in model in one process at a time (``convert_gguf`` writes the
    converted folder beside its final place, under one name for every process): an
    xdist worker, or another test session on the same model cache, waits for the
    first, then finds the model converted."""
    from analysis.models import checkpoints

    convert = checkpoints.convert_gguf

    def locked(name: str) -> Path:
        with file_lock(model_cache / f".convert-{name}.lock"):
            return convert(name)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checkpoints, "convert_gguf", locked)
        yield


@pytest.fixture(scope="session")
def real_models(one_conversion_at_a_time) -> None:
    """The two built-in models converted (under the lock) before a test starts kernels
    that load them: a kernel converts without the lock."""
    from analysis.models import checkpoints

    for name in checkpoints.GGUF_SOURCES:
        checkpoints.convert_gguf(name)


@pytest.fixture
def cache(tmp_path):
    """An empty query cache in the test's temporary folder (it replaces pytest's own
    ``cache`` fixture, which no test uses)."""
    from analysis.core.cache import QueryCache

    c = QueryCache(tmp_path / "queries.sqlite")
    yield c
    c.close()


@pytest.fixture
def module_key(request, monkeypatch):
    """The test module's ``KEY`` as the only API key, no endpoint set in the environment,
    and no endpoint remembered as stopped from an earlier test."""
    from analysis.models.api import KEY_ENVS, reset_endpoints

    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MEMBOOK_API_BASE_URL", raising=False)
    monkeypatch.setenv("MEMBOOK_API_KEY", request.module.KEY)
    reset_endpoints()
    return request.module.KEY


@pytest.fixture
def server(request):
    """The fake OpenAI-compatible server (tests/fakeserver.py), accepting the test
    module's ``KEY``."""
    from fakeserver import FakeOpenAIServer

    with FakeOpenAIServer(api_key=request.module.KEY) as s:
        yield s


@pytest.fixture(scope="module")
def tiny_llama():
    """A two-layer Llama of random weights (seed 0, 50-token vocabulary, pad 0, end
    of text 1): the model layer's generation paths compared on a real architecture."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=50, max_position_embeddings=64,
                         pad_token_id=0, eos_token_id=1, bos_token_id=2)
    return LlamaForCausalLM(config).eval()
