"""Absolute size inference (Section 3.3 of the source): the latent index :math:`z`
from PCA of the reference models' accuracy profiles, the law
:math:`\\hat\\theta(z) = A e^{Bz}` fitted by OLS of :math:`\\ln\\theta` on :math:`z`
(Eq. 3-4), the absolute lower bound :math:`0.5\\,\\hat\\theta` (Section 4.2.1, from
the LOO-CV factor-of-two band) and the leave-one-out check of the estimator.

Pure functions: no printing, plotting or network access.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from sklearn.decomposition import PCA

from analysis.size.params import BAND, LOWER_BOUND_FACTOR, SizeError


def _check_profiles(profiles: pd.DataFrame, what: str = "profiles", min_models: int = 3) -> np.ndarray:
    if not isinstance(profiles, pd.DataFrame):
        raise SizeError(f"{what} must be a DataFrame of models x features")
    if len(profiles) < min_models:
        raise SizeError(f"{what} must hold at least {min_models} reference models, got {len(profiles)}")
    if profiles.index.has_duplicates:
        dupes = sorted(profiles.index[profiles.index.duplicated()])
        raise SizeError(f"{what} has duplicated models: {dupes}")
    X = profiles.to_numpy(dtype=float)
    if np.isnan(X).any():
        bad = profiles.columns[np.isnan(X).any(axis=0)]
        raise SizeError(f"{what} has missing measurements in {len(bad)} features, e.g. {list(bad[:3])}")
    return X


@dataclass(frozen=True)
class PCAIndex:
    """The latent size index of Section 3.3: first principal component of the
    reference profiles. Unpacks as ``z, loadings, explained``.

    Attributes
    ----------
    z : pandas.Series
        :math:`z_M` of every reference model (centred: mean 0).
    loadings : pandas.Series
        Unit-norm first component :math:`w` over the profile features, signed so
        that larger :math:`z` means more accurate.
    explained : float
        Fraction of the variance of :math:`X` the first component explains.
    mean : pandas.Series
        Feature means of the reference profiles (the centre of the projection).
    flipped : bool
        Whether scikit-learn's sign was reversed.
    """

    z: pd.Series
    loadings: pd.Series
    explained: float
    mean: pd.Series
    flipped: bool

    def __iter__(self):
        return iter((self.z, self.loadings, self.explained))


def pca_index(profiles: pd.DataFrame) -> PCAIndex:
    """Latent size index :math:`z_M` from the feature matrix
    :math:`X\\in\\mathbb R^{N\\times 2KL}` of reference profiles (Section 3.3).

    PCA (scikit-learn, centred, not scaled, not whitened) keeps the first
    component; :math:`z_M = (A(M) - \\bar A)\\cdot w`. The sign of a principal
    component is arbitrary; here it is fixed so that :math:`z` correlates
    positively with each model's mean profile value (larger :math:`z` = more
    accurate), the orientation the increasing law :math:`A e^{Bz}` needs.
    Unscaled scores are what the paper's law implies: its :math:`A = 41.18`
    is the geometric mean of the Table I sizes, the OLS intercept when
    :math:`z` is centred on those models.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Reference models x features (:func:`accuracy_profile`), no missing values.

    Returns
    -------
    PCAIndex
        Unpacks as ``z, loadings, explained``.

    Raises
    ------
    SizeError
        Fewer than 3 models, missing values, or profiles that do not vary.
    """
    X = _check_profiles(profiles)
    center = X.mean(axis=0)
    if not np.any(np.abs(X - center) > 0):
        raise SizeError("profiles do not vary between models: no principal component")
    pca = PCA(n_components=1, svd_solver="full").fit(X)
    w = pca.components_[0].copy()
    z = (X - pca.mean_) @ w
    row_mean = X.mean(axis=1)
    flipped = False
    if np.std(z) > 0 and np.std(row_mean) > 0 and np.corrcoef(z, row_mean)[0, 1] < 0:
        w, z, flipped = -w, -z, True
    return PCAIndex(
        z=pd.Series(z, index=profiles.index, name="z"),
        loadings=pd.Series(w, index=profiles.columns, name="loading"),
        explained=float(pca.explained_variance_ratio_[0]),
        mean=pd.Series(pca.mean_, index=profiles.columns, name="mean"),
        flipped=flipped,
    )


def project(pca_result: PCAIndex, profile):
    """Project a model's profile on a fitted index: :math:`z = (A(M) - \\bar A)\\cdot w`.

    Parameters
    ----------
    pca_result : PCAIndex
        From :func:`pca_index` on the reference models.
    profile : pandas.Series or pandas.DataFrame
        One profile (features as index) or several (models x features); features
        are aligned by label and must include every feature of the index.

    Returns
    -------
    float or pandas.Series
        :math:`z_{closed}` (Section 3.3) of the model(s).
    """
    cols = pca_result.loadings.index
    if isinstance(profile, pd.Series):
        missing = cols.difference(profile.index)
        if len(missing):
            raise SizeError(f"profile lacks {len(missing)} features of the index, e.g. {list(missing[:3])}")
        x = profile.reindex(cols).to_numpy(dtype=float)
        if np.isnan(x).any():
            raise SizeError("profile has missing measurements")
        return float((x - pca_result.mean.to_numpy()) @ pca_result.loadings.to_numpy())
    if isinstance(profile, pd.DataFrame):
        missing = cols.difference(profile.columns)
        if len(missing):
            raise SizeError(f"profile lacks {len(missing)} features of the index, e.g. {list(missing[:3])}")
        X = profile.reindex(columns=cols).to_numpy(dtype=float)
        if np.isnan(X).any():
            raise SizeError("profile has missing measurements")
        z = (X - pca_result.mean.to_numpy()) @ pca_result.loadings.to_numpy()
        return pd.Series(z, index=profile.index, name="z")
    raise SizeError("profile must be a pandas Series (one model) or DataFrame (models x features)")


@dataclass(frozen=True)
class ScalingLaw:
    """The exponential law :math:`\\hat\\theta(z) = A e^{Bz}` (Eq. 3), fitted by OLS
    of :math:`\\ln\\theta_i = B z_i + c`, :math:`A = e^c` (Eq. 4).

    ``r2`` is the OLS :math:`R^2` on the log scale (the paper's 0.9504);
    ``se_b`` and ``se_c`` the OLS standard errors; ``n`` the number of models.
    """

    A: float
    B: float
    c: float
    r2: float
    n: int
    se_b: float = float("nan")
    se_c: float = float("nan")

    @property
    def p_b(self) -> float:
        """Two-sided p-value of the OLS t-test of :math:`B = 0` (``n - 2`` degrees
        of freedom, as statsmodels reports it); NaN without a standard error."""
        if self.n < 3 or not np.isfinite(self.se_b):
            return float("nan")
        if self.se_b == 0:  # a perfect fit
            return 0.0 if self.B != 0 else float("nan")
        return float(2 * stats.t.sf(abs(self.B / self.se_b), self.n - 2))

    def predict(self, z):
        """:math:`\\hat\\theta(z) = A e^{Bz}` (same type as ``z``: scalar, array or Series)."""
        if isinstance(z, pd.Series):
            theta_hat = self.A * np.exp(self.B * z.to_numpy(dtype=float))
            return pd.Series(theta_hat, index=z.index, name="theta_hat")
        out = self.A * np.exp(self.B * np.asarray(z, dtype=float))
        return float(out) if np.ndim(out) == 0 else out


def _aligned_theta(z: pd.Series, theta) -> np.ndarray:
    theta = pd.Series(theta, dtype=float) if not isinstance(theta, pd.Series) else theta.astype(float)
    missing = [m for m in z.index if m not in theta.index]
    if missing:
        raise SizeError(f"theta lacks the sizes of {missing}")
    t = theta.reindex(z.index).to_numpy(dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise SizeError("theta must be positive parameter counts")
    return t


def fit_law(z, theta) -> ScalingLaw:
    """Fit :math:`\\ln\\theta_i = B z_i + c` by ordinary least squares (statsmodels), Eq. (4).

    Parameters
    ----------
    z : pandas.Series
        Latent index of the reference models (:func:`pca_index`), or an array
        with ``theta`` an array of the same length.
    theta : mapping, pandas.Series or array
        Known parameter counts :math:`\\theta_i` (any unit; the paper's are
        billions), aligned with ``z`` by model name.

    Returns
    -------
    ScalingLaw
        ``A`` :math:`=e^c`, ``B``, ``r2`` and ``predict(z)``.
    """
    if not isinstance(z, pd.Series):
        z = pd.Series(np.asarray(z, dtype=float))
        theta = pd.Series(np.asarray(theta, dtype=float))
    if len(z) < 3:
        raise SizeError(f"fit_law needs at least 3 reference models, got {len(z)}")
    t = _aligned_theta(z, theta)
    x = z.to_numpy(dtype=float)
    if np.ptp(x) == 0:
        raise SizeError("z does not vary between the reference models")
    res = sm.OLS(np.log(t), sm.add_constant(x, has_constant="add")).fit()
    c, b = (float(v) for v in res.params)
    se_c, se_b = (float(v) for v in res.bse)
    return ScalingLaw(A=float(np.exp(c)), B=b, c=c, r2=float(res.rsquared), n=len(x), se_b=se_b, se_c=se_c)


def absolute_lower_bound(theta_hat, factor: float = LOWER_BOUND_FACTOR):
    """The absolute lower bound :math:`0.5\\cdot\\hat\\theta(z)` (Section 4.2.1, "Abs. LB").

    The factor 0.5 is the floor of the factor-of-two band that held all LOO-CV
    predictions of the paper.
    """
    if isinstance(theta_hat, pd.Series):
        return theta_hat * factor
    out = np.asarray(theta_hat, dtype=float) * factor
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class LOOResult:
    """Leave-one-out cross-validation of the absolute estimator (Section 4.2.1).

    ``table``: one row per held-out model with ``theta``, ``z`` (its projection
    on the fold's axis), ``theta_hat``, ``ratio`` (theta_hat / theta),
    ``within_band`` (0.5 <= ratio <= 2), and the fold's ``A``, ``B``, ``flipped``.
    ``within_band``: the fraction inside the band (paper: 100%).
    ``r2_log``: :math:`1-\\sum(\\ln\\theta-\\ln\\hat\\theta)^2/\\sum(\\ln\\theta-\\overline{\\ln\\theta})^2`
    of the held-out predictions (paper: 0.9387).
    """

    table: pd.DataFrame
    within_band: float
    r2_log: float


def loo_cv(profiles: pd.DataFrame, theta, band: tuple[float, float] = BAND) -> LOOResult:
    """Leave-one-out cross-validation with the PCA refitted inside every fold.

    For each reference model :math:`i`: drop it, recompute the PCA axis on the
    other :math:`N-1` profiles (:func:`pca_index`), fit the law on their
    :math:`(z, \\ln\\theta)` (:func:`fit_law`), project the held-out profile
    (:func:`project`) and predict :math:`\\hat\\theta_i`. The held-out model's
    data enters only through its own projection.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Reference models x features, at least 4 (each fold keeps 3).
    theta : mapping or pandas.Series
        Known sizes by model.
    band : (float, float), default (0.5, 2)

    Returns
    -------
    LOOResult
    """
    _check_profiles(profiles, min_models=4)
    lo, hi = band
    t_all = _aligned_theta(pd.Series(0.0, index=profiles.index), theta)
    rows = []
    for i, model in enumerate(profiles.index):
        train = profiles.drop(index=model)
        fold = pca_index(train)
        law = fit_law(fold.z, theta)
        z_i = project(fold, profiles.loc[model])
        theta_hat = law.predict(z_i)
        ratio = theta_hat / t_all[i]
        rows.append(dict(model=model, theta=t_all[i], z=z_i, theta_hat=theta_hat, ratio=ratio,
                         within_band=bool(lo <= ratio <= hi), A=law.A, B=law.B, flipped=fold.flipped))
    table = pd.DataFrame(rows)
    r2 = log_r2(table["theta"], table["theta_hat"])
    return LOOResult(table=table, within_band=float(table["within_band"].mean()), r2_log=r2)


def log_r2(theta, theta_hat) -> float:
    """:math:`R^2` of predictions on the log scale,
    :math:`1-\\sum(\\ln\\theta-\\ln\\hat\\theta)^2/\\sum(\\ln\\theta-\\overline{\\ln\\theta})^2`
    (the source's LOO-CV score, 0.9387); NaN when the true sizes do not vary."""
    log_t = np.log(np.asarray(theta, dtype=float))
    log_hat = np.log(np.asarray(theta_hat, dtype=float))
    ss_tot = float(((log_t - log_t.mean()) ** 2).sum())
    return 1 - float(((log_t - log_hat) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")


def loo_r2_interval(table: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                    level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the leave-one-out :func:`log_r2` over the
    held-out models (``table`` of :class:`LOOResult`: ``theta``, ``theta_hat``):
    the models are resampled with replacement, their held-out predictions kept.
    Beyond the source, which reports no interval. A resample whose sizes do not
    vary has no :math:`R^2` and is left out; NaNs when fewer than two models."""
    t = table["theta"].to_numpy(dtype=float)
    h = table["theta_hat"].to_numpy(dtype=float)
    if len(t) < 2:
        return float("nan"), float("nan")
    idx = np.random.default_rng(seed).integers(0, len(t), size=(n_boot, len(t)))
    r2 = np.array([log_r2(t[i], h[i]) for i in idx])
    r2 = r2[np.isfinite(r2)]
    if not r2.size:
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    return float(np.quantile(r2, tail)), float(np.quantile(r2, 1 - tail))


#: the profile halves the PCA index can be built on: the paper's formula is silent on
#: whether its 2KL profile is the right input, so the index is ablated over the three
PROFILE_HALVES = {"raw": ("raw",), "lifted": ("lifted",), "both (the paper's 2KL)": ("raw", "lifted")}


def index_ablation(profiles: pd.DataFrame, theta, halves=PROFILE_HALVES) -> pd.DataFrame:
    """The PCA index and its law on each half of the profile and on both: per variant
    (``profile``), the ``features`` kept, the variance the first component
    ``explained``, the law's in-sample ``r2`` and slope ``B``, and the leave-one-out
    ``loo_r2`` and share ``within_band`` (:func:`loo_cv`, the PCA refitted in every
    fold). ``profiles`` is :func:`~analysis.size.method_probe.accuracy_profile` with its
    ``kind`` column level; ``theta`` the true sizes."""
    kinds = profiles.columns.get_level_values("kind")
    rows = []
    for label, keep in halves.items():
        sub = profiles.loc[:, kinds.isin(keep)]
        if sub.shape[1] == 0:
            raise SizeError(f"the profiles have no {'/'.join(keep)} columns for the {label!r} index")
        pca = pca_index(sub)
        law = fit_law(pca.z, theta)
        loo = loo_cv(sub, theta)
        rows.append({"profile": label, "features": int(sub.shape[1]), "explained": float(pca.explained),
                     "r2": float(law.r2), "B": float(law.B), "loo_r2": float(loo.r2_log),
                     "within_band": float(loo.within_band)})
    return pd.DataFrame(rows)
