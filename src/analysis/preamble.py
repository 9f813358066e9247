"""The hidden preamble of every chapter: ``from analysis.preamble import *``.

Sets the plotting style and a headless backend, pandas display options, and
brings in what every chapter uses (glue, display, the package's modules).
"""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
from IPython.display import HTML, Markdown, display  # noqa: E402, F401
from myst_nb import glue  # noqa: E402, F401

from analysis import data, plots, report  # noqa: E402, F401
from analysis.models import GenerationSettings, load_model  # noqa: E402, F401

plots.setup()
pd.set_option("display.max_colwidth", 80)
pd.set_option("display.precision", 3)
