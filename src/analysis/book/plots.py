"""Every figure the book shows, one function each (seaborn on matplotlib).

Functions take tidy frames from the study modules and return a matplotlib
``Figure``; the chapter glues it. Captions name the function that drew them.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

#: Okabe & Ito's palette, distinguishable under the common colour-vision deficiencies;
#: every categorical colour of the book comes from it (sequential scales use viridis
#: or seaborn's crest, which are also colour-blind safe)
OKABE_ITO = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "orange": "#E69F00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
#: the order categorical colours are used in (yellow last: it is faint on white)
PALETTE_ORDER = ("blue", "vermillion", "green", "orange", "purple", "sky", "black", "yellow")

TYPE_LABELS = {
    "propaganda": "state coordinated media",
    "culturax": "CulturaX (general web)",
    "popular": "popular texts",
    "baseline": "2024–26 stories",
}
TYPE_COLORS = {
    "propaganda": OKABE_ITO["vermillion"],
    "culturax": OKABE_ITO["blue"],
    "popular": OKABE_ITO["orange"],
    "baseline": OKABE_ITO["sky"],
}


NO_SCORABLE = "no scorable completion in this run:\nevery answer was an error, a refusal or empty"


def setup() -> None:
    """The book's plotting style (called by the chapter preamble): the colour-blind
    safe palette as the default colour cycle, and fonts sized so that a figure
    scaled to the page's text column (about 750 px) still shows them at 9 px or more."""
    sns.set_theme(style="whitegrid", context="notebook", font_scale=1.15,
                  palette=[OKABE_ITO[k] for k in PALETTE_ORDER])
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
    if rates.empty:
        return placeholder(NO_SCORABLE)
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
    axes[0, 0].set_title("This run")
    if source is not None:
        src = source.assign(rate=source["rate_pct"] / 100)
        _dot_interval(axes[0, 1], src, list(dict.fromkeys(src["model"])), types, x_max)
        axes[0, 1].set_title("Source, 2024 models (read off its figure)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(types), frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


def lab_phrase_rates(table: pd.DataFrame) -> plt.Figure:
    """Memorization rate against copies in training, one line per lab model (smallest
    lightest), with Wilson 95% intervals; copies 0 are the never-trained controls, where
    the truth is 0%. ``table`` is :func:`analysis.phrases.rates_by_copies`."""
    if table.empty:
        return placeholder("this lab has no phrase documents:\nnothing to set beside the truth")
    levels = sorted(table["copies"].unique())
    pos = {c: i for i, c in enumerate(levels)}
    models = list(dict.fromkeys(table["model"]))
    palette = sns.color_palette("viridis", len(models))
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    offsets = {m: (k - (len(models) - 1) / 2) * 0.06 for k, m in enumerate(models)}
    for color, model in zip(palette, models):
        sub = table[table["model"] == model].sort_values("copies")
        x = sub["copies"].map(pos) + offsets[model]
        ax.vlines(x, 100 * sub["ci_lo"], 100 * sub["ci_hi"], color=color, lw=1.5, alpha=0.5)
        ax.plot(x, 100 * sub["rate"], marker="o", ms=5, lw=1.4, color=color, label=model)
    ax.set_xticks(range(len(levels)), ["0\n(never)" if c == 0 else str(c) for c in levels])
    ax.set_xlabel("copies in training (the truth)")
    ax.set_ylabel("memorized (%)")
    ax.set_ylim(-3, 103)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1), title="lab run", title_fontsize=8)
    fig.tight_layout()
    return fig


def mode_comparison(rates_by_mode: pd.DataFrame) -> plt.Figure:
    """Windowed vs prefix matching: rate per model × type for each mode, with intervals."""
    if rates_by_mode.empty:
        return placeholder(NO_SCORABLE)
    df = rates_by_mode.copy()
    df["label"] = df["model"] + "\n" + df["type"].map(lambda t: TYPE_LABELS.get(t, t))
    labels = list(dict.fromkeys(df["label"]))
    modes = list(dict.fromkeys(df["mode"]))
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.6 * len(labels)))
    colors = dict(zip(modes, ["#444444", OKABE_ITO["vermillion"], OKABE_ITO["green"]]))
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
    if df.empty:
        return placeholder(NO_SCORABLE)
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


