"""The steps of the ladder's method that the chapter calls one by one, where
:func:`~analysis.size.method.ladder_method` runs them in one call: every model's
absolute, relative and best lower bound (:func:`bounds`), and which models placed
outside the calibration set are the lab's ablations (:func:`is_ablation`).

The other steps (:func:`~analysis.size.method_probe.accuracy_profile`,
:func:`~analysis.size.method_absolute.pca_index`, ``fit_law``, ``loo_cv``,
:func:`~analysis.size.method_relative.pairwise_tests`, ``tau_sweep``) are public
already; the notebook assembles their results into a
:class:`~analysis.size.method.LadderMethod`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.size.method import _bounds
from analysis.size.method_absolute import LOOResult
from analysis.size.params import PAPER_ALPHA


def bounds(theta: pd.Series, pairs: pd.DataFrame, loo: LOOResult, alpha: float = PAPER_ALPHA) -> pd.DataFrame:
    """Every ladder model's absolute bound (half its leave-one-out prediction), its
    relative bound (the largest model it beats in ``pairs``, the pairwise tests)
    and the best of the two, with whether that is at or below its true size:
    the ``bounds`` of :class:`~analysis.size.method.LadderMethod`, computed as
    :func:`~analysis.size.method.ladder_method` computes them.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``theta``, ``theta_hat_loo``, ``abs_lb``, ``rel_lb``,
        ``reference``, ``best_lb``, ``source``, ``valid``.
    """
    return _bounds(theta, pairs, loo, alpha)


def run_names(models: pd.Series) -> pd.Series:
    """The lab run behind each ``load_model`` name (``lab:<profile>/<run>`` → ``<run>``)."""
    return models.str.split(":").str[-1].str.split("/").str[-1]


def is_ablation(placed: pd.DataFrame | None, ablations: Sequence[str]) -> np.ndarray:
    """Which rows of ``placed`` (:func:`~analysis.size.method.bound_targets`) are the
    lab's ablation runs (``ablations``, by run name) rather than held-out models;
    empty without ``placed``."""
    if placed is None:
        return np.zeros(0, dtype=bool)
    return run_names(placed["model"]).isin(list(ablations)).to_numpy()


def popular_copies(profile) -> tuple[int, ...]:
    """The copies of each popular excerpt in a lab profile's corpus: one number, or
    the lowest and the highest when they are spread."""
    cfg = profile.corpus
    return (cfg.popular_copies, cfg.popular_max_copies) if cfg.popular_max_copies else (cfg.popular_copies,)
