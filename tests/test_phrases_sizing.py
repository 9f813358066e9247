"""Samples sized by the interval they must give: the sizing rules
(:mod:`analysis.stats.sizing`), the nested phrase sample, the chapter's sized run on
fake models, its plan and its parameters."""

import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from analysis.core.cache import QueryCache
from analysis.models import Answer, GenerationSettings, Model
from analysis.params import ParameterError
from analysis.phrases import method_rates, run
from analysis.phrases.claims import state_media_gap_claims
from analysis.phrases.errors import PhrasesError
from analysis.phrases.method_rates import score
from analysis.phrases.params import PARAMS
from analysis.phrases.run import plan, prompts, query_sized, sample_phrases
from analysis.phrases.text_sizing import SIZING_TABLE_COLUMNS, sizing_note, sizing_table, sizing_values
from analysis.stats import (
    StatsError,
    difference_half_width,
    n_for_difference,
    planning_rate,
    two_stage_n,
    zero_rates_n,
)

Z2 = 1.959963984540054 ** 2


def _newcombe_half_width(k1, n1, k2, n2):
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    return (hi - lo) / 2


# --- the sizing rules -------------------------------------------------------------------------


def test_at_rates_zero_the_half_width_is_z2_over_n_plus_z2():
    for n in (10, 124, 125, 1000):
        assert difference_half_width(0, n, 0, n) == pytest.approx(Z2 / (n + Z2), rel=1e-6)
    # ±3 points: n ≥ z²(1 − h)/h = 124.2, so 125 (124 gives ±3.005)
    assert n_for_difference(0, 0, 0.03) == zero_rates_n(0.03) == 125
    assert difference_half_width(0, 124, 0, 124) > 0.03 >= difference_half_width(0, 125, 0, 125)


@pytest.mark.parametrize("p1, p2, h", [(0.0, 0.0, 0.03), (0.05, 0.01, 0.03), (0.3, 0.2, 0.05),
                                       (0.5, 0.5, 0.02), (0.9, 0.0, 0.1)])
def test_the_returned_n_is_the_first_to_reach_the_half_width(p1, p2, h):
    n = n_for_difference(p1, p2, h)
    # statsmodels itself, at the expected counts: reached at n, missed at n − 1
    assert _newcombe_half_width(p1 * n, n, p2 * n, n) <= h < _newcombe_half_width(
        p1 * (n - 1), n - 1, p2 * (n - 1), n - 1)
    assert difference_half_width(p1, n, p2, n) == pytest.approx(_newcombe_half_width(p1 * n, n, p2 * n, n))


def test_n_falls_as_the_half_width_grows_and_is_capped():
    ns = [n_for_difference(0.02, 0.01, h) for h in (0.01, 0.02, 0.03, 0.05, 0.1)]
    assert ns == sorted(ns, reverse=True) and len(set(ns)) == len(ns)
    # near one half the binomial variance is largest: the most trials
    assert n_for_difference(0.5, 0.5, 0.03) > n_for_difference(0.1, 0.1, 0.03) > n_for_difference(0, 0, 0.03)
    assert n_for_difference(0.5, 0.5, 0.001, n_max=500) == 500  # unreachable: the cap


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1, 1.5])
def test_a_half_width_outside_zero_one_names_the_parameter(bad):
    with pytest.raises(StatsError, match="half_width"):
        n_for_difference(0.1, 0.1, bad)
    with pytest.raises(StatsError, match="half_width"):
        two_stage_n(0, 60, 0, 60, bad)


def test_bad_rates_and_sizes_name_the_parameter():
    with pytest.raises(StatsError, match="p1"):
        n_for_difference(1.2, 0.1, 0.03)
    with pytest.raises(StatsError, match="n2"):
        difference_half_width(0.1, 10, 0.1, 0)
    with pytest.raises(StatsError, match="k must"):
        planning_rate(7, 5)


def test_the_planning_rate_is_the_pilot_bound_nearest_one_half():
    # one-sided 80%: z = 0.8416, so the Wilson upper bound of 0 / 60 is z²/(60 + z²) = 1.17%
    z2 = 0.8416212335729143 ** 2
    assert planning_rate(0, 60) == pytest.approx(z2 / (60 + z2))
    assert planning_rate(30, 60) == 0.5  # the interval holds one half
    assert 0.5 < planning_rate(58, 60) < 58 / 60  # above one half: the lower bound
    assert planning_rate(1, 60) > 1 / 60


def test_a_pilot_that_saw_nothing_does_not_promise_the_smallest_sample():
    # the pilot's point rates (0 and 0) would plan 125 per group; its 80% bounds plan more
    assert two_stage_n(0, 60, 0, 60, 0.03) == n_for_difference(planning_rate(0, 60), planning_rate(0, 60),
                                                               0.03) == 180
    assert two_stage_n(0, 120, 0, 120, 0.03) == 151  # a larger pilot bounds the rates closer to 0
    assert two_stage_n(1, 120, 0, 120, 0.03) == 183
    assert two_stage_n(5, 120, 0, 120, 0.03, n_max=300) == 300  # capped at the population
    assert two_stage_n(0, 400, 0, 400, 0.03) == 400  # never below the pilot: it is already spent


