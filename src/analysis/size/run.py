"""Querying models: the texts and templates a run probes, the probe itself
(through :func:`analysis.nextword.probe`), the lab ladder's positions, and
:func:`plan`, the queries an execution sends, counted without sending them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis import nextword
from analysis.core import data
from analysis.lab import ladder
from analysis.lab.plan import lab_corpus, lab_ladder_names
from analysis.models.queries import QueryGroup, is_chat
from analysis.size.method_probe import sample_positions
from analysis.size.params import LAB_PROBE_TOKENS, templates

__all__ = ["chapter_templates", "chapter_texts", "lab_samples", "ladder_design", "plan", "probe_models"]


def chapter_texts(params: Mapping) -> tuple[dict[str, str], dict[str, str]]:
    """The popular and baseline texts a run probes (all 41, or the profile's subset)."""
    popular, baseline = data.popular_texts(), data.baseline_texts()
    if params.get("popular_texts"):
        popular = {k: popular[k] for k in params["popular_texts"]}
    if params.get("baseline_texts"):
        baseline = {k: baseline[k] for k in params["baseline_texts"]}
    return popular, baseline


def chapter_templates(template_ids: Sequence[int]) -> pd.DataFrame:
    """The Table V templates a run's chat models answer."""
    t = templates()
    return t[t["template_id"].isin(template_ids)]


def probe_models(models: Mapping, samples: pd.DataFrame, prompt_templates: pd.DataFrame | None, mode: str,
                 max_new_tokens: int, label: str = "size probe") -> pd.DataFrame:
    """:func:`analysis.nextword.probe` for every loaded model (``{name: model}``), one frame."""
    return pd.concat([nextword.probe(m, samples, prompt_templates, mode=mode, max_new_tokens=max_new_tokens,
                                     progress=f"{name}: {label}") for name, m in models.items()],
                     ignore_index=True)


def lab_samples(corpus, prefix_lens: Sequence[int], n: int, seed: int = 0) -> pd.DataFrame:
    """Positions for the lab ladder: inside the trained excerpt window of each popular
    text in the lab corpus, and anywhere in the baseline stories it never saw."""
    manifest = corpus.manifest()
    windows = {r.text_id: (int(r.word_start), int(r.word_end))
               for r in manifest[manifest["kind"] == "popular"].itertuples()}
    popular = {k: v for k, v in data.popular_texts().items() if k in windows}
    baseline = data.baseline_texts()
    return sample_positions({**popular, **baseline}, prefix_lens, n, seed=seed, windows=windows,
                            baseline=list(baseline))


def ladder_design(lab) -> tuple[pd.Series, tuple[int, ...]]:
    """The family of each built ladder model (by ``load_model`` name) and the numbers
    of training tokens they share, sorted (every ladder run of a lab profile trains
    on the same corpus for the same tokens, so there is one)."""
    runs = [lab.profile.run(r) for r in lab.results]
    families = pd.Series([r.family for r in runs], index=lab.model_names(), name="family")
    tokens = tuple(sorted({int(r.tokens) for r in runs}))
    return families, tokens


def plan(params: Mapping) -> list:
    """The queries an execution at ``params`` sends, built as the chapter builds
    them, for :mod:`analysis.book.plan` to count: each model's probe (one query a
    position, or one a position and template in chat mode), then each lab ladder
    model's probe of the lab's positions, and each ablation and held-out run's (when
    the lab profile has them). Loads, trains and calls nothing."""
    popular, baseline = chapter_texts(params)
    samples = sample_positions({**popular, **baseline}, params["prefix_lens"], params["n_per_text"],
                               seed=params["seed"], baseline=list(baseline))
    prompt_templates = chapter_templates(params["template_ids"])
    groups = []
    for name in params["models"]:
        if nextword.uses_chat(is_chat(name), params["mode"]):
            for template_id, prompts in nextword.chat_prompts(samples, prompt_templates):
                groups.append(QueryGroup(f"probe (template {template_id})", name, prompts,
                                         params["max_new_tokens"]))
        else:
            groups.append(QueryGroup("probe", name, samples["prefix"].tolist(), params["max_new_tokens"]))
    lab = lab_samples(lab_corpus(params["lab_profile"]), params["prefix_lens"], params["n_lab_per_text"],
                      seed=params["seed"])
    groups += [QueryGroup("lab probe", name, lab["prefix"].tolist(), LAB_PROBE_TOKENS)
               for _, name in lab_ladder_names(params["lab_profile"])]
    outside = ladder.ablation_runs(params["lab_profile"]) + ladder.heldout_runs(params["lab_profile"])
    groups += [QueryGroup("outside-calibration probe", name, lab["prefix"].tolist(), LAB_PROBE_TOKENS)
               for _, name in (lab_ladder_names(params["lab_profile"], outside) if outside else [])]
    return groups
