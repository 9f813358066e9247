"""Every figure the book shows, one function each (seaborn on matplotlib).

Functions take tidy frames from the study modules and return a matplotlib
``Figure``; the chapter glues it. Captions name the function that drew them.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

TYPE_LABELS = {
    "propaganda": "state coordinated media",
    "culturax": "CulturaX (general web)",
    "popular": "popular texts",
    "baseline": "2024–26 stories",
}
TYPE_COLORS = {
    "propaganda": "#dc3545",
    "culturax": "#0d6efd",
    "popular": "#b5651d",
    "baseline": "#2a9d8f",
}


def setup() -> None:
    """The book's plotting style (called by the chapter preamble)."""
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "font.family": "DejaVu Sans"})


def _dot_interval(ax, rates: pd.DataFrame, models: list[str], types: list[str], x_max: float) -> None:
    offsets = {t: (k - (len(types) - 1) / 2) * 0.22 for k, t in enumerate(types)}
    for t in types:
        sub = rates[rates["type"] == t].set_index("model").reindex(models)
        y = [i + offsets[t] for i in range(len(models))]
        if "ci_lo" in sub:
            ax.hlines(y, 100 * sub["ci_lo"], 100 * sub["ci_hi"], color=TYPE_COLORS.get(t), lw=2, alpha=0.6)
        ax.plot(100 * sub["rate"], y, "o", color=TYPE_COLORS.get(t), label=TYPE_LABELS.get(t, t), ms=7)
    ax.set_yticks(range(len(models)), models)
    ax.invert_yaxis()
    ax.set_xlim(0, x_max)
    ax.set_xlabel("memorization rate (%)")


def phrase_rates(rates: pd.DataFrame, source: pd.DataFrame | None = None) -> plt.Figure:
    """Rate per model × phrase type with Wilson 95% intervals; the source's 2024
    models (rates read off its figure, no intervals) in a separate right panel."""
    types = [t for t in ("propaganda", "culturax", "popular", "baseline") if t in set(rates["type"])]
    models = list(dict.fromkeys(rates["model"]))
    panels = 2 if source is not None else 1
    fig, axes = plt.subplots(
        1, panels, figsize=(5.2 * panels, 1.1 + 0.75 * max(len(models), 3)), squeeze=False
    )
    x_max = max(10.0, 100 * rates["ci_hi"].max() * 1.15)
    if source is not None:
        x_max = max(x_max, source["rate_pct"].max() * 1.15)
    _dot_interval(axes[0, 0], rates, models, types, x_max)
    axes[0, 0].set_title("This run (local models)")
    if source is not None:
        src = source.assign(rate=source["rate_pct"] / 100)
        _dot_interval(axes[0, 1], src, list(dict.fromkeys(src["model"])), types, x_max)
        axes[0, 1].set_title("Source, 2024 models (read off its figure)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(types), frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


def mode_comparison(rates_by_mode: pd.DataFrame) -> plt.Figure:
    """Windowed vs prefix matching: rate per model × type for each mode, with intervals."""
    df = rates_by_mode.copy()
    df["label"] = df["model"] + "\n" + df["type"].map(lambda t: TYPE_LABELS.get(t, t))
    labels = list(dict.fromkeys(df["label"]))
    modes = list(dict.fromkeys(df["mode"]))
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.6 * len(labels)))
    colors = dict(zip(modes, ["#444444", "#e76f51", "#2a9d8f"]))
    for k, mode in enumerate(modes):
        sub = df[df["mode"] == mode].set_index("label").reindex(labels)
        y = [i + (k - (len(modes) - 1) / 2) * 0.25 for i in range(len(labels))]
        ax.hlines(y, 100 * sub["ci_lo"], 100 * sub["ci_hi"], color=colors[mode], lw=2, alpha=0.6)
        ax.plot(100 * sub["rate"], y, "o", color=colors[mode], label=f"{mode} matching")
    ax.set_yticks(range(len(labels)), labels, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, max(10.0, 100 * df["ci_hi"].max() * 1.15))
    ax.set_xlabel("memorization rate (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.9 / len(labels)), ncol=len(modes),
              frameon=False)
    fig.tight_layout()
    return fig


def distance_distribution(scored: pd.DataFrame, threshold: float) -> plt.Figure:
    """Distribution of the best-window normalized edit distance per model × type,
    with the match threshold marked: how far from memorized the completions are."""
    df = scored[~scored["excluded"].astype(bool)].copy()
    df["type"] = df["type"].map(lambda t: TYPE_LABELS.get(t, t))
    g = sns.displot(
        df,
        x="distance",
        hue="type",
        col="model",
        kind="ecdf",
        height=3.2,
        aspect=1.2,
        palette={TYPE_LABELS.get(k, k): v for k, v in TYPE_COLORS.items()},
    )
    for ax in g.axes.flat:
        ax.axvline(threshold, color="k", ls="--", lw=1)
        ax.set_xlabel("best-window normalized edit distance")
    g.set_axis_labels("best-window normalized edit distance", "fraction of phrases ≤ x")
    return g.figure