# --- the nested sample -----------------------------------------------------------------------

CHARS = [chr(0x4E00 + i) for i in range(3000)]


def _phrases(per_type: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 2 * per_type
    ends = ["".join(rng.choice(CHARS, 12)) for _ in range(n)]
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)],
                         "type": ["propaganda"] * per_type + ["culturax"] * per_type,
                         "start": [f"开头{i}" for i in range(n)], "end": ends})


def test_a_larger_sample_extends_a_smaller_one():
    table = _phrases(50)
    small, large = sample_phrases(table, 7, seed=3), sample_phrases(table, 20, seed=3)
    assert set(small["id"]) < set(large["id"])
    for n in range(1, 51):  # every size nests in the next
        smaller, larger = (set(sample_phrases(table, m, seed=3)["id"]) for m in (n, n + 1))
        assert smaller <= larger
    assert small["type"].value_counts().to_dict() == {"propaganda": 7, "culturax": 7}
    assert list(large.index) == sorted(large.index)  # the file's order
    assert set(sample_phrases(table, 7, seed=4)["id"]) != set(small["id"])  # the seed draws
    with pytest.raises(ValueError, match="n_per_type"):
        sample_phrases(table, 0)


# --- the sized run -----------------------------------------------------------------------------

REFUSAL = "作为一个人工智能助手，我不能继续"
MISS = "完全不同的一段文字内容在这里出现"


class Rule(Model):
    """Answers by rule: ``answer(phrase_id) -> text``; records every prompt it was asked."""

    backend = "scripted"

    def __init__(self, table, answer, name="rule"):
        # a query cache of its own: two rules of one name never share answers
        super().__init__(name, cache=QueryCache(Path(tempfile.mkdtemp()) / "q.sqlite"))
        self.is_chat = True
        self.by_prompt = dict(zip(prompts(table, chat=True), table["id"]))
        self.ends = dict(zip(table["id"], table["end"]))
        self.answer, self.seen = answer, []

    def _generate(self, requests):
        for i, r in enumerate(requests):
            pid = self.by_prompt[r.prompt[-1]["content"]]
            self.seen.append(pid)
            yield i, Answer(self.answer(pid, self.ends[pid]))


def _sized(models, table, **kw):
    kw = {"n_per_type": 300, "seed": 0, "target_half_width": 0.03, "pilot_per_type": 120} | kw
    return query_sized(models, table, GenerationSettings(max_new_tokens=8), None, **kw)


def test_each_model_draws_the_sample_its_pilot_plans():
    table = _phrases(300)
    pid_type = dict(zip(table["id"], table["type"]))
    cx = sorted(i for i in table["id"] if pid_type[i] == "culturax")
    refused = set(cx[::2])  # half the CulturaX phrases refused: half the pilot's CulturaX scorable
    models = {"blank": Rule(table, lambda pid, end: MISS, "blank"),
              "refuser": Rule(table, lambda pid, end: REFUSAL if pid in refused else MISS, "refuser")}
    completions, sizing = _sized(models, table)
    sizing = sizing.set_index("model")
    # nothing reproduced: 0 of 120 and 0 of 120 plan 151 per type
    blank = sizing.loc["blank"]
    assert (blank.pilot_matched_first, blank.pilot_total_first, blank.pilot_total_second) == (0, 120, 120)
    assert blank.planned == two_stage_n(0, 120, 0, 120, 0.03) == 151 == blank.n_per_type
    assert not blank.capped
    want = sample_phrases(table, 151, seed=0)
    got = completions[completions["model"] == "blank"]
    assert got["phrase_id"].tolist() == want["id"].tolist()  # the sample's rows, in its order
    # the pilot was asked once, then only the rest: nothing twice
    seen = models["blank"].seen
    assert len(seen) == len(set(seen)) == 302
    assert set(seen[:240]) == set(sample_phrases(table, 120, seed=0)["id"])
    # about half the CulturaX pilot scorable: the plan on k of ~60 is drawn on twice as many phrases
    ref = sizing.loc["refuser"]
    assert ref.pilot_total_first == 120 and 40 < ref.pilot_total_second < 80
    planned = two_stage_n(0, 120, 0, int(ref.pilot_total_second), 0.03)
    assert ref.planned == planned
    assert ref.n_per_type == min(300, int(np.ceil(planned * 120 / ref.pilot_total_second)))
    assert ref.n_per_type > blank.n_per_type and ref.n_phrases == 2 * ref.n_per_type
    # the achieved half width of the blank model: 0 of 151 against 0 of 151
    rates = method_rates.rates(score(completions, table))
    claims = state_media_gap_claims(rates, pd.DataFrame(
        {"model": ["x", "x"], "type": ["propaganda", "culturax"], "rate_pct": [5.0, 1.0]}), list(models))
    values = sizing_values(sizing.reset_index(), claims)
    assert values["size_n_blank"] == "151"
    assert values["size_width_blank"] == f"±{100 * Z2 / (151 + Z2):.1f} points"
    assert values["size_pilot_blank"] == "0 of 120 state-media and 0 of 120 CulturaX"
    table_md = sizing_table(sizing.reset_index(), claims)
    assert list(table_md.columns) == SIZING_TABLE_COLUMNS and len(table_md) == 2
    assert "Every model" in sizing_note(sizing.reset_index(), claims, 0.03)


