"""The lab's profiles: shapes, validation and which sequences each run inserts."""

import pytest

from analysis.lab import ladder
from analysis.lab.config import CorpusConfig, LabConfigError, ModelConfig, RunConfig
from analysis.lab.corpus import Injection
from analysis.lab.train import param_count


@pytest.mark.parametrize("name", sorted(ladder.PROFILES))
def test_profiles_have_the_runs_the_chapters_need(name):
    prof = ladder.PROFILES[name]
    table = prof.table()
    ladder_runs = table[table["family"].str.startswith("ladder")]
    assert set(ladder_runs["family"]) == {"ladder-wide", "ladder-deep"}
    assert sorted(table.loc[table["family"] == "range", "window"]) == sorted(ladder.RANGE_WINDOWS)
    perturbed = table[table["family"] == "perturbed"]
    assert len(perturbed) == 4 and perturbed["d_model"].nunique() == 2 and perturbed["tokens"].nunique() == 2
    # every perturbed run has a standard twin: same model, budget and seed
    for run in perturbed["run"]:
        p, s = prof.run(run), prof.run(run.replace("pert-", "std-"))
        assert (p.model, p.tokens, p.seed, s.inject) == (s.model, s.tokens, s.seed, False)
    # the injection-range runs share one shape and budget, and a standard run has it
    ranges = [r for r in prof.runs if r.family == "range"]
    assert len({(r.model, r.tokens) for r in ranges}) == 1
    assert any(r.family == "standard" and (r.model, r.tokens) == (ranges[0].model, ranges[0].tokens)
               for r in prof.runs)


def test_range_counterfactual_is_added_only_when_missing():
    table = ladder.get_profile("default").table()
    assert table.loc[table["run"] == "std-range", ["d_model", "tokens"]].values.tolist() == [[128, 3_000_000]]
    assert (table["run"] == "std-range").sum() == 1
    # a range budget equal to a perturbed budget reuses that perturbed run's standard twin
    prof = ladder._profile(CorpusConfig(), 512, 128, wide=(16, 32), deep=(16, 24), wide_tokens=1000,
                           deep_tokens=1000, small=16, large=32, budgets=(1000, 2000), range_tokens=2000,
                           range_max_copies=None, range_width=32)
    assert "std-range" not in {r.name for r in prof.runs}


def test_default_ladder_has_ten_models_over_twenty_fold_in_two_families():
    prof = ladder.PROFILES["default"]
    runs = [r for r in prof.runs if r.family.startswith("ladder")]
    params = [param_count(r.model, prof.vocab_size) for r in runs]
    assert len(runs) >= 10 and max(params) / min(params) >= 20
    tokens = {r.family: r.tokens for r in runs}
    assert tokens["ladder-wide"] != tokens["ladder-deep"]  # the families differ in training length too


def test_duplicate_sizes_in_a_ladder_fail_before_training():
    m = ModelConfig(2, 32, 1, 128)
    runs = (RunConfig("a", m, 1000, family="ladder-x"), RunConfig("b", m, 1000, family="ladder-x"))
    with pytest.raises(LabConfigError, match="duplicate sizes"):
        ladder.LabProfile(CorpusConfig(), 512, runs)
    with pytest.raises(LabConfigError, match="duplicated: \\['a'\\]"):
        ladder.LabProfile(CorpusConfig(), 512, (runs[0], runs[0]))


def test_unknown_profile_names_the_allowed_ones():
    with pytest.raises(LabConfigError, match="lab profile must be one of \\['default', 'smoke'\\]"):
        ladder.get_profile("big")


def test_range_runs_insert_only_the_lower_copy_levels():
    injs = [Injection(f"s{c}", "qa", "text", c) for c in (0, 1, 4, 16, 64)]
    m = ModelConfig(2, 32, 1, 128)
    assert len(ladder.run_injections(RunConfig("p", m, 1000, inject=True), injs)) == 5
    kept = ladder.run_injections(RunConfig("r", m, 1000, inject=True, window="q2", max_copies=16), injs)
    assert [i.copies for i in kept] == [0, 1, 4, 16]
    for name in ladder.PROFILES:  # the profiles' injection-range runs insert every level
        assert all(r.max_copies is None for r in ladder.get_profile(name).runs)
    with pytest.raises(LabConfigError, match="max_copies"):
        RunConfig("r", m, 1000, max_copies=16)
    with pytest.raises(LabConfigError, match="max_copies"):
        RunConfig("r", m, 1000, inject=True, max_copies=0)


@pytest.mark.parametrize(
    "kwargs, field",
    [({"popular_copies": -1}, "popular_copies"), ({"duplicate_levels": (0, 4, 4)}, "duplicate_levels"),
     ({"injection_tasks": ("poems",)}, "injection_tasks")],
)
def test_bad_corpus_config_names_the_field(kwargs, field):
    with pytest.raises(LabConfigError, match=field):
        CorpusConfig(**kwargs)


def test_bad_run_config_names_the_field():
    m = ModelConfig(2, 32, 1, 128)
    with pytest.raises(LabConfigError, match="window must be one of"):
        RunConfig("r", m, 1000, inject=True, window="q5")
    with pytest.raises(LabConfigError, match="tokens must be a positive integer"):
        RunConfig("r", m, -5)
    with pytest.raises(LabConfigError, match="divisible by n_head"):
        ModelConfig(2, 30, 4, 128)


def test_model_names_keep_profiles_apart():
    assert ladder.model_name("default", "wide-32") == "lab:wide-32"
    assert ladder.model_name("smoke", "wide-32") == "lab:smoke/wide-32"


def test_build_lab_refuses_an_unknown_run_or_family_before_training():
    from analysis.lab.config import LabConfigError

    with pytest.raises(LabConfigError, match="no run 'wide-999'"):
        ladder.build_lab("smoke", runs=["wide-999"], progress=False)
    with pytest.raises(LabConfigError, match="no run of family 'ladder-huge'"):
        ladder.build_lab("smoke", family="ladder-huge", progress=False)


def test_design_facts_are_computed_from_the_profile():
    facts = ladder.design_facts("default")
    assert facts["levels"] == "0/1/4/16/64/256"
    assert facts["per_level"] == "4 per task at 0/1/4/16/64 copies; 1 per task at 256 copies"
    # 6 tasks x (4 x (1 + 4 + 16 + 64) + 1 x 256) = 3,576 copies; a quarter of 732 steps x 32 rows
    assert facts["n_copies"] == "3,576"
    assert facts["range_ratio"] == "2" and facts["range_tokens"] == "3M"
    assert facts["quarter_share"] == f"{3576 / (0.25 * 732 * 32):.0%}"
