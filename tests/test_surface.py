"""Each chapter's package exports the steps its pages call, and nothing else, each
name written once.

A chapter's ``__init__`` binds its exports by plain imports (no ``__all__``). The
code that reads a chapter through its package is the book's: the notebooks (every
one: the lab page reads three chapters), ``analysis.book``, ``book/_ext``,
``scripts`` and ``noxfile.py``; it reads ``C.<name>`` through an import of the
package (``from analysis import distributional as D``) or imports
``from analysis.C import <name>``. ``analysis.book.chapters`` and
``analysis.book.plan`` read :data:`GENERIC` from every chapter's package. Tests
import what they test from the submodules, so they are not readers here.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from package_metrics import CELL, exported  # noqa: E402

CHAPTERS = ("size", "entropy", "predicting", "distributional", "phrases")
PACKAGES = ROOT / "src" / "analysis"
#: what generic code reads from a chapter's package object: ``PARAMS``
#: (:func:`analysis.book.chapters.declaration`) and, where the chapter has one,
#: ``plan`` (:func:`analysis.book.plan.chapter_plan`)
GENERIC = ("PARAMS", "plan")
#: the most names the five chapters' packages may export together
MOST_EXPORTED = 300
MAGIC = re.compile(r"^\s*[%!]")


def reader_sources() -> dict[str, str]:
    """The code that reads chapters through their packages: path -> Python source
    (a notebook's code cells joined, their ``:tag:`` lines and magics left out)."""
    out = {}
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        cells = ["\n".join(line for line in body.splitlines()
                           if not line.startswith(":") and not MAGIC.match(line))
                 for body in CELL.findall(md.read_text())]
        out[md.relative_to(ROOT).as_posix()] = "\n".join(cells)
    paths = [*(PACKAGES / "book").rglob("*.py"), *(ROOT / "book" / "_ext").glob("*.py"),
             *(ROOT / "scripts").glob("*.py"), ROOT / "noxfile.py"]
    for path in sorted(paths):
        out[path.relative_to(ROOT).as_posix()] = path.read_text()
    return out


def submodules(chapter: str) -> set[str]:
    return {p.stem for p in (PACKAGES / chapter).glob("*.py") if p.stem != "__init__"}


def names_read(source: str) -> dict[str, set[str]]:
    """Per chapter, the names ``source`` reads from its package: ``alias.<name>`` where
    ``alias`` is bound to the package, and ``from analysis.C import <name>`` (a
    submodule imported that way needs no export, so it is not counted)."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    out: dict[str, set[str]] = {c: set() for c in CHAPTERS}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "analysis":
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name in CHAPTERS})
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis."):
            chapter = node.module.removeprefix("analysis.")
            if chapter in CHAPTERS:
                out[chapter] |= {a.name for a in node.names} - submodules(chapter)
        elif isinstance(node, ast.Import):
            for a in node.names:
                chapter = a.name.removeprefix("analysis.")
                if a.asname and chapter in CHAPTERS:
                    aliases[a.asname] = chapter
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            out[aliases[node.value.id]].add(node.attr)
    return out


@pytest.fixture(scope="module")
def readers() -> dict[str, dict[str, set[str]]]:
    """Per chapter, each name read from its package -> the files that read it."""
    out: dict[str, dict[str, set[str]]] = {c: {} for c in CHAPTERS}
    for path, source in reader_sources().items():
        for chapter, names in names_read(source).items():
            for name in names:
                out[chapter].setdefault(name, set()).add(path)
    return out


def exports(chapter: str) -> list[str]:
    return exported(PACKAGES / chapter)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_package_binds_its_exports_once_without_all(chapter):
    tree = ast.parse((PACKAGES / chapter / "__init__.py").read_text())
    assigned = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)}
    assert "__all__" not in assigned, f"analysis.{chapter} lists its names again in __all__"
    names = exports(chapter)
    assert len(names) == len(set(names)), f"analysis.{chapter} imports a name twice"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_export_is_read_by_a_page_or_the_book(chapter, readers):
    unused = sorted(set(exports(chapter)) - set(readers[chapter]) - set(GENERIC))
    assert not unused, f"analysis.{chapter} exports names no notebook, book module or script reads: {unused}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_name_read_from_the_package_is_exported(chapter, readers):
    missing = {name: sorted(paths) for name, paths in readers[chapter].items()
               if name not in exports(chapter)}
    assert not missing, f"read from analysis.{chapter} but not exported: {missing}"
    assert "PARAMS" in exports(chapter), "analysis.book.chapters reads every chapter's PARAMS"


def test_the_chapters_export_few_names():
    total = sum(len(exports(c)) for c in CHAPTERS)
    assert total <= MOST_EXPORTED, f"the chapters export {total} names, more than {MOST_EXPORTED}"


def test_generic_readers_read_what_generic_names():
    """:data:`GENERIC` is what the book's generic code reads from a chapter's package."""
    chapters = (PACKAGES / "book" / "chapters.py").read_text()
    plan = (PACKAGES / "book" / "plan.py").read_text()
    assert ".PARAMS" in chapters and 'getattr(module, "plan", None)' in plan


def test_names_read_finds_aliases_imports_and_attributes():
    source = ("from analysis import size, distributional as D\nimport analysis.entropy as E\n"
              "from analysis.phrases import page, score\nsize.fit_law(D.PARAMS, E.kept)\n")
    read = names_read(source)
    assert read == {"size": {"fit_law"}, "distributional": {"PARAMS"}, "entropy": {"kept"},
                    "predicting": set(), "phrases": {"score"}}
