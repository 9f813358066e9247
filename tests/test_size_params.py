"""Tests of the size chapter's transcribed tables, templates and profiles (analysis.size.params)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.size.params import (
    PAPER_N_PER_TEXT,
    PAPER_PREFIX_LENS,
    PARAMS,
    PROFILES,
    load_paper_table,
    render_prompt,
    templates,
)


def test_paper_tables_load():
    t1 = load_paper_table("table1")
    assert t1.shape == (19, 2) and list(t1.columns) == ["model", "size"]
    assert t1["size"].is_monotonic_decreasing and t1["size"].iloc[0] == 405 and t1["size"].iloc[-1] == 8
    t2 = load_paper_table("table2")
    assert t2.shape == (16, 8)
    assert list(t2.columns) == [
        "model", "size", "best_lb", "tightness_pct", "source", "abs_size", "abs_lb", "rel_lb",
    ]
    for col in ["size", "best_lb", "tightness_pct", "abs_size", "abs_lb", "rel_lb"]:
        assert pd.api.types.is_numeric_dtype(t2[col])
    assert (t2["best_lb"] <= t2["size"]).all()  # every MoE bound is valid (Section 4.3)
    assert (abs(100 * t2["best_lb"] / t2["size"] - t2["tightness_pct"]) <= 0.5 + 1e-9).all()
    t3 = load_paper_table("table3")
    assert t3.shape == (21, 6) and set(t3["source"]) == {"Abs", "Rel"}
    assert t3.loc[t3["rel_lb"].isna(), "model"].tolist() == ["openai/gpt-5.4-nano", "openai/gpt-4.1-nano"]
    with pytest.raises(ValueError, match="name must be one of"):
        load_paper_table("table4")


def test_templates_and_rendering():
    tm = templates()
    assert tm["template_id"].tolist() == [1, 2, 3, 4, 5]
    assert all(t.count("{prefix}") == 1 for t in tm["template"])
    assert (tm["system"] != "").tolist() == [True, False, False, False, False]
    ex = "be or not to be that is the"
    p5 = render_prompt(5, ex)
    assert p5 == {
        "system": None,
        "user": "[BEGIN PREFIX] be or not to be that is the [END PREFIX] Return the next word only.",
    }
    p2 = render_prompt(2, ex)
    assert p2["user"] == f'Output only one next continuation word for this phrase "{ex}"'
    p1 = render_prompt(1, "a {b} c")
    assert p1["user"] == '"a {b} c"' and p1["system"].startswith("You are next word prediction model")
    with pytest.raises(ValueError, match="template_id"):
        render_prompt(6, ex)


def test_profiles():
    assert set(PROFILES) == {"smoke", "default", "paper"}
    assert PROFILES["paper"]["n_per_text"] == 100
    assert PROFILES["paper"]["prefix_lens"] == (4, 8, 10, 12, 16, 24)
    assert PROFILES["default"]["prefix_lens"] == PAPER_PREFIX_LENS
    # chat models answer the templates on every profile: all five on paper, the first elsewhere
    default = PROFILES["default"]
    assert PROFILES["paper"]["template_ids"] == (1, 2, 3, 4, 5)
    assert all(p["mode"] == "auto" for p in PROFILES.values())
    assert default["template_ids"] == PROFILES["smoke"]["template_ids"] == (1,)
    assert default["n_per_text"] < PAPER_N_PER_TEXT
    smoke = PROFILES["smoke"]
    assert len(smoke["prefix_lens"]) * smoke["n_per_text"] * 3 <= 30
    for name in PROFILES:
        params = PARAMS.resolve(name)
        assert params["block_kind"] == "raw"
        assert params["max_new_tokens"] >= 1 and params["lab_profile"] in ("smoke", "default")
