"""The sentence renderer (analysis.core.prose): how a template file's lines join, its
filters, undefined names, and that every chapter's macros are the ones its code calls."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import jinja2
import pytest

from analysis.core import prose

SRC = Path(__file__).resolve().parents[1] / "src" / "analysis"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A chapter folder ``toy`` holding one sentence file, under a temporary root."""
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "sentences.j2").write_text(
        "{% macro count(n, what) -%}\n"
        "There {{ 'is' if n == 1 else 'are' }}\n"
        "   {{ n|fmt(',') }} {{ what }}{{ n|plural }}\n"
        "{%- if n > LIMIT %}, more than {{ LIMIT }}{% endif %}.\n"
        "{%- endmacro %}\n"
        "{% macro two() -%}One.{{ BR }}Two.{%- endmacro %}\n")
    env = jinja2.Environment(loader=prose._Loader(tmp_path), undefined=jinja2.StrictUndefined)
    env.filters.update(prose.ENV.filters)
    env.globals.update(prose.ENV.globals)
    monkeypatch.setattr(prose, "ENV", env)
    return prose.sentences("toy", LIMIT=1000)


def test_lines_join_with_one_space_and_dash_trims(toy):
    assert toy.count(n=1, what="pair") == "There is 1 pair."
    assert toy.count(n=12345, what="pair") == "There are 12,345 pairs, more than 1000."


def test_paragraph_break(toy):
    assert toy.two() == "One.\n\nTwo."


def test_undefined_name_is_an_error(toy):
    with pytest.raises(jinja2.UndefinedError):
        toy.count(n=1)
    with pytest.raises(AttributeError, match="no macro 'missing'"):
        toy.missing


def test_filters():
    assert prose.fmt(0.12345, ".3f") == "0.123"
    assert prose.fmt(float("nan"), ".3f") == "undefined"
    assert prose.fmt(12345, ",") == "12,345"
    assert prose.minus("-6") == "−6"
    assert [prose.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 95, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "95th", "101st"]
    assert [prose.and_join(x) for x in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == ["", "a", "a and b",
                                                                                    "a, b and c"]
    assert (prose.plural(1), prose.plural(2), prose.plural(0, "y", "ies")) == ("", "s", "ies")
    assert [prose.ENV.filters["pvalue"](p) for p in (0.0004, 0.01234)] == ["< 0.001", "= 0.0123"]
    listing = prose.ENV.from_string("{% for x in xs %}{{ list_sep(loop) }}{{ x }}{% endfor %}")
    assert [listing.render(xs=xs) for xs in (["a"], ["a", "b"], ["a", "b", "c"])] == ["a", "a and b",
                                                                                    "a, b and c"]


def test_constants_takes_upper_case_names_only():
    mod = type(math)("m")
    mod.PAPER_R, mod.lower, mod._HIDDEN = 0.9, 1, 2
    assert prose.constants(mod) == {"PAPER_R": 0.9}


def _called_macros(path: Path) -> set[str]:
    """The names called as ``S.<name>(...)`` in a module."""
    tree = ast.parse(path.read_text())
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    return {f.attr for f in calls if isinstance(f.value, ast.Name) and f.value.id == "S"}


@pytest.mark.parametrize("chapter", sorted(p.parent.name for p in SRC.glob("*/sentences.j2")))
def test_every_macro_is_called_and_every_call_has_a_macro(chapter):
    called = set().union(*(_called_macros(p) for p in (SRC / chapter).glob("*.py")))
    defined = set(prose.sentences(chapter).names())
    assert called - defined == set(), "calls without a macro"
    assert defined - called == set(), "macros nobody calls"
