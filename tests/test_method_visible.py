"""The method on the page: in every chapter the code a reader sees is at least as
long as the code hidden from them (``remove-cell`` and ``remove-input`` cells),
counted as ``scripts/package_metrics.py`` counts it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from package_metrics import cell_lines  # noqa: E402

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))


def test_cell_lines_counts_code_not_blanks_comments_or_tags():
    md = ("text\n```{code-cell} ipython3\nx = 1\n\n# a comment\ny = x\n```\n"
          "```{code-cell} ipython3\n:tags: [remove-cell]\n\nreport.glue_text(a=x)\n```\n"
          "```{code-cell} ipython3\n:tags: [remove-input]\n\nshow(t)\n```\n"
          "```python\nnot = 'a cell'\n```\n")
    assert cell_lines(md) == (2, 2)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_visible_code_is_at_least_the_hidden_code(chapter):
    visible, hidden = cell_lines((ROOT / "notebooks" / f"{chapter}.md").read_text())
    assert visible >= hidden, f"{chapter}: {visible} visible code lines against {hidden} hidden"