FAMILY_COLORS = {"ladder-wide": OKABE_ITO["blue"], "ladder-deep": OKABE_ITO["vermillion"],
                 "standard": "#8d99ae", "perturbed": OKABE_ITO["green"], "range": OKABE_ITO["orange"]}


def lab_composition(composition: pd.DataFrame) -> plt.Figure:
    """Training-stream share of each document kind (copies counted), as a bar chart."""
    df = composition.sort_values("words", ascending=True)
    fig, ax = plt.subplots(figsize=(6.5, 0.6 + 0.45 * len(df)))
    ax.barh(df["kind"], df["words"] / 1e3, color=OKABE_ITO["blue"])
    for y, (w, s) in enumerate(zip(df["words"], df["share"])):
        ax.text(w / 1e3, y, f"  {100 * s:.1f}%", va="center", fontsize=9)
    ax.set_xlabel("words in the training stream (thousands, copies counted)")
    ax.set_xlim(0, df["words"].max() / 1e3 * 1.2)
    fig.tight_layout()
    return fig


def lab_loss_curves(curves: pd.DataFrame, families: list[str] | None = None) -> plt.Figure:
    """Training loss against tokens seen, one line per run, one panel per family
    (smoothed over a few steps)."""
    df = curves if families is None else curves[curves["family"].isin(families)]
    fams = list(dict.fromkeys(df["family"]))
    fig, axes = plt.subplots(1, len(fams), figsize=(4.6 * len(fams), 3.4), squeeze=False, sharey=True)
    for ax, fam in zip(axes[0], fams):
        sub = df[df["family"] == fam]
        runs = list(dict.fromkeys(sub["run"]))
        palette = sns.color_palette("viridis", len(runs))
        for color, run in zip(palette, runs):
            r = sub[sub["run"] == run].sort_values("tokens")
            smooth = r["loss"].rolling(max(1, len(r) // 40), min_periods=1).mean()
            ax.plot(r["tokens"] / 1e6, smooth, color=color, lw=1.4, label=run)
        ax.set_title(fam)
        ax.set_xlabel("training tokens (millions)")
        ax.legend(fontsize=7, loc="upper right")
    axes[0, 0].set_ylabel("training loss (nats/token)")
    fig.tight_layout()
    return fig


def lab_train_vs_heldout(losses: pd.DataFrame) -> plt.Figure:
    """Loss on training documents vs held-out documents against parameter count,
    per ladder family: the gap is what the model fits of its own data."""
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for fam, sub in losses.groupby("family", sort=False):
        sub = sub.sort_values("params")
        color = FAMILY_COLORS.get(fam, None)
        ax.plot(sub["params"], sub["train_loss"], "o-", color=color, label=f"{fam}: training docs")
        ax.plot(sub["params"], sub["heldout_loss"], "s--", color=color, alpha=0.7,
                label=f"{fam}: held-out docs")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1e6:g}M"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("parameters")
    ax.set_ylabel("loss (nats/token)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lab_memorization_vs_copies(nll: pd.DataFrame) -> plt.Figure:
    """Suffix NLL of injected sequences against their copies in training, per task,
    one panel per run (copies 0 are the never-inserted controls)."""
    runs = list(dict.fromkeys(nll["model"]))
    fig, axes = plt.subplots(1, len(runs), figsize=(3.6 * len(runs), 3.4), squeeze=False, sharey=True)
    for ax, run in zip(axes[0], runs):
        sub = nll[nll["model"] == run]
        sns.pointplot(sub, x="copies", y="suffix_nll", hue="task", ax=ax, dodge=0.4, errorbar=("ci", 95),
                      markersize=4, linewidth=1.2, legend=ax is axes[0, -1])
        ax.set_title(run.replace("lab:", ""), fontsize=10)
        ax.set_xlabel("copies in training")
    axes[0, 0].set_ylabel("suffix NLL (nats/token)")
    if axes[0, -1].get_legend() is not None:
        sns.move_legend(axes[0, -1], "upper left", bbox_to_anchor=(1, 1), fontsize=8)
    fig.tight_layout()
    return fig


def lab_accuracy_by_copies(by_text: pd.DataFrame) -> plt.Figure:
    """Next-word accuracy inside each popular excerpt against its copies in the lab's
    training stream (log scale), one colour per model (in ``by_text``'s order, the
    first lightest): a point per
    text, a line through the mean per doubling of copies, and the mean over the
    never-trained 2024–26 stories as a dashed line. ``by_text`` is
    :func:`analysis.book.phenomena.accuracy_by_text`."""
    models = list(dict.fromkeys(by_text["model"]))
    cmap = sns.color_palette("crest", as_cmap=True)
    palette = [cmap(x) for x in np.linspace(0.1, 0.95, len(models))] if len(models) > 1 else [cmap(0.95)]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for color, model in zip(palette, models):
        sub = by_text[by_text["model"] == model]
        pop = sub[sub["group"] == "popular"].dropna(subset=["copies"])
        ax.scatter(pop["copies"], pop["acc"], s=16, color=color, alpha=0.55)
        octave = np.round(np.log2(pop["copies"].astype(float)))
        means = pop.groupby(octave).agg(copies=("copies", "median"), acc=("acc", "mean"))
        ax.plot(means["copies"], means["acc"], "o-", color=color, lw=1.6, ms=4, label=model)
        base = sub.loc[sub["group"] == "baseline", "acc"]
        if len(base):
            ax.axhline(base.mean(), color=color, ls="--", lw=1, alpha=0.8)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_xlabel("copies of the excerpt in training")
    ax.set_ylabel("next-word accuracy α̂")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1), title="lab run (dashed: stories)",
              title_fontsize=8)
    fig.tight_layout()
    return fig


