"""Run fingerprints: the weights hash against one computed by hand, its order and
file independence, a run's final losses, and comparing two labs' fingerprints.
Nothing trains: the modules are a few hand-set weights."""

import hashlib
import math
import struct
from collections import OrderedDict

import pandas as pd
import pytest
import torch
from safetensors.torch import save_file

from analysis.lab import compare_fingerprints, run_fingerprint, weights_sha256
from analysis.lab.fingerprint import checkpoint_sha256
from analysis.lab.train import RunResult

WEIGHT = [[1.0, 2.0, 3.0], [4.0, 5.0, 0.5]]
BIAS = [0.5, -0.25]


def _linear() -> torch.nn.Linear:
    layer = torch.nn.Linear(3, 2)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(WEIGHT))
        layer.bias.copy_(torch.tensor(BIAS))
    return layer


def test_weights_hash_is_sorted_names_shapes_and_little_endian_float32():
    expected = hashlib.sha256()
    expected.update(b"bias 2\n" + struct.pack("<2f", *BIAS))  # "bias" sorts before "weight"
    expected.update(b"weight 2,3\n" + struct.pack("<6f", *WEIGHT[0], *WEIGHT[1]))
    assert weights_sha256(_linear().state_dict()) == expected.hexdigest()


def test_weights_hash_changes_when_one_weight_moves_by_1e_7():
    layer = _linear()
    before = weights_sha256(layer.state_dict())
    with torch.no_grad():
        layer.weight[1, 2] += 1e-7  # 0.5 + 1e-7 is another float32 (its spacing there is 6e-8)
    assert layer.weight[1, 2].item() != 0.5
    assert weights_sha256(layer.state_dict()) != before


class _AB(torch.nn.Module):
    def __init__(self, first: str):
        super().__init__()
        for name in (first, "b" if first == "a" else "a"):
            self.register_parameter(name, torch.nn.Parameter(torch.zeros(2, 2)))


def test_weights_hash_ignores_insertion_order_dtype_and_storage():
    state = _linear().state_dict()
    reversed_state = OrderedDict(reversed(list(state.items())))
    assert list(reversed_state) != list(state)
    assert weights_sha256(reversed_state) == weights_sha256(state)
    # the same weights loaded into modules that register their parameters in another order
    ab, ba = _AB("a"), _AB("b")
    values = {"a": torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "b": torch.tensor([[5.0, 6.0], [7.0, 8.0]])}
    ab.load_state_dict(values)
    ba.load_state_dict(OrderedDict(reversed(list(values.items()))))
    assert list(ab.state_dict()) == ["a", "b"] and list(ba.state_dict()) == ["b", "a"]
    assert weights_sha256(ab.state_dict()) == weights_sha256(ba.state_dict())
    # float64 copies of float32 values, and a transposed (non-contiguous) view made contiguous
    assert weights_sha256({k: v.double() for k, v in state.items()}) == weights_sha256(state)
    w = torch.tensor(WEIGHT).t().contiguous().t()
    assert not w.is_contiguous()
    assert weights_sha256({"weight": w}) == weights_sha256({"weight": state["weight"]})


def test_checkpoint_hash_is_the_tensors_not_the_file_bytes(tmp_path):
    state = _linear().state_dict()
    plain, tagged = tmp_path / "plain", tmp_path / "tagged"
    plain.mkdir(), tagged.mkdir()
    save_file(dict(state), plain / "model.safetensors")
    save_file(dict(state), tagged / "model.safetensors", metadata={"format": "pt", "note": "another header"})
    assert (plain / "model.safetensors").read_bytes() != (tagged / "model.safetensors").read_bytes()
    assert checkpoint_sha256(plain) == checkpoint_sha256(tagged) == weights_sha256(state)


def test_run_fingerprint_reads_the_checkpoint_and_the_curve(tmp_path):
    save_file(dict(_linear().state_dict()), tmp_path / "model.safetensors")
    losses = [float(x) for x in range(1, 13)]  # 12 steps, losses 1..12
    curve = pd.DataFrame({"step": range(12), "tokens": range(12), "loss": losses, "lr": [1e-3] * 12})
    fp = run_fingerprint(RunResult(tmp_path, curve, pd.DataFrame(), 1.0, 1.0, 8))
    assert fp == {
        "weights_sha256": weights_sha256(_linear().state_dict()),
        "final_loss": 7.5,  # the mean of 3..12, the last ten
        "final_loss_last": 12.0,
        "steps": 12,
    }


COMMITTED = {
    "a": {"weights_sha256": "aa", "final_loss": 2.0, "final_loss_last": 1.9, "steps": 10},
    "b": {"weights_sha256": "bb", "final_loss": 3.0, "final_loss_last": 2.9, "steps": 10},
    "only-committed": {"weights_sha256": "cc", "final_loss": 4.0, "final_loss_last": 4.0, "steps": 10},
}
REBUILT = {
    "b": {"weights_sha256": "b2", "final_loss": 3.25, "final_loss_last": 3.0, "steps": 10},
    "a": {"weights_sha256": "aa", "final_loss": 2.0, "final_loss_last": 1.9, "steps": 10},
    "only-rebuilt": {"weights_sha256": "dd", "final_loss": 5.0, "final_loss_last": 5.0, "steps": 10},
}


def test_compare_fingerprints_by_hand():
    table = compare_fingerprints(COMMITTED, REBUILT, tol=0.25).set_index("run")
    assert list(table.index) == ["a", "b", "only-committed", "only-rebuilt"]
    assert table["weights_identical"].tolist() == [True, False, False, False]
    assert table.loc["a", "loss_diff"] == 0.0 and table.loc["b", "loss_diff"] == 0.25
    assert table["within_tol"].tolist() == [True, True, False, False]  # 0.25 <= 0.25
    assert math.isnan(table.loc["only-committed", "final_loss_rebuilt"])
    assert math.isnan(table.loc["only-rebuilt", "loss_diff"])
    assert compare_fingerprints(COMMITTED, REBUILT, tol=0.1)["within_tol"].tolist() == [
        True,
        False,
        False,
        False,
    ]
    assert compare_fingerprints(COMMITTED, REBUILT, tol=0)["within_tol"].tolist()[0]


@pytest.mark.parametrize("tol", [-0.001, float("nan"), "0.1", True])
def test_compare_fingerprints_refuses_a_bad_tolerance(tol):
    with pytest.raises(ValueError, match="tol must be a non-negative number"):
        compare_fingerprints(COMMITTED, REBUILT, tol=tol)
