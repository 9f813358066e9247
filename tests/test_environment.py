"""environment.yml declares the same dependencies as pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import tomllib
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
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
