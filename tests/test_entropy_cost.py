"""What the entropy chapter's profiles cost (analysis.entropy.cost), from a
hand-written benchmark record."""

from __future__ import annotations

import json

import pytest

from analysis.entropy.cost import profile_cost_sentence, profile_cost_table


def _stage(stage, minutes):
    return {"stage": stage, "model": "m", "prefix": 1, "suffix": 1, "decoding": None, "n": 1,
            "s_per_query": 0.1, "minutes": minutes}


@pytest.fixture
def record(tmp_path):
    rec = {"profiles": {
        "default": {"stages": [_stage("lab main sample", 1.0), _stage("lab main sample", 2.0),
                               _stage("attacks (real)", 7.0)], "minutes": 10.0},
        "paper": {"stages": [_stage("lab main sample", 2.0), _stage("lab main sample", 4.0),
                             _stage("attacks (real)", 54.0)], "minutes": 60.0}},
        "pairs_lab": 256, "pairs_real": 64, "torch_threads": 2, "cores": 2, "commit": "abc1234",
        "date": "2026-12-07"}
    path = tmp_path / "entropy_cost.json"
    path.write_text(json.dumps(rec))
    return path


def test_table_sums_stages_per_profile(record):
    table = profile_cost_table(record).set_index("stage")
    assert list(table.index) == ["lab main sample", "attacks (real)", "all"]
    assert table.loc["lab main sample"].tolist() == [3.0, 6.0]
    assert table.loc["all"].tolist() == [10.0, 60.0]


def test_sentence_gives_totals_ratio_and_largest_stage(record):
    s = profile_cost_sentence(record)
    assert "comes to 10 minutes" in s
    assert "to 60 minutes (1.0 hours, 6.0 times as long), 90% of it in attacks (real)" in s
    assert "commit `abc1234`" in s


def test_missing_record_is_said(tmp_path):
    assert profile_cost_sentence(tmp_path / "none.json").startswith("**Not measured yet**")
    assert profile_cost_table(tmp_path / "none.json").empty
