"""The environment of the book and of its tests: environment.yml declares the same
dependencies as pyproject.toml, and the tests never write to the book's caches
(tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

import conftest
from analysis.core.cache import QueryCache, artifact_path, cache_dir
from analysis.core.paths import REPO_ROOT
from analysis.models.api import KEY_ENVS, OpenAIChatModel

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-membook-isolation-test"
# in environment.yml only: the interpreter, pip, the session runner and the package itself
ENV_ONLY = {"python", "pip", "nox"}


def _key(req: Requirement) -> tuple[str, str, str]:
    return (req.name.lower().replace("_", "-"), str(req.specifier), str(req.marker or ""))


def pyproject_requirements(text: str) -> set[tuple[str, str, str]]:
    """The package's dependencies and every extra's, the self-reference
    (``analysis[book]``) left out."""
    project = tomllib.loads(text)["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    name = project["name"].lower()
    return {_key(Requirement(r)) for r in reqs if Requirement(r).name.lower() != name}


def environment_requirements(text: str) -> set[tuple[str, str, str]]:
    """The conda and pip requirements of an environment file, in pip syntax; a conda
    pin ``name=1.2`` is read as ``name==1.2``; ``-e .`` and :data:`ENV_ONLY` left out."""
    out = set()
    for dep in yaml.safe_load(text)["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            if item.startswith("-e"):
                continue
            if isinstance(dep, str) and "=" in item and not any(op in item for op in ("==", ">=", "<=")):
                item = item.replace("=", "==", 1)
            req = Requirement(item)
            if req.name.lower() not in ENV_ONLY:
                out.add(_key(req))
    return out


def test_environment_matches_pyproject():
    project = pyproject_requirements((ROOT / "pyproject.toml").read_text())
    env = environment_requirements((ROOT / "environment.yml").read_text())
    assert sorted(project - env) == [], "in pyproject.toml but not in environment.yml"
    assert sorted(env - project) == [], "in environment.yml but not in pyproject.toml"


def test_comparison_sees_a_missing_or_changed_requirement():
    project = '[project]\nname = "analysis"\ndependencies = ["numpy>=1.26", "nltk>=3.8"]\n' \
              '[project.optional-dependencies]\ndev = ["analysis[book]", "pytest>=8"]\n'
    assert pyproject_requirements(project) == {("numpy", ">=1.26", ""), ("nltk", ">=3.8", ""),
                                               ("pytest", ">=8", "")}
    env = "dependencies:\n  - python=3.11\n  - numpy>=1.26\n  - pip:\n      - pytest>=8\n      - -e .\n"
    assert environment_requirements(env) == {("numpy", ">=1.26", ""), ("pytest", ">=8", "")}
    assert pyproject_requirements(project) - environment_requirements(env) == {("nltk", ">=3.8", "")}
    changed = env.replace("numpy>=1.26", "numpy>=2")
    assert ("numpy", ">=2", "") in environment_requirements(changed) - pyproject_requirements(project)


def test_a_conda_pin_reads_as_an_exact_version():
    assert environment_requirements("dependencies:\n  - torch=2.13.0\n") == {("torch", "==2.13.0", "")}


# -- the tests' caches ----------------------------------------------------------------------------


def _state(path: Path) -> dict[str, tuple[int, int] | None]:
    """(mtime, size) of the sqlite file and its WAL companions, None where absent."""
    out = {}
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        f = path.with_name(name)
        out[name] = (f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else None
    return out


def test_the_session_never_uses_the_repository_cache():
    assert os.environ["MEMBOOK_CACHE"] != str(REPO_ROOT / ".cache")
    assert "MEMBOOK_QUERY_CACHE" not in os.environ
    assert not Path(os.environ["MEMBOOK_MODEL_CACHE"]).resolve().is_relative_to(REPO_ROOT.resolve())
    assert conftest.SESSION_CACHE.is_dir() and not conftest.SESSION_CACHE.is_relative_to(REPO_ROOT)


def test_each_test_gets_its_own_empty_cache(isolated_cache, tmp_path):
    assert cache_dir() == isolated_cache == tmp_path / "membook-cache"
    assert list(isolated_cache.iterdir()) == []
    assert QueryCache().path == isolated_cache / "queries.sqlite"


def test_converted_models_alone_go_to_the_shared_model_folder(monkeypatch, tmp_path, isolated_cache):
    monkeypatch.setenv("MEMBOOK_MODEL_CACHE", str(tmp_path / "models-shared"))
    key = {"model": "tiny", "revision": "abc"}
    assert artifact_path("models", key).parent == tmp_path / "models-shared" / "models"
    assert artifact_path("gguf", key).parent == tmp_path / "models-shared" / "gguf"
    assert artifact_path("lab", key).parent == isolated_cache / "lab"


def test_a_model_queried_through_the_fake_server_leaves_the_repository_cache_alone(
        monkeypatch, server, isolated_cache):
    repo_queries = REPO_ROOT / ".cache" / "queries.sqlite"
    before = _state(repo_queries)
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMBOOK_API_KEY", KEY)
    model = OpenAIChatModel("fake-model", base_url=server.base_url, timeout=5.0, max_retries=0)
    try:
        [answer] = model.chat(["where does this answer go?"])
        assert answer.text == "echo:where does this answer go?" and server.count() == 1
        # the model's default query cache is the test's own, and it holds the answer
        assert model.cache.path == cache_dir() / "queries.sqlite" == isolated_cache / "queries.sqlite"
        assert model.cache.count() == 1
    finally:
        model.close()
    assert cache_dir() != REPO_ROOT / ".cache"
    assert _state(repo_queries) == before


@pytest.fixture(scope="class")
def own_cache(tmp_path_factory):
    """A class-wide cache set before the tests' own fixtures, as a module fixture would."""
    path = tmp_path_factory.mktemp("class-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMBOOK_CACHE", str(path))
        yield path


@pytest.mark.usefixtures("own_cache")
class TestACacheSetByAWiderFixtureIsKept:
    def test_the_isolation_leaves_it_alone(self, own_cache, isolated_cache):
        assert cache_dir() == isolated_cache == own_cache
        (own_cache / "built-once").write_text("x")

    def test_the_next_test_shares_it(self, own_cache):
        assert cache_dir() == own_cache


def test_shared_artifacts_keep_their_own_query_cache(shared_artifacts, shared_cache, tmp_path):
    assert cache_dir() == shared_artifacts == shared_cache
    assert QueryCache().path == tmp_path / "queries.sqlite"
