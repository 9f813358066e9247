"""Models outside the ladder placed on its law (the size chapter's ablations)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis import size
from analysis.size.method_absolute import PCAIndex, ScalingLaw


def _method(loo_ratios):
    cols = pd.Index(["f1", "f2"])
    pca = PCAIndex(z=pd.Series([0.0]), loadings=pd.Series([1.0, 0.0], index=cols),
                   explained=1.0, mean=pd.Series([0.5, 0.5], index=cols), flipped=False)
    law = ScalingLaw(A=1000.0, B=5.0, c=np.log(1000.0), r2=1.0, n=3)
    return SimpleNamespace(pca=pca, law=law, loo=SimpleNamespace(table=pd.DataFrame({"ratio": loo_ratios})))


def test_place_on_law_by_hand():
    profiles = pd.DataFrame({"f1": [0.7, 0.4], "f2": [0.1, 0.9]}, index=["abl-a", "abl-b"])
    theta = pd.Series({"abl-a": 1000.0, "abl-b": 1000.0, "other": 5.0})
    out = size.place_on_law(_method([0.5, 2.0]), profiles, theta)
    # z = (0.7 - 0.5) * 1 = 0.2 -> 1000 e^1; z = -0.1 -> 1000 e^-0.5
    assert out["z"].tolist() == pytest.approx([0.2, -0.1])
    assert out["theta_hat"].tolist() == pytest.approx([1000 * np.e, 1000 * np.exp(-0.5)])
    assert out["ratio"].tolist() == pytest.approx([np.e, np.exp(-0.5)])
    # e > 2 is outside the ladder's own leave-one-out ratios [0.5, 2]; e^-0.5 = 0.61 is inside
    assert out["outside_loo"].tolist() == [True, False]
    with pytest.raises(size.SizeError, match="theta lacks the sizes"):
        size.place_on_law(_method([0.5, 2.0]), profiles, theta.drop("abl-b"))


def test_ablation_text_by_hand():
    placed = pd.DataFrame({"model": ["lab:abl-tokens"], "theta": [688_000.0], "z": [0.0],
                           "theta_hat": [344_000.0], "ratio": [0.5], "outside_loo": [True]})
    text = size.ablation_text(placed, pd.Series([0.7, 1.3]))
    assert text == ("**abl-tokens** (trained for half the ladder's tokens; breaks Assumption 2 (size "
                    "dominates the other differences)): 0.69M parameters, predicted 0.34M, 0.50 times its "
                    "size, so it reads smaller than it is, outside the ladder's own range (0.70 to 1.30).")