def test_a_model_that_reproduces_its_pilot_is_capped_at_n_per_type():
    table = _phrases(200)
    copier = Rule(table, lambda pid, end: end if int(pid[1:]) % 3 == 0 else MISS)  # a third reproduced
    _, sizing = _sized({"copier": copier}, table, n_per_type=180, pilot_per_type=50)
    row = sizing.iloc[0]
    assert row.pilot_matched_first > 0 and row.n_per_type == 180 and row.capped
    assert row.planning_rate_first > row.pilot_matched_first / row.pilot_total_first


def test_a_pilot_as_large_as_the_sample_is_a_fixed_sample_and_none_target_is_fixed():
    table = _phrases(40)
    m = Rule(table, lambda pid, end: MISS)
    _, sizing = _sized({"m": m}, table, n_per_type=30, pilot_per_type=30)
    assert sizing.iloc[0].n_per_type == 30 and len(m.seen) == 60
    m2 = Rule(table, lambda pid, end: MISS)
    completions, fixed = _sized({"m": m2}, table, n_per_type=25, target_half_width=None)
    assert fixed.iloc[0].n_per_type == 25 and pd.isna(fixed.iloc[0].pilot_total_first)
    assert completions["phrase_id"].tolist() == sample_phrases(table, 25)["id"].tolist()
    with pytest.raises(PhrasesError, match="pilot_per_type"):
        _sized({"m": m2}, table, n_per_type=10, pilot_per_type=20)


# --- the plan and the parameters ----------------------------------------------------------------


def test_the_plan_counts_the_pilot_exactly_and_the_rest_at_most(monkeypatch):
    table = _phrases(20)
    monkeypatch.setattr(run.data, "phrases", lambda: table)
    monkeypatch.setattr(run, "english_phrases", lambda n, seed=0: table.head(2))
    monkeypatch.setattr(run, "lab_corpus", lambda profile: SimpleNamespace(manifest=lambda: pd.DataFrame(
        {"kind": pd.Series([], dtype=str)})))
    groups = {g.part: g for g in plan(PARAMS.resolve("smoke", target_half_width=0.3, pilot_per_type=2))}
    pilot, rest = groups["phrases (pilot)"], groups["phrases beyond the pilot"]
    assert (pilot.queries, pilot.bound) == (4, "exact") and (rest.queries, rest.bound) == (8, "at most")
    assert set(pilot.prompts).isdisjoint(rest.prompts)
    assert groups["re-query of short completions"].queries == 12  # at most the largest sample
    fixed = {g.part: g for g in plan(PARAMS.resolve("smoke"))}
    assert (fixed["phrases"].queries, fixed["phrases"].bound) == (12, "exact")


@pytest.mark.parametrize("overrides, message", [
    ({"target_half_width": 1.0}, "target_half_width must be a number in (0, 1)"),
    ({"target_half_width": 0.0}, "target_half_width must be a number in (0, 1)"),
    ({"target_half_width": "wide"}, "target_half_width must be a number"),
    ({"pilot_per_type": 0}, "pilot_per_type must be an integer in [1, inf], got 0"),
    ({"pilot_per_type": 400}, "pilot_per_type must be at most n_per_type (300"),
    ({"n_per_type": 100, "pilot_per_type": 101}, "pilot_per_type must be at most n_per_type (100"),
])
def test_sizing_parameters_fail_before_any_work(overrides, message):
    with pytest.raises(ParameterError) as err:
        PARAMS.resolve("default", **overrides)
    assert message in str(err.value)


def test_the_profiles_size_the_default_sample_only():
    assert PARAMS.resolve("smoke")["target_half_width"] is None
    assert PARAMS.resolve("paper")["target_half_width"] is None
    default = PARAMS.resolve("default")
    sized = (default["target_half_width"], default["pilot_per_type"], default["n_per_type"])
    assert sized == (0.03, 120, 300)
    # a pilot above the smoke sample is fine where nothing is sized
    assert PARAMS.resolve("smoke", pilot_per_type=400)["pilot_per_type"] == 400
