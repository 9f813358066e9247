"""Logistic regression that stays finite when the outcomes separate: Firth's penalty.

A ladder of models where the smallest reproduces nothing at few copies and the
largest everything at many separates the outcomes (quasi-completely), and the
maximum-likelihood fit then runs its coefficients to infinity. Firth's (1993)
penalized likelihood, log L + ½ log det I(β), removes the first-order bias of the
estimate and keeps it finite under separation (Heinze & Schemper 2002). For a
saturated two-group design it equals the log odds ratio with half a count added to
every cell, which the tests check.
"""

from __future__ import annotations

import numpy as np

from analysis.stats.result import StatsError

#: Newton steps and the step size below which the fit has converged
MAX_ITER = 100
TOL = 1e-8


def firth_logit(x: np.ndarray, y: np.ndarray, max_iter: int = MAX_ITER, tol: float = TOL) -> np.ndarray:
    """The coefficients of Firth's penalized logistic regression of ``y`` (0/1) on the
    columns of ``x`` (include an intercept column yourself): Newton steps on the
    modified score ``Xᵀ(y − p + h(½ − p))``, ``h`` the diagonal of the weighted hat
    matrix, each step halved until the penalized likelihood does not fall.
    :class:`StatsError` for mismatched shapes, outcomes other than 0 and 1, a design
    without full column rank, or no convergence."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 2 or y.ndim != 1 or len(x) != len(y) or not len(y):
        raise StatsError(f"x must be an n × k matrix and y a vector of n outcomes, got {x.shape} and "
                         f"{y.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise StatsError("y must hold 0 and 1 only")
    if np.linalg.matrix_rank(x) < x.shape[1]:
        raise StatsError(f"the design has rank {np.linalg.matrix_rank(x)} below its {x.shape[1]} columns")

    def penalized(beta):
        eta = x @ beta
        p = 1 / (1 + np.exp(-eta))
        w = p * (1 - p)
        info = x.T @ (w[:, None] * x)
        sign, logdet = np.linalg.slogdet(info)
        loglik = float(np.sum(y * eta - np.logaddexp(0, eta)))
        return loglik + 0.5 * logdet if sign > 0 else -np.inf, p, w, info

    beta = np.zeros(x.shape[1])
    value, p, w, info = penalized(beta)
    for _ in range(max_iter):
        inv = np.linalg.inv(info)
        h = w * np.einsum("ij,jk,ik->i", x, inv, x)
        step = inv @ (x.T @ (y - p + h * (0.5 - p)))
        t = 1.0
        while True:
            new = penalized(beta + t * step)
            if new[0] >= value - 1e-12 or t < 1e-6:
                break
            t /= 2
        beta = beta + t * step
        value, p, w, info = new
        if np.max(np.abs(t * step)) < tol:
            return beta
    raise StatsError(f"Firth's logistic fit did not converge in {max_iter} steps")