def size_accuracy_vs_length(acc_table: pd.DataFrame) -> plt.Figure:
    """Next-word accuracy α̂ against prefix length, popular vs baseline texts, one
    panel per model (the paper's Figure 1 pooled over texts); bands are 95%
    intervals over texts."""
    models = list(dict.fromkeys(acc_table["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 3.3), squeeze=False, sharey=True)
    for ax, model in zip(axes[0], models):
        sub = acc_table[acc_table["model"] == model].copy()
        sub["texts"] = sub["group"].map(lambda g: TYPE_LABELS.get(g, g))
        sns.lineplot(sub, x="prefix_len", y="acc", hue="texts", errorbar=("ci", 95), marker="o", ax=ax,
                     palette={TYPE_LABELS["popular"]: TYPE_COLORS["popular"],
                              TYPE_LABELS["baseline"]: TYPE_COLORS["baseline"]},
                     legend=ax is axes[0, 0])
        ax.set_title(model.replace("lab:", ""), fontsize=10)
        ax.set_xlabel("prefix length (words)")
    axes[0, 0].set_ylabel("next-word accuracy α̂")
    fig.tight_layout()
    return fig


def size_law(z: pd.Series, theta: pd.Series, law, loo=None, paper_law=None) -> plt.Figure:
    """ln θ against the latent index z with the fitted law θ̂ = A·e^{Bz}; hollow
    points are leave-one-out predictions; the dotted line is the paper's law. ``theta``
    is matched to ``z`` by model name (their orders may differ)."""
    theta = pd.Series(theta).reindex(z.index)
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    ax.scatter(z.to_numpy(), theta.to_numpy(), color=OKABE_ITO["blue"], zorder=3, label="models (true size)")
    grid = np.linspace(z.min() - 0.3, z.max() + 0.3, 100)
    ax.plot(grid, law.A * np.exp(law.B * grid), color=OKABE_ITO["vermillion"],
            label=f"fit: θ̂ = {law.A:.3g}·e^({law.B:.2f}z), R² = {law.r2:.2f}")
    if loo is not None:
        ax.scatter(loo["z"], loo["theta_hat"], facecolors="none", edgecolors=OKABE_ITO["vermillion"],
                   zorder=3, label="leave-one-out prediction")
    if paper_law is not None:
        ax.plot(grid, paper_law[0] * np.exp(paper_law[1] * grid), ":", color="gray",
                label=f"paper: θ̂ = {paper_law[0]}·e^({paper_law[1]}z) (billions)")
    ax.set_yscale("log")
    ax.set_xlabel("latent index z (first principal component)")
    ax.set_ylabel("parameters θ")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def size_tau_sweep(sweep: pd.DataFrame, paper: pd.DataFrame | None = None) -> plt.Figure:
    """Precision, recall and accuracy of the "f is larger" decisions against τ."""
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for col, color in (("precision", OKABE_ITO["blue"]), ("recall", OKABE_ITO["vermillion"]),
                       ("accuracy", OKABE_ITO["green"])):
        ax.plot(sweep["tau"], sweep[col], color=color, label=col)
    ax.set_xlabel("size gap τ (f counts as larger if |f| > (1+τ)|g|)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def size_bounds(bounds: pd.DataFrame) -> plt.Figure:
    """Lower bounds against true size (log–log); a valid bound lies below the diagonal."""
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    styles = {"abs_lb": ("o", OKABE_ITO["blue"], 25, "absolute"),
              "rel_lb": ("s", OKABE_ITO["vermillion"], 25, "relative"),
              "best_lb": ("*", OKABE_ITO["green"], 50, "best")}
    for col, (marker, color, area, label) in styles.items():
        if col in bounds:
            ax.scatter(bounds["theta"], bounds[col], marker=marker, color=color, s=area, label=label,
                       zorder=3)
    lo = np.nanmin(bounds["theta"].to_numpy()) / 3
    hi = np.nanmax(bounds["theta"].to_numpy()) * 2
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="bound = true size")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("true parameters")
    ax.set_ylabel("lower bound")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def size_accuracy_by_size(acc_table: pd.DataFrame, theta: pd.Series, families: pd.Series) -> plt.Figure:
    """The paper's Figure 1 on the ladder. Left: accuracy on the popular texts against
    prefix length, one line per model, darker for larger (line style by family).
    Right: mean accuracy against true size, popular (filled) and baseline (hollow)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    norm = matplotlib.colors.LogNorm(theta.min(), theta.max())
    cmap, dashes = plt.get_cmap("viridis_r"), dict(zip(dict.fromkeys(families), ("-", "--", ":", "-.")))
    means = acc_table.groupby(["model", "group", "prefix_len"])["acc"].mean()
    for model in theta.sort_values().index:
        line = means.loc[model, "popular"]
        left.plot(line.index, line.to_numpy(), dashes[families[model]], marker="o", ms=3,
                  color=cmap(norm(theta[model])), label=f"{model.replace('lab:', '')} ({theta[model]:,.0f})")
    per_model = acc_table.groupby(["model", "group"])["acc"].mean().unstack()
    for fam in dashes:
        members = theta[families == fam].sort_values()
        for group, face in (("popular", FAMILY_COLORS.get(fam, "k")), ("baseline", "none")):
            right.plot(members, per_model.loc[members.index, group], dashes[fam], marker="o",
                       color=FAMILY_COLORS.get(fam, "k"), mfc=face, label=f"{fam}, {group}")
    left.set(xlabel="prefix length (words)", ylabel="next-word accuracy α̂ (popular texts)")
    right.set(xscale="log", xlabel="true parameters θ", ylabel="mean next-word accuracy")
    right.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    left.legend(fontsize=7, ncol=2)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def size_per_text(acc_table: pd.DataFrame, theta: pd.Series, families: pd.Series,
                  text_ids: Sequence[str]) -> plt.Figure:
    """The paper's Figure 1 as it draws it, one text at a time (its panel is *Alice in
    Wonderland*): next-word accuracy against prefix length on each of ``text_ids``, one
    line per model, darker for larger (line style by family), one panel per text."""
    if not len(text_ids):
        return placeholder("no popular text to draw")
    fig, axes = plt.subplots(1, len(text_ids), figsize=(3.4 * len(text_ids), 3.4), sharey=True, squeeze=False)
    norm = matplotlib.colors.LogNorm(theta.min(), theta.max())
    cmap, dashes = plt.get_cmap("viridis_r"), dict(zip(dict.fromkeys(families), ("-", "--", ":", "-.")))
    pop = acc_table[acc_table["group"] == "popular"].set_index(["text_id", "model", "prefix_len"])["acc"]
    for ax, text in zip(axes[0], text_ids):
        for model in theta.sort_values().index:
            line = pop.loc[(text, model)].sort_index()
            label = f"{model.replace('lab:', '')} ({theta[model]:,.0f})"
            ax.plot(line.index, line.to_numpy(), dashes[families[model]], marker="o", ms=3,
                    color=cmap(norm(theta[model])), label=label)
        ax.set(title=text.replace("_", " "), xlabel="prefix length (words)")
    axes[0][0].set(ylabel="next-word accuracy α̂")
    axes[0][-1].legend(fontsize=6, ncol=1, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def placeholder(message: str) -> plt.Figure:
    """A figure that says, in words, why it has no data (never invented numbers)."""
    fig, ax = plt.subplots(figsize=(5, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color=OKABE_ITO["vermillion"])
    return fig


SET_COLORS = [OKABE_ITO[k] for k in PALETTE_ORDER]


def entropy_scores(scored: dict) -> plt.Figure:
    """Distribution of the memorization score d(r, s) for each sample (kept pairs)."""
    fig, ax = plt.subplots(figsize=(6.2, 3.2))
    for k, (name, frame) in enumerate(scored.items()):
        s = frame["score"].dropna().astype(int)
        top = int(s.max()) if len(s) else 1
        counts = np.bincount(s, minlength=top + 1) / max(len(s), 1)
        ax.step(np.arange(len(counts)), counts, where="mid", color=SET_COLORS[k % len(SET_COLORS)],
                label=name)
    ax.set_yscale("log")
    ax.set_xlabel("memorization score e = d(r, s) (token edits)")
    ax.set_ylabel("share of pairs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def entropy_instance(metrics: pd.DataFrame, fits: dict) -> plt.Figure:
    """Algorithm 2: per-instance entropy and zlib ratio of the answer against its
    memorization score, one point per pair, with the least-squares line."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.5))
    for ax, col, label in ((axes[0], "entropy", "instance entropy M(s_i) (bits)"),
                           (axes[1], "zlib", "instance zlib ratio")):
        ax.scatter(metrics["score"], metrics[col], s=6, alpha=0.25, color=OKABE_ITO["blue"], linewidths=0)
        f = fits[col]
        x = np.array([metrics["score"].min(), metrics["score"].max()])
        ax.plot(x, f.predict(x), color=OKABE_ITO["vermillion"], label=f"r = {f.r:.2f}")
        ax.set_xlabel("memorization score e")
        ax.set_ylabel(label)
        ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


_LEVEL_LABELS = {"entropy": "level-set entropy M_ent(s_e) (bits)", "zlib": "level-set zlib ratio M_zlib(s_e)",
                 "norm_entropy": "normalized entropy M/log|T_e|"}


def _levels_panel(ax, results: dict, col: str, rescale: bool = False, equation: bool = True) -> None:
    """One panel of level sets: a point per level set (area ∝ pairs) and each sample's
    fitted line, labelled with r (and the line itself when ``equation``)."""
    for k, (name, res) in enumerate(results.items()):
        t = res.levels
        if col not in t:
            continue
        color = SET_COLORS[k % len(SET_COLORS)]
        top = max(int(t["e"].max()), 1) if rescale else 1
        ax.scatter(t["e"] / top, t[col], s=8 + 60 * np.sqrt(t["pairs"] / t["pairs"].max()), color=color,
                   alpha=0.6, linewidths=0)
        fit = {"entropy": res.fit, "zlib": res.zlib_fit, "norm_entropy": res.norm_fit}[col]
        if fit is not None:
            grid = np.array([t["e"].min(), t["e"].max()])
            label = f"{name}: r = {fit.r:.2f}"
            if equation:
                label += f", {fit.intercept:.2f} + {fit.slope:.3f}·e"
            ax.plot(grid / top, fit.predict(grid), color=color, label=label)
    ax.set_xlabel("memorization score e / |s|" if rescale else "memorization score e")
    ax.set_ylabel(_LEVEL_LABELS.get(col, col))
    ax.legend(fontsize=7, loc="best")


def entropy_levels(results: dict, columns=("entropy", "zlib"), rescale: bool = False) -> plt.Figure:
    """Algorithm 1: a level-set metric against the memorization score e, one point
    per level set (area ∝ pairs in it), with each sample's fitted line."""
    fig, axes = plt.subplots(1, len(columns), figsize=(4.9 * len(columns), 3.7), squeeze=False)
    for ax, col in zip(axes[0], columns):
        _levels_panel(ax, results, col, rescale)
    fig.tight_layout()
    return fig


def entropy_token_space(results: dict) -> plt.Figure:
    """Token-space size |T_e| (log scale) and normalized entropy against e."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.5))
    for k, (name, res) in enumerate(results.items()):
        t = res.levels
        color = SET_COLORS[k % len(SET_COLORS)]
        axes[0].plot(t["e"], t["token_space"], "o", ms=3, color=color, label=name)
        axes[1].plot(t["e"], t["norm_entropy"], "o", ms=3, color=color, label=name)
        if res.norm_fit is not None:
            grid = np.array([t["e"].min(), t["e"].max()])
            axes[1].plot(grid, res.norm_fit.predict(grid), color=color, lw=1)
    axes[0].set_yscale("log", base=2)
    axes[0].set_ylabel("token space |T_e| (distinct tokens)")
    axes[1].set_ylabel("normalized entropy M/log|T_e|")
    for ax in axes:
        ax.set_xlabel("memorization score e")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def entropy_sample_size(sens: pd.DataFrame, paper_min: int | None = None) -> plt.Figure:
    """Appendix E.1: intercept and slope of the entropy line on random subsamples
    of the pairs, mean and 10–90% range per sample size."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.3))
    for ax, col in zip(axes, ("intercept", "slope")):
        g = sens.groupby("size")[col]
        mean, lo, hi = g.mean(), g.quantile(0.1), g.quantile(0.9)
        ax.fill_between(mean.index, lo, hi, color=OKABE_ITO["green"], alpha=0.25,
                        label="10–90% of subsamples")
        ax.plot(mean.index, mean, "o-", color=OKABE_ITO["blue"], label="mean")
        if paper_min:
            ax.axvline(paper_min, ls=":", color="gray", label=f"paper's minimum n = {paper_min:,}")
        ax.set_xscale("log")
        ax.set_xticks(list(mean.index), [f"{int(v):,}" for v in mean.index], fontsize=8)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("pairs in the sample")
        ax.set_ylabel(col)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def entropy_di(table: pd.DataFrame) -> plt.Figure:
    """Dataset inference: each set's intercept with its 95% bootstrap interval, the
    threshold τ of its model (dashed), members and non-members in two colours."""
    models = list(dict.fromkeys(table["model"]))
    rows = table.groupby("model").size().max()
    ncols = min(2, len(models))
    nrows = -(-len(models) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, (1.0 + 0.45 * rows) * nrows), squeeze=False)
    for ax in axes.flat[len(models):]:
        ax.axis("off")
    for ax, model in zip(axes.flat, models):
        sub = table[table["model"] == model].reset_index(drop=True)
        y = np.arange(len(sub))
        colors = [OKABE_ITO["blue"] if m == 1 else OKABE_ITO["vermillion"] for m in sub["truth"]]
        ax.hlines(y, sub["intercept lo"], sub["intercept hi"], colors=colors, lw=2, alpha=0.6)
        ax.scatter(sub["intercept"], y, c=colors, zorder=3)
        ax.axvline(sub["tau"].iloc[0], ls="--", color="gray")
        ax.set_yticks(y, sub["set"], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(model.replace("lab:", ""), fontsize=10)
        ax.set_xlabel("intercept of the entropy line (bits)")
    fig.tight_layout()
    return fig


def entropy_levels_by_model(results_by_model: dict) -> plt.Figure:
    """Level-set entropy against e, one panel per model, every set of that model
    with its fitted line."""
    models = list(results_by_model)
    fig, axes = plt.subplots(1, len(models), figsize=(5.0 * len(models), 3.7), squeeze=False)
    for ax, model in zip(axes[0], models):
        _levels_panel(ax, results_by_model[model], "entropy", equation=False)
        ax.set_title(model.replace("lab:", ""), fontsize=10)
    fig.tight_layout()
    return fig


def predicting_extraction(summary: pd.DataFrame) -> plt.Figure:
    """Share of sequences extracted and mean suffix argmax accuracy against copies in
    training, one line per target run (copies 0 are the never-inserted controls)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.4), sharex=True)
    levels = sorted(summary["copies"].unique())
    pos = {c: i for i, c in enumerate(levels)}
    for k, (target, g) in enumerate(summary.groupby("target", sort=False)):
        x = g["copies"].map(pos)
        color = SET_COLORS[k % len(SET_COLORS)]
        axes[0].plot(x, g["extract"], marker="o", color=color, label=target)
        axes[1].plot(x, g["suffix_acc"], marker="o", color=color, label=target)
    for ax, ylabel in zip(axes, ["extracted (share of sequences)", "suffix argmax accuracy"]):
        ax.set_xticks(range(len(levels)), [str(c) for c in levels])
        ax.set_xlabel("copies in training")
        ax.set_ylabel(ylabel)
        ax.set_ylim(-0.03, 1.03)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    return fig


def auc_heatmaps(tables: dict, title: str | None = None, vmin: float = 0.2, vmax: float = 1.0,
                 ncols: int = 2) -> plt.Figure:
    """AUC tables as annotated heatmaps, ``ncols`` to a row (the source's table beside
    the lab's); rows of a table are feature sets and baselines, columns targets,
    cells or copy levels. Blank cells are the "—" of a table."""
    tables = {k: v for k, v in tables.items() if v is not None}
    items = list(tables.items())
    nrows = -(-len(items) // ncols)
    n_rows = max(len(t) for t in tables.values())
    col_w = [max(max(2.2, 0.8 * t.shape[1] + 0.6) for _, t in items[c::ncols]) for c in range(ncols)]
    fig, axes = plt.subplots(nrows, ncols, figsize=(sum(col_w) + 3.4, nrows * (0.3 * n_rows + 1.4)),
                             gridspec_kw={"width_ratios": col_w}, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(items):
            ax.axis("off")
            continue
        name, t = items[k]
        sns.heatmap(t.astype(float), ax=ax, annot=True, fmt=".2f", cmap="RdBu_r", center=0.5, vmin=vmin,
                    vmax=vmax, cbar=False, annot_kws={"fontsize": 7}, linewidths=0.5, linecolor="white",
                    yticklabels=k % ncols == 0)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def distributional_performance(perf: pd.DataFrame, task: str = "knowledge") -> plt.Figure:
    """Task accuracy against bins of n-gram pair count, one line per model (the
    source's Figure 3); bars are Wilson 95% intervals. ``perf``: ``model, params,
    bin, accuracy, ci_lo, ci_hi, n`` (``bin`` a label in order)."""
    fig, ax = plt.subplots(figsize=(6.6, 3.6))
    models = perf.sort_values("params")["model"].unique()
    cmap = plt.get_cmap("viridis", len(models) + 1)
    bins = list(dict.fromkeys(perf["bin"]))
    for k, m in enumerate(models):
        g = perf[perf["model"] == m].set_index("bin").reindex(bins)
        x = np.arange(len(bins)) + (k - len(models) / 2) * 0.03
        err = [(g["accuracy"] - g["ci_lo"]).clip(lower=0), (g["ci_hi"] - g["accuracy"]).clip(lower=0)]
        ax.errorbar(x, g["accuracy"], yerr=err,
                    marker="o", ms=4, lw=1.2, capsize=2, color=cmap(k), label=m)
    ax.set_xticks(range(len(bins)), bins, rotation=30, fontsize=8)
    ax.set_xlabel("summed co-occurrence count of the instance's n-gram pairs")
    ax.set_ylabel(f"{task} accuracy")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1), title="model", title_fontsize=8)
    fig.tight_layout()
    return fig


def distributional_mem(mem: pd.DataFrame, value: str = "rho", ylabel: str = "Spearman ρ") -> plt.Figure:
    """Memorization against model size, one panel per task (the source's Figure 4):
    solid lines the task-gram LM (``Mem_n``), dashed the ∞-gram LM (``Mem_∞``),
    dotted any other corpus measure, one colour per n; filled markers p < 0.05, grey
    stars otherwise. ``mem``: ``task, lm`` (task-gram or ∞-gram), ``n``, ``params``,
    ``value``, ``pvalue`` and optionally ``family`` (one line per family: circles for
    the first, squares for the second)."""
    mem = mem.assign(family=mem["family"] if "family" in mem else "all")
    families = sorted(mem["family"].unique())
    markers = dict(zip(families, "osD^v"))
    tasks = list(dict.fromkeys(mem["task"]))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.8 * len(tasks), 3.6), squeeze=False, sharey=True)
    colors = {2: OKABE_ITO["blue"], 3: OKABE_ITO["vermillion"], 5: OKABE_ITO["green"]}
    styles = {"task-gram": "-", "∞-gram": "--"}
    for ax, task in zip(axes[0], tasks):
        sub = mem[mem["task"] == task]
        for (lm, n, fam), g in sub.groupby(["lm", "n", "family"], sort=False):
            g = g.sort_values("params")
            color = colors.get(n, "k")
            ax.plot(g["params"], g[value], ls=styles.get(lm, ":"), color=color, lw=1.1)
            sig = g["pvalue"] < 0.05
            ax.scatter(g.loc[sig, "params"], g.loc[sig, value], color=color, s=18, marker=markers[fam],
                       zorder=3)
            ax.scatter(g.loc[~sig, "params"], g.loc[~sig, value], color="#999999", marker="*", s=40, zorder=3)
        ax.axhline(0.0 if value == "rho" else 0.5, color="#888888", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("parameters")
        ax.set_title(task, fontsize=10)
    axes[0, 0].set_ylabel(ylabel)
    handles = [Line2D([], [], color=colors.get(n, "k"), ls=styles.get(lm, ":"), label=f"{lm}, n = {n}")
               for lm, n in dict.fromkeys(zip(mem["lm"], mem["n"]))]
    if len(families) > 1:
        handles += [Line2D([], [], color="k", ls="", marker=markers[f], label=f) for f in families]
    handles.append(Line2D([], [], color="#999999", ls="", marker="*", ms=8, label="p ≥ 0.05"))
    axes[0, -1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    return fig


def distributional_lines(frame: pd.DataFrame, y: str, hue: str, ylabel: str, title: str | None = None
                         ) -> plt.Figure:
    """One line per ``hue`` of ``y`` against model size (novelty, or Mem under
    several thresholds: the source's Figure 6)."""
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for k, (name, g) in enumerate(frame.groupby(hue, sort=False)):
        g = g.sort_values("params")
        ax.plot(g["params"], g[y], marker="o", ms=4, lw=1.2, color=SET_COLORS[k % len(SET_COLORS)],
                label=str(name))
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("parameters")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1), title=hue, title_fontsize=8)
    fig.tight_layout()
    return fig
