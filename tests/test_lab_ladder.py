"""The lab's profiles: shapes, validation and which sequences each run inserts."""

from dataclasses import replace

import pytest

from analysis.lab import design, ladder, profiles
from analysis.lab.config import CorpusConfig, LabConfigError, ModelConfig, RunConfig
from analysis.lab.corpus import Injection
from analysis.lab.train import param_count


@pytest.mark.parametrize("name", sorted(profiles.PROFILES))
def test_profiles_have_the_runs_the_chapters_need(name):
    prof = profiles.PROFILES[name]
    table = prof.table()
    ladder_runs = table[table["family"].str.startswith("ladder")]
    assert set(ladder_runs["family"]) == {"ladder-wide", "ladder-deep"}
    assert sorted(table.loc[table["family"] == "range", "window"]) == sorted(profiles.RANGE_WINDOWS)
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


def _small_profile(range_tokens):
    return profiles._profile(CorpusConfig(), 512, 128, wide=(16, 32), deep=(16, 24), ladder_tokens=1000,
                           small=16, large=32, budgets=(1000, 2000), range_tokens=range_tokens,
                           range_max_copies=None, range_width=32, batch=4, base_lr=3e-3)


def test_range_counterfactual_is_added_only_when_missing():
    # a range budget equal to a perturbed budget reuses that perturbed run's standard twin
    assert "std-range" not in {r.name for r in _small_profile(2000).runs}
    assert "std-range" not in {r.name for r in profiles.get_profile("default").runs}
    # another budget gets its own standard run of the range runs' shape
    prof = _small_profile(3000)
    std = prof.run("std-range")
    assert (std.model.d_model, std.tokens, std.inject, std.lr) == (32, 3000, False, prof.run("wide-32").lr)
    assert [r.name for r in prof.runs].count("std-range") == 1


def test_standard_twins_at_the_ladder_budget_are_the_ladder_runs():
    prof = _small_profile(2000)
    label = {"name": "", "family": ""}
    # std-l1x differs from wide-32 only in its labels, so the two share one run key and train once
    assert replace(prof.run("std-l1x"), **label) == replace(prof.run("wide-32"), **label)
    assert replace(prof.run("std-l2x"), **label) != replace(prof.run("wide-32"), **label)


def test_ladder_lr_scales_with_the_square_roots_of_width_and_depth():
    assert profiles.ladder_lr(3e-3, 128) == 3e-3
    assert profiles.ladder_lr(3e-3, 32) == 6e-3  # 3e-3 * sqrt(4)
    assert profiles.ladder_lr(3e-3, 96) == 0.003464  # 3e-3 * sqrt(4/3) = 0.0034641..., four digits
    assert profiles.ladder_lr(3e-3, 128, 6) == 0.001732  # 3e-3 * sqrt(1/3) = 0.0017320...
    assert profiles.ladder_lr(3e-3, 96, 6) == 0.002  # 3e-3 * sqrt(4/3) * sqrt(1/3) = 0.002
    prof = profiles.PROFILES["default"]
    assert prof.run("deep-24").lr == profiles.ladder_lr(3e-3, 24, 6) == 0.004  # 3e-3 * sqrt(16/3) / sqrt(3)


def test_default_ladder_has_ten_models_over_ten_fold_on_one_budget():
    prof = profiles.PROFILES["default"]
    runs = [r for r in prof.runs if r.family.startswith("ladder")]
    params = [param_count(r.model, prof.vocab_size) for r in runs]
    assert len(runs) >= 10 and max(params) / min(params) >= 10
    # both families see the same tokens in the same order (same budget, batch and seed)
    assert len({(r.tokens, r.batch_size, r.seed) for r in runs}) == 1
    assert {r.family for r in runs} == {"ladder-wide", "ladder-deep"}


def test_duplicate_sizes_in_a_ladder_fail_before_training():
    m = ModelConfig(2, 32, 1, 128)
    runs = (RunConfig("a", m, 1000, family="ladder-x"), RunConfig("b", m, 1000, family="ladder-x"))
    with pytest.raises(LabConfigError, match="duplicate sizes"):
        profiles.LabProfile(CorpusConfig(), 512, runs)
    with pytest.raises(LabConfigError, match="duplicated: \\['a'\\]"):
        profiles.LabProfile(CorpusConfig(), 512, (runs[0], runs[0]))


def test_unknown_profile_names_the_allowed_ones():
    with pytest.raises(LabConfigError, match="lab profile must be one of \\['default', 'gpu', 'smoke'\\]"):
        profiles.get_profile("big")


