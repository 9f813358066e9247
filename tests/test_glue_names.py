"""Glue names you can find: every ``{glue:...}`` name on a chapter page is glued by
that chapter's committed execution (``results/<chapter>.json``, which holds every
glued text and Markdown value; figures are checked by the book build), and is
written as a literal somewhere a reader can grep (the chapter's package, the book
layer, or the notebook itself), so that a name on the page leads to the line that
makes it. A claim's sentence is glued as ``claim_<id>``; its ``<id>`` is the literal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
GLUE_REF = re.compile(r"\{glue(?::(text|md|figure|any|math))?\}`([^`]+)`|```\{glue(?::(\w+))?\} (\S+)")
CLAIM = "claim_"


def page_names(text: str, figures: bool = True) -> set[str]:
    """The glue names a MyST page refers to (``{glue:text}`x```, the ``{glue:figure}``
    directive...); ``figures=False`` leaves out the figures."""
    refs = [((k1 or k2), (n1 or n2).split(":")[0].strip()) for k1, n1, k2, n2 in GLUE_REF.findall(text)]
    return {name for kind, name in refs if figures or kind != "figure"}


def glued_names(results: Path) -> set[str]:
    """The text and Markdown values a committed execution glued."""
    return set(json.loads(results.read_text())["values"])


def literal_sources(chapter: str) -> str:
    folders = [ROOT / "src" / "analysis" / chapter, ROOT / "src" / "analysis" / "book"]
    texts = [p.read_text() for f in folders if f.is_dir() for p in f.rglob("*.py")]
    return "\n".join(texts + [(ROOT / "notebooks" / f"{chapter}.md").read_text()])


def is_literal(name: str, source: str) -> bool:
    key = name.removeprefix(CLAIM)
    return bool(re.search(rf"""["']{re.escape(key)}["']|\b{re.escape(key)}\s*=""", source))


def test_the_reader_finds_page_names_and_literals():
    page = ("A {glue:text}`lab_r2` and {glue:md}`claim_lab_loo` and\n"
            "```{glue:figure} fig-size-law\n:name: x\n```")
    assert page_names(page) == {"lab_r2", "claim_lab_loo", "fig-size-law"}
    assert page_names(page, figures=False) == {"lab_r2", "claim_lab_loo"}
    assert is_literal("lab_r2", 'return {"lab_r2": f"{x:.2f}"}')
    assert is_literal("lab_r2", "report.glue_text(lab_r2=x)")
    assert is_literal("claim_lab_loo", 'Claim("lab_loo", ...)')
    assert not is_literal("lab_r2", 'f"lab_{k}"')


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_page_name_is_glued_by_the_chapter(chapter):
    results = ROOT / "results" / f"{chapter}.json"
    page = page_names((ROOT / "notebooks" / f"{chapter}.md").read_text(), figures=False)
    missing = page - glued_names(results)
    assert not missing, f"{chapter}: names on the page its notebook does not glue: {sorted(missing)}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_page_name_is_a_literal_you_can_grep(chapter):
    source = literal_sources(chapter)
    built = sorted(n for n in page_names((ROOT / "notebooks" / f"{chapter}.md").read_text())
                   if not is_literal(n, source))
    assert not built, f"{chapter}: glue names built at run time, not written anywhere: {built}"
