"""The chapter sources stay thin: no logic in a notebook, no hand-typed number in prose,
and the chapter's claims glued once.

Logic (function definitions, classes, loops, try/except) belongs in the package,
where it is tested; a number in a sentence comes from the computation (glue) or
from a transcribed table, so a re-run with other numbers says the other thing.
Every claim of a chapter is built in a hidden cell and glued by one call of
``report.glue_claims(claims, render=<chapter>.render)`` (execute_chapters.py writes
them to results/<chapter>.json under "claims").
"""

import ast
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
CODE = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)
# a statement, not a comprehension's continuation line: loops end with a colon
LOGIC = re.compile(r"^\s*(def |class |try:|except\b|finally:|(for|while|with) [^\n]*:\s*(#[^\n]*)?$)", re.M)
# in prose: math, inline code, roles ({glue:text}`x`, {cite}`y`), directive options and fences, labels
NOT_PROSE = [
    re.compile(r"^---\n.*?\n---\n", re.S),  # jupytext front matter
    re.compile(r"^```[^\n]*\n.*?^```$", re.S | re.M),  # shell commands and other literal blocks
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"\{[\w:-]+\}`[^`]*`"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"^:::.*$|^:[\w-]+:.*$|^\([\w-]+\)=$", re.M),
    re.compile(r"\]\([^)]*\)"),  # link targets
]
#: numbers that are names, not results: years, model and table names, the confidence convention
ALLOWED = re.compile(
    r"\b(19|20)\d\d(–\d\d)?\b|Gemma 3\b|Table [IVX]+\b|Appendix [A-Z]\b|\b95% (interval|intervals)\b|"
    r"\bExperiment [1-3]\b|\b[1-3] features\b|\bAssumption \d\b"
)
NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:[.,]\d+)*%?(?![\w\-])")


def source(chapter: str) -> str:
    return (ROOT / "notebooks" / f"{chapter}.md").read_text()


def prose_numbers(text: str) -> list[str]:
    """Every number written by hand in a chapter's prose, outside the allow-list."""
    prose = CODE.sub("", text)
    for pattern in NOT_PROSE:
        prose = pattern.sub(" ", prose)
    prose = ALLOWED.sub(" ", prose)
    found = []
    for line in prose.splitlines():
        found += [f"{m.group(0)!r} in: {line.strip()[:90]}" for m in NUMBER.finditer(line)]
    return found


def test_the_checks_catch_what_they_should():
    md = ("---\nx: 1\n---\nThe rate is 4.3% of $n = 12$ ({glue:text}`r`), in 2024 with Gemma 3.\n"
          "```{code-cell} ipython3\nfor i in range(3):\n    pass\n```\n:name: fig-1\n"
          "```bash\npython scripts/execute_chapters.py -p n_seeds=20\n```\n")
    assert prose_numbers(md) == ["'4.3%' in: The rate is 4.3% of   ( ), in   with  ."]
    assert [m.group(0) for m in LOGIC.finditer(md)] == ["for i in range(3):"]
    assert not LOGIC.search("x = [i\n     for i in range(3)]\n")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_logic_in_a_notebook(chapter):
    cells = CODE.findall(source(chapter))
    offenders = [line for cell in cells for line in cell.splitlines() if LOGIC.match(line)]
    assert not offenders, f"{chapter}: move this logic into the package: {offenders}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_hand_typed_number_in_prose(chapter):
    found = prose_numbers(source(chapter))
    assert not found, f"{chapter}: glue these numbers or take them from data/: {found}"


HIDDEN = {"remove-cell", "remove-input"}
#: pages that may state no claim: the lab builds the models the studies use, it re-runs no source
CLAIMS_OPTIONAL = {"lab"}


def glue_claims_calls(notebook) -> list[tuple[int, bool, bool]]:
    """Each ``report.glue_claims(...)`` call of a notebook: its cell's index, whether
    that cell is hidden, and whether the call passes ``render=``."""
    calls = []
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        tree = ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                   for line in cell.source.splitlines()))
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr == "glue_claims":
                hidden = bool(HIDDEN & set(cell.metadata.get("tags", [])))
                calls.append((i, hidden, any(k.arg == "render" for k in node.keywords)))
    return calls


def test_the_glue_claims_check_reads_the_calls():
    md = ("```{code-cell} ipython3\n:tags: [remove-cell]\n\nclaims = size.claims(results)\n"
          "report.glue_claims(claims, render=size.render)\n```\n\n"
          "```{code-cell} ipython3\nreport.glue_claims([])\n```\n")
    assert glue_claims_calls(jupytext.reads(md, fmt="md:myst")) == [(0, True, True), (1, False, False)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_claims_are_glued_once_in_a_hidden_cell_with_their_rendering(chapter):
    calls = glue_claims_calls(jupytext.read(ROOT / "notebooks" / f"{chapter}.md"))
    if chapter in CLAIMS_OPTIONAL and not calls:
        return
    assert len(calls) == 1, f"{chapter}: report.glue_claims is called {len(calls)} times, not once"
    [(cell, hidden, render)] = calls
    assert hidden and render, f"{chapter}: cell {cell} must be hidden and pass render=<chapter>.render"