def test_range_runs_insert_only_the_lower_copy_levels():
    injs = [Injection(f"s{c}", "qa", "text", c) for c in (0, 1, 4, 16, 64)]
    m = ModelConfig(2, 32, 1, 128)
    assert len(ladder.run_injections(RunConfig("p", m, 1000, inject=True), injs)) == 5
    kept = ladder.run_injections(RunConfig("r", m, 1000, inject=True, window="q2", max_copies=16), injs)
    assert [i.copies for i in kept] == [0, 1, 4, 16]
    for name in profiles.PROFILES:  # the profiles' injection-range runs insert every level
        assert all(r.max_copies is None for r in profiles.get_profile(name).runs)
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
    assert profiles.model_name("default", "wide-32") == "lab:wide-32"
    assert profiles.model_name("smoke", "wide-32") == "lab:smoke/wide-32"


def test_build_lab_refuses_an_unknown_run_or_family_before_training():
    from analysis.lab.config import LabConfigError

    with pytest.raises(LabConfigError, match="no run 'wide-999'"):
        ladder.build_lab("smoke", runs=["wide-999"], progress=False)
    with pytest.raises(LabConfigError, match="no run of family 'ladder-huge'"):
        ladder.build_lab("smoke", family="ladder-huge", progress=False)


def test_design_facts_are_computed_from_the_profile():
    facts = design.design_facts("default")
    assert facts["levels"] == "0/1/4/16/24/32/64"
    assert facts["per_level"] == ("17 per task at 0/1/4 copies; 8 per task at 16 copies; 6 per task at 24 "
                                  "copies; 4 per task at 32 copies; 3 per task at 64 copies")
    # 6 tasks x (17 x (1 + 4) + 8 x 16 + 6 x 24 + 4 x 32 + 3 x 64) = 6 x 677 = 4,062 copies;
    # a quarter of 2,441 steps x 8 rows, 3 copies a row
    assert facts["n_copies"] == "4,062"
    assert facts["range_ratio"] == "1" and facts["range_tokens"] == "2.5M"
    assert facts["copies_per_row"] == "3"
    assert facts["quarter_share"] == f"{4062 / (0.25 * 2441 * 8 * 3):.0%}" == "28%"
    assert facts["popular_copies"] == "2 to 16"
    # V·d + L·(16d² + 2d) + d at V = 4096: deep-6 28,110 to deep-40 317,960;
    # wide-56 330,008 to wide-128 1,049,216
    assert facts["family_ranges"] == "deep 0.03M to 0.32M; wide 0.33M to 1.05M"
    assert facts["families_disjoint"] == "do not overlap"


def test_a_profile_sets_weight_decay_per_ladder_width_and_the_other_runs_keep_the_default():
    prof = profiles._profile(CorpusConfig(), 512, 128, wide=(16, 32), deep=(16, 24), ladder_tokens=1000,
                           small=16, large=32, budgets=(1000, 1000), range_tokens=2000, range_max_copies=None,
                           range_width=16, batch=4, base_lr=3e-3, weight_decay={32: 0.4})
    assert prof.run("wide-32").weight_decay == 0.4
    assert prof.run("wide-16").weight_decay == prof.run("deep-24").weight_decay == 0.1
    # the large perturbed runs are width 32 but train at the default decay, so std-l1x
    # is not wide-32 under another name, while std-s1x still is wide-16
    assert {prof.run(n).weight_decay for n in ("pert-l1x", "std-l1x")} == {0.1}
    label = {"name": "", "family": ""}
    assert replace(prof.run("std-l1x"), **label) != replace(prof.run("wide-32"), **label)
    assert replace(prof.run("std-l1x"), **label) == replace(prof.run("wide-32"), weight_decay=0.1, **label)
    assert design.weight_decay_text(prof) == (
        "0.1, and 0.4 at width 32: at the common decay, trial runs showed held-out loss rising from the "
        "next smaller width to these (the comment on ladder.PROFILES gives the numbers)")
    assert design.weight_decay_text("smoke") == "0.1"


def test_the_default_lab_trains_every_run_at_one_weight_decay_and_its_families_do_not_overlap():
    prof = profiles.PROFILES["default"]
    assert {r.weight_decay for r in prof.runs} == {0.1}
    assert design.weight_decay_text(prof) == "0.1"
    # so the large standard run is the ladder's wide-128 and the small one wide-64: each trains once
    assert design.shared_twins_text(prof) == "std-s2x is wide-64, std-l2x is wide-128"
    size = {fam: [param_count(r.model, prof.vocab_size) for r in prof.runs if r.family == fam]
            for fam in ("ladder-wide", "ladder-deep")}
    # every 6-layer model is smaller than every 2-layer one: V·d + L·(16d² + 2d) + d at V = 4096
    assert max(size["ladder-deep"]) == 317_960 and min(size["ladder-wide"]) == 330_008


def test_weight_decay_for_a_width_outside_the_ladder_fails():
    with pytest.raises(LabConfigError, match=r"weight_decay names widths \[100\]"):
        profiles._profile(profiles.PROFILES["smoke"].corpus, 1024, 128, wide=(16, 32), deep=(16, 24),
                        ladder_tokens=1000, small=16, large=32, budgets=(1000, 2000), range_tokens=2000,
                        range_max_copies=None, range_width=16, batch=16, base_lr=3e-3,
                        weight_decay={100: 0.4})


