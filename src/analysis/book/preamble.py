"""The hidden preamble of every chapter: ``from analysis.book.preamble import *``.

Sets the plotting style and a headless backend, pandas display options, and
brings in what every chapter uses (glue, display, the package's modules).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402, F401
import pandas as pd  # noqa: E402
from IPython.display import HTML, Markdown, display  # noqa: E402, F401
from myst_nb import glue  # noqa: E402, F401

from analysis.book import (
    plots,  # noqa: E402, F401
    report,  # noqa: E402, F401
)
from analysis.core import data  # noqa: E402, F401
from analysis.core.claim_text import counts_sentence  # noqa: E402, F401
from analysis.core.tables import styled  # noqa: E402
from analysis.models import GenerationSettings, load_model, require_token_access  # noqa: E402, F401


def glue_figure(name: str, fig) -> None:
    """Glue a figure for a ``{glue:figure}`` directive and close it, so it is not
    also shown where it was made."""
    glue(name, fig, display=False)
    plt.close(fig)


def show(table: pd.DataFrame, formats=None, precision: int = 3, na_rep: str | None = None, **css) -> None:
    """Display a table without its index: ``formats`` (a format string, or one per
    column) or ``precision`` digits, ``na_rep`` for a missing value, and ``css``
    properties for every cell (:func:`analysis.core.tables.styled`)."""
    display(styled(table, formats, precision=precision, na_rep=na_rep, css=css))


try:  # in a kernel, the inline backend gives glued figures their PNG
    get_ipython().run_line_magic("matplotlib", "inline")  # noqa: F821
except NameError:
    pass
plots.setup()
pd.set_option("display.max_colwidth", 80)
pd.set_option("display.precision", 3)
