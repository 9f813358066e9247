"""How the book lays out a table it shows: one home for the styling every chapter's
visible ``show(...)`` and every page module use (a Styler needs jinja2, which only the
book installs; nothing here imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

#: right-aligned, padded, unwrapped cells: the layout of the book's wide numeric tables
NUMERIC_CELLS = {"text-align": "right", "padding": "0 0.6em", "white-space": "nowrap"}


class Note(str):
    """A sentence a notebook shows as Markdown (``display`` reads :meth:`_repr_markdown_`)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def styled(table: pd.DataFrame, formats=None, precision: int | None = None, na_rep: str | None = None,
           caption: str | None = None, index: bool = False, empty: str | None = None,
           css: Mapping[str, str] | None = None) -> Styler | Note:
    """A table to display: without its index (unless ``index``), formatted by ``formats`` (a
    format string, or one per column) or to ``precision`` digits (pandas' default when None),
    ``na_rep`` for a missing value, ``css`` properties on every cell, under ``caption``; or,
    when it has no row and ``empty`` is given, the note ``empty`` instead."""
    if empty is not None and not len(table):
        return Note(empty)
    style = table.style if index else table.style.hide(axis="index")
    style = style.format(formats, precision=precision, na_rep=na_rep)
    if css:
        style = style.set_properties(**css)
    return style.set_caption(caption) if caption is not None else style
