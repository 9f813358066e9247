"""Sentences as text: each chapter's English is a file of sentence templates
(``src/analysis/<chapter>/sentences.j2``), one Jinja macro per sentence, and
this module renders them. A reviewer edits wording there without reading code;
the chapter's ``text*.py`` gathers the numbers and calls the macro by name::

    S = prose.sentences("entropy", PAPER_MIN_R=0.9)
    S.binning(parts=["0.950 with 3 bins (3 populated)"], above=1, total=1)

How a template file reads:

* A macro's source lines are joined by one space, as Markdown joins the lines of a
  paragraph, so a sentence can be wrapped anywhere. Jinja's ``-`` trims the space
  beside a tag (``{%- if x %}``); a paragraph break is written ``{{ BR }}``.
* Values are inserted as given and formatted in the template with the filters
  below (``{{ r|fmt(".3f") }}``, ``{{ n|fmt(",") }}``, ``{{ share|pct }}``).
* Keyword arguments the caller gives become the macro's variables; the names given
  to :func:`sentences` (the chapter's constants) are visible in every macro.
  An undefined name is an error, never an empty string.
"""

from __future__ import annotations

import math
from pathlib import Path

import jinja2

from analysis.core.fmt import fmt_p, fmt_pct

#: the folder that holds each chapter's ``<chapter>/sentences.j2``
ROOT = Path(__file__).resolve().parents[1]
#: a paragraph break inside a rendered sentence
BR = "\n\n"


def fmt(x, spec: str = "", undefined: str = "undefined") -> str:
    """``format(x, spec)``; ``undefined`` for a float that is not finite."""
    if isinstance(x, float) and not math.isfinite(x):
        return undefined
    return format(x, spec)


def minus(text) -> str:
    """A number's text with a typographic minus sign."""
    return str(text).replace("-", "−")


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``95th``."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def and_join(items, sep: str = ", ", last: str = " and ") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1] if items else ""


def list_sep(loop) -> str:
    """What goes before an item of a ``{% for %}`` list in words: nothing before the
    first, " and " before the last, ", " before the others."""
    return "" if loop.first else " and " if loop.last else ", "


def plural(n: int, one: str = "", many: str = "s") -> str:
    """The ending for ``n`` things: ``one`` when ``n`` is 1, else ``many``."""
    return one if n == 1 else many


class _Loader(jinja2.FileSystemLoader):
    """Reads a template with its lines joined by one space (see the module's docstring)."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        return " ".join(line.strip() for line in source.splitlines()), filename, uptodate


ENV = jinja2.Environment(loader=_Loader(ROOT), undefined=jinja2.StrictUndefined, autoescape=False,
                         keep_trailing_newline=False)
ENV.filters.update(fmt=fmt, pct=fmt_pct, pvalue=fmt_p, minus=minus, ordinal=ordinal, and_join=and_join,
                   plural=plural)
ENV.globals.update(BR=BR, isfinite=lambda x: math.isfinite(float(x)), list_sep=list_sep)


class Sentences:
    """A chapter's sentence macros, called by name with keyword arguments
    (``S.binning(parts=..., above=1)``); each returns its text without the
    spaces at its ends."""

    def __init__(self, chapter: str, constants: dict):
        self.chapter, self._constants, self._loaded = chapter, constants, None

    @property
    def _module(self):
        if self._loaded is None:
            self._loaded = ENV.get_template(f"{self.chapter}/sentences.j2").make_module(self._constants)
        return self._loaded

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        macro = getattr(self._module, name, None)
        if not isinstance(macro, jinja2.runtime.Macro):
            raise AttributeError(f"{self.chapter}/sentences.j2 has no macro {name!r}")

        def render(**values) -> str:
            return str(macro(**values)).strip()

        return render

    def names(self) -> list[str]:
        """The macros the file defines."""
        return sorted(k for k, v in vars(self._module).items() if isinstance(v, jinja2.runtime.Macro))


def constants(*modules) -> dict:
    """The upper-case names of ``modules`` (a chapter's ``params``): the constants its sentences may quote."""
    return {k: v for m in modules for k, v in vars(m).items() if k.isupper() and not k.startswith("_")}


def sentences(chapter: str, **constants) -> Sentences:
    """The chapter's sentence file (read at its first use), with ``constants`` visible in every macro."""
    return Sentences(chapter, constants)
