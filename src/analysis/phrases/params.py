"""The chapter's parameters (profiles and their declaration) and the source's table.

:data:`PARAMS` declares every parameter of ``notebooks/phrases.md`` once (see
:mod:`analysis.params`); :data:`PROFILES` gives their values per profile.
:func:`load_source_rates` reads ``data/phrases_source_2024.csv``, the rates the
source published for its five 2024 models. The source's scorer constants are in
:mod:`.source`.
"""

from __future__ import annotations

import pandas as pd

from analysis.core.paths import DATA_DIR
from analysis.lab.profiles import check_runs, lab_profile_param
from analysis.params import Declaration, Param, ParameterError
from analysis.phrases.files import read_completions
from analysis.phrases.source import SYSTEM_PROMPTS, THRESHOLD

SOURCE_RATES_FILE = "phrases_source_2024.csv"

PROFILES = {
    "smoke": dict(
        models=["smollm2-135m-instruct"], n_per_type=6, target_half_width=None, max_new_tokens=24,
        requery_max_new_tokens=48, n_english_per_type=4, english_max_new_tokens=16,
        lab_profile="smoke", lab_runs=None, lab_max_new_tokens=24,
    ),
    "default": dict(
        # sized: a pilot of 120 per type, then as many as ±3 points on the difference need, at most 300
        models=["smollm2-135m-instruct", "gemma3-270m"], n_per_type=300, target_half_width=0.03,
        pilot_per_type=120, max_new_tokens=64,
        requery_max_new_tokens=256, n_english_per_type=60, english_max_new_tokens=32,
        lab_profile="default", lab_runs=None, lab_max_new_tokens=32,
    ),
    # the lab has no larger profile: the paper profile scores the book's lab; it runs every
    # phrase, as the source did, so its sample is not sized
    "paper": dict(
        models=["smollm2-135m-instruct", "gemma3-270m"], n_per_type=1000, target_half_width=None,
        # the 2026 setup of the source: its budget with its system message
        max_new_tokens=256, system_prompt="2026",
        requery_max_new_tokens=2048, n_english_per_type=1000, english_max_new_tokens=64,
        lab_profile="default", lab_runs=None, lab_max_new_tokens=32,
    ),
}


def _check_target_half_width(value, settings) -> None:
    if value is not None and not 0 < value < 1:
        raise ParameterError(f"target_half_width must be a number in (0, 1) (a share: 0.03 is ±3 points) "
                             f"or None, got {value!r}")


def _check_pilot(value, settings) -> None:
    n_max = settings.get("n_per_type")
    if settings.get("target_half_width") is not None and isinstance(n_max, int) and value > n_max:
        raise ParameterError(f"pilot_per_type must be at most n_per_type ({n_max}, the most a sized sample "
                             f"draws) when target_half_width is set, got {value}")


def _check_lab_runs(value, settings) -> None:
    if value is not None:
        check_runs("lab_runs", value, settings["lab_profile"], family="ladder", at_least=2)


PARAMS = Declaration(
    "phrases",
    PROFILES,
    (
        lab_profile_param(),
        Param("models", "models asked to continue the phrases (chat models get the chat prompt)",
              kind="models"),
        Param("n_per_type", "phrases per type, drawn at random (1,000 exist; more means all); with "
              "target_half_width, the most a model's sized sample draws", kind="int", lo=1),
        Param("target_half_width", "half width of the 95% interval of the state-media − CulturaX "
              "difference each model's sample is sized to reach (0.03: ±3 points); None: n_per_type "
              "phrases per type", kind="float", lo=0.0, hi=1.0, nullable=True,
              check=_check_target_half_width),
        Param("pilot_per_type", "phrases per type asked first, whose rates plan a sized sample "
              "(used with target_half_width; equal to n_per_type, a fixed sample of that size)",
              kind="int", lo=1, default=120, check=_check_pilot),
        Param("max_new_tokens", "token budget of a completion", kind="int", lo=1, hi=4096),
        Param("system_prompt", "system message of a chat model's Chinese prompts: '2026' (the source's "
              "for its 2026 models: continue directly, no commentary) or 'none' (its 2024 setup)",
              kind="choice", choices=tuple(SYSTEM_PROMPTS), default="none"),
        Param("n_english_per_type", "English counterpart phrases per type", kind="int", lo=1),
        Param("seed", "seed of the phrase sample", kind="int", lo=0, default=0),
        Param("threshold", "normalized edit distance below which an ending counts as reproduced",
              kind="float", lo=0.0, hi=1.0, default=THRESHOLD),
        Param("completions_file", "a completions JSON in the source's schema, to rescore", kind="file",
              nullable=True, parse=read_completions),
        Param("lab_runs", "lab ladder runs scored on the phrases the lab trained at known copy levels "
              "(default: the whole ladder)", kind="names", nullable=True, check=_check_lab_runs),
    ),
    profile_help={"smoke": "6 phrases per type, one model (CI)",
                  "default": "the published book's sample: per model, as many phrases as ±3 points need",
                  "paper": "all 2,000 phrases at the source's budgets (hours per local model)"},
)


def load_source_rates() -> pd.DataFrame:
    """The source's published rates (``data/phrases_source_2024.csv``): ``model``,
    ``type`` (``propaganda`` or ``culturax``) and ``rate_pct``, in percent."""
    return pd.read_csv(DATA_DIR / SOURCE_RATES_FILE, comment="#")