def test_ablations_break_one_assumption_each():
    prof = profiles._profile(CorpusConfig(), 512, 128, wide=(16, 32), deep=(16, 24), ladder_tokens=1000,
                           small=16, large=32, budgets=(1000, 2000), range_tokens=2000, range_max_copies=None,
                           range_width=32, batch=4, base_lr=3e-3, ablation_width=32, heldout=(4, (8, 24)))
    base = prof.run("wide-32")
    over, exposed, uneven = (prof.run(n) for n in ("abl-overtrained", "abl-overexposed", "abl-uneven"))
    assert profiles.ablation_runs(prof) == ["abl-overtrained", "abl-overexposed", "abl-uneven"]
    # twice the tokens, nothing else changed; the popular excerpts at 4x their copies; and half of
    # the popular texts left out besides
    assert replace(over, name=base.name, family=base.family, tokens=1000) == base and over.tokens == 2000
    assert replace(exposed, name=base.name, family=base.family, popular_copies_factor=1) == base
    assert exposed.popular_copies_factor == 4 and exposed.popular_dropped == 0
    assert replace(uneven, name=base.name, family=base.family, popular_copies_factor=1,
                   popular_dropped=0.0) == base
    assert (uneven.popular_copies_factor, uneven.popular_dropped) == (4, 0.5)
    # an ablation's stream has a key of its own; every other run keeps the corpus's
    assert ladder.run_corpus_key(base, "k") == ladder.run_corpus_key(over, "k") == "k"
    keys = {ladder.run_corpus_key(r, "k") for r in (exposed, uneven)}
    assert len(keys) == 2 and "k" not in keys
    # the held-out family: another shape (4 layers), trained like the ladder, outside it
    assert profiles.heldout_runs(prof) == ["held-8", "held-24"]
    held = prof.run("held-24")
    assert (held.family, held.model.n_layer, held.tokens) == ("heldout", 4, 1000)
    assert held.lr == profiles.ladder_lr(3e-3, 24, 4)
    with pytest.raises(LabConfigError, match=r"ablation_width must be a width of the 2-layer ladder"):
        profiles._profile(CorpusConfig(), 512, 128, wide=(16, 32), deep=(16, 24), ladder_tokens=1000,
                        small=16, large=32, budgets=(1000, 2000), range_tokens=2000, range_max_copies=None,
                        range_width=32, batch=4, base_lr=3e-3, ablation_width=24)
    with pytest.raises(LabConfigError, match="popular_copies_factor"):
        replace(base, popular_copies_factor=0)
    with pytest.raises(LabConfigError, match="popular_dropped"):
        replace(base, popular_dropped=1.0)


def test_popular_exposure_stream_by_hand():
    from analysis.lab.corpus import Corpus, Document

    docs = [Document("p-0", "popular", "popular", "a b", 9, {}),
            Document("p-1", "popular", "popular", "c d", 2, {}),
            Document("b-0", "background", "popular", "e f", 3, {})]
    corpus = Corpus(CorpusConfig(), docs, [], [])
    # 4 x 9 and 4 x 2 popular copies; background keeps its 3
    assert sorted(corpus.training_texts(popular_factor=4)) == ["a b"] * 36 + ["c d"] * 8 + ["e f"] * 3
    assert sorted(corpus.training_texts()) == ["a b"] * 9 + ["c d"] * 2 + ["e f"] * 3
    # half of the two popular texts left out: one of them, the other at 4x; never the background
    dropped = corpus.dropped_popular(0.5)
    assert len(dropped) == 1 and dropped <= {"p-0", "p-1"} and corpus.dropped_popular(0.0) == set()
    kept = ({"p-0", "p-1"} - dropped).pop()
    text, copies = {"p-0": ("a b", 9), "p-1": ("c d", 2)}[kept]
    assert sorted(corpus.training_texts(popular_factor=4, popular_dropped=0.5)) == sorted(
        [text] * (4 * copies) + ["e f"] * 3)
    with pytest.raises(ValueError, match="popular_factor must be a positive integer"):
        corpus.training_texts(popular_factor=0)
    with pytest.raises(ValueError, match="popular_dropped must be a number"):
        corpus.training_texts(popular_dropped=1.0)


def test_run_keys_without_an_ablation_are_unchanged():
    # the new field joins a run's key only when it is not 1, so no existing run retrains
    from analysis.lab.train.runs import run_key

    class Tok:
        backend_tokenizer = type("B", (), {"to_str": lambda self: '{"model": {"merges": []}}'})()

        def get_vocab(self):
            return {"a": 0}

    run = profiles.PROFILES["smoke"].run("wide-32")
    key = run_key(run, [], Tok(), "k")["run"]
    assert "popular_copies_factor" not in key and "popular_dropped" not in key
    ablated = run_key(replace(run, popular_copies_factor=4, popular_dropped=0.5), [], Tok(), "k")["run"]
    assert ablated["popular_copies_factor"] == 4 and ablated["popular_dropped"] == 0.5
