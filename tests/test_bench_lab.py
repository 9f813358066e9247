"""The helpers of scripts/bench_lab.py's lever arms: the ladder's shapes, the AdamW
implementations, the comparison of two arms' tensors and the tokens/s of step times."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from analysis.lab.config import ModelConfig, RunConfig
from analysis.lab.profiles import get_profile
from analysis.lab.train import build_model, make_optimizer, train_step

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import bench_lab  # noqa: E402

TINY = ModelConfig(n_layer=1, d_model=8, n_head=1, d_ff=16, context=8)
VOCAB = 32


def _run(name="t", model=TINY, family="standard", batch_size=2, **kw) -> RunConfig:
    return RunConfig(name, model, tokens=1_000, family=family, batch_size=batch_size, **kw)


def test_ladder_shapes_of_the_default_profile():
    shapes = bench_lab.ladder_shapes(get_profile("default").runs)
    assert [r.name for r in shapes] == [
        "wide-56", "wide-64", "wide-80", "wide-96", "wide-128",
        "deep-6", "deep-10", "deep-16", "deep-24", "deep-40",
    ]
    first, last = shapes[0], shapes[-1]
    assert (first.model.n_layer, first.model.d_model, first.model.n_head, first.model.d_ff) == (2, 56, 1, 224)
    assert (last.model.n_layer, last.model.d_model, last.model.n_head, last.model.d_ff) == (6, 40, 1, 160)
    assert {(r.batch_size, r.model.context) for r in shapes} == {(8, 128)}


def test_ladder_shapes_keep_the_first_run_of_each_shape():
    other = ModelConfig(n_layer=2, d_model=8, n_head=1, d_ff=16, context=8)
    runs = [
        _run("std-a", family="standard"),  # not a ladder family
        _run("wide-8", family="ladder-wide"),
        _run("wide-8-again", family="ladder-deep", lr=1e-2),  # same shape: left out
        _run("wide-8-b4", family="ladder-wide", batch_size=4),  # another batch: a shape of its own
        _run("deep-8", model=other, family="ladder-deep"),
    ]
    assert [r.name for r in bench_lab.ladder_shapes(runs)] == ["wide-8", "wide-8-b4", "deep-8"]


def test_max_abs_diff_of_hand_values():
    a = [torch.tensor([1.0, 2.0]), torch.tensor([[3.0]])]
    b = [torch.tensor([1.0, 2.5]), torch.tensor([[2.75]])]
    assert bench_lab.max_abs_diff(a, b) == {"bit_identical": False, "max_abs_diff": 0.5}
    assert bench_lab.max_abs_diff(a, [t.clone() for t in a]) == {"bit_identical": True, "max_abs_diff": 0.0}
    # one float32 ulp at 1.0 is not identical
    ulp = torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0]))
    assert bench_lab.max_abs_diff([torch.tensor([1.0])], [ulp]) == {"bit_identical": False,
                                                                      "max_abs_diff": 2.0**-23}


def test_max_abs_diff_needs_tensors_of_the_same_shapes():
    with pytest.raises(ValueError, match="a and b must hold tensors of the same shapes"):
        bench_lab.max_abs_diff([torch.zeros(2)], [torch.zeros(3)])
    with pytest.raises(ValueError, match="a and b"):
        bench_lab.max_abs_diff([torch.zeros(2)], [])


def test_tokens_per_second_at_the_median_step():
    assert bench_lab.tokens_per_second([0.1, 0.2, 10.0], 1024) == pytest.approx(5120.0)
    assert bench_lab.tokens_per_second([0.5], 8) == 16.0
    with pytest.raises(ValueError, match="seconds"):
        bench_lab.tokens_per_second([], 1024)


def test_todays_optimizer_is_the_fused_adamw():
    model = build_model(TINY, VOCAB, 0, seed=0)
    assert bench_lab.adamw_impl(make_optimizer(model, _run())) == "fused"


@pytest.mark.parametrize("impl", ["fused", "foreach", "forloop"])
def test_adamw_variant_keeps_the_labs_groups(impl):
    model = build_model(TINY, VOCAB, 0, seed=0)
    run = _run(lr=1e-2, weight_decay=0.3)
    variant = bench_lab.adamw_variant(model, run, impl)
    assert bench_lab.adamw_impl(variant) == impl
    today = make_optimizer(model, run)
    assert len(variant.param_groups) == len(today.param_groups) == 2
    for mine, theirs in zip(variant.param_groups, today.param_groups):
        assert [id(p) for p in mine["params"]] == [id(p) for p in theirs["params"]]
        for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
            assert mine[key] == theirs[key]
    assert [g["weight_decay"] for g in variant.param_groups] == [0.3, 0.0]
    assert variant.defaults["betas"] == (0.9, 0.95) and variant.defaults["eps"] == 1e-8


def test_the_fused_variant_steps_as_todays_optimizer():
    run = _run(lr=1e-2)
    x = torch.randint(1, VOCAB, (2, TINY.context), generator=torch.Generator().manual_seed(0))
    y = torch.full_like(x, -100)
    y[:, :-1] = x[:, 1:]
    weights = []
    for build in (make_optimizer, lambda m, r: bench_lab.adamw_variant(m, r, "fused")):
        model = build_model(TINY, VOCAB, 0, seed=0)
        optimizer = build(model, run)
        for _ in range(3):
            train_step(model, optimizer, x, y, run.lr)
        weights.append(list(model.state_dict().values()))
    assert bench_lab.max_abs_diff(*weights) == {"bit_identical": True, "max_abs_diff": 0.0}


def test_adamw_variant_names_the_allowed_implementations():
    model = build_model(TINY, VOCAB, 0, seed=0)
    allowed = r"impl must be one of \['foreach', 'forloop', 'fused'\], got 'adam'"
    with pytest.raises(ValueError, match=allowed):
        bench_lab.adamw_variant(model, _run(), "adam")


def _arm(tps, ratio, same, diff, tpc=None, ratio_cpu=None):
    weights = {"bit_identical": same, "max_abs_diff": diff}
    return {"tokens_per_second": tps, "ratio": ratio, "tokens_per_cpu_second": tpc, "ratio_cpu": ratio_cpu,
            "weights": weights}


RESULTS = [
    {"run": "wide-32", "params": 164_000, "arms": {
        "today": _arm(13874.4, 1.0, True, 0.0, 20000.0, 1.0),
        "compiled": _arm(22530.0, 1.624, False, 1.0e-05, 30000.0, 1.5)}},
    {"run": "deep-128", "params": 2_100_000, "arms": {
        "today": _arm(2969.0, 1.0, True, 0.0, 3500.6, 1.0),
        "compiled": _arm(3000.0, 1.0104, True, 0.0, 3300.0, 0.9427)}},
]


def test_lever_table_of_hand_results():
    assert bench_lab.lever_table(RESULTS) == [
        "     run  params  today tok/s     compiled",
        " wide-32   0.16M        13874  1.62 ~1e-05",
        "deep-128   2.10M         2969       1.01 =",
    ]
    assert bench_lab.lever_table(RESULTS, "cpu_second") == [
        "     run  params  today tok/cpu-s     compiled",
        " wide-32   0.16M            20000  1.50 ~1e-05",
        "deep-128   2.10M             3501       0.94 =",
    ]
    with pytest.raises(ValueError, match="per must be 'second' or 'cpu_second', got 'minute'"):
        bench_lab.lever_table(RESULTS, "minute")
