"""Completions files in the source's schema (analysis.phrases.files): reading,
deduplication, raw offsets and the rescore of a small fixture."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.phrases.files import load_phrases, read_completions, rescore
from analysis.phrases.method import match

FIXTURES = Path(__file__).parent / "fixtures" / "phrases"
COMPLETIONS = FIXTURES / "completions.json"
PHRASES = FIXTURES / "phrases.json"


def test_read_completions_dedupes_and_moves_errors():
    df = read_completions(COMPLETIONS)
    # 12 rows: 5 paper (all kept, including one duplicate) + 7 live, of which
    # the two older id_1/id_2 rows of model-x are dropped.
    assert len(df) == 10
    assert (df["timestamp"] == "paper").sum() == 5
    live = df[df["model"] == "model-x"].set_index("phrase_id")
    assert live["timestamp"].eq("2026-04-01T00:00:00+00:00").all()
    assert live.loc["id_2", "completion"].startswith("好的")
    assert live.loc["id_1001", "completion"] == ""
    assert live.loc["id_1001", "error"].startswith("[ERROR]")
    assert df["error"].notna().sum() == 1
    assert {"stored_matched", "stored_edit_distance", "stored_match_start"} <= set(df.columns)
    assert "matched" not in df.columns


def test_dedupe_keeps_first_row_on_equal_timestamps(tmp_path):
    rows = [
        {"phrase_id": "p", "model": "m", "completion": "first", "timestamp": "2026-01-01"},
        {"phrase_id": "p", "model": "m", "completion": "second", "timestamp": "2026-01-01"},
        {"phrase_id": "p", "model": "m", "completion": "older", "timestamp": "2025-12-31"},
    ]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    assert read_completions(path)["completion"].tolist() == ["first"]


def test_fixture_raw_offsets_match_the_source_convention():
    df = read_completions(COMPLETIONS)
    row = df[(df["model"] == "model-x") & (df["phrase_id"] == "id_2")].iloc[0]
    table = load_phrases(PHRASES).set_index("id")
    r = match(row["completion"], table.at["id_2", "end"], table.at["id_2", "start"])
    # "好的，以下是续写：\n" is 10 raw / 7 cleaned characters; the ending's
    # full-width comma makes the raw span one character longer (18 vs 17).
    assert (r.match_start, r.match_end) == (7, 24)
    assert (r.raw_start, r.raw_end) == (10, 28)


# (mode, refusal_mode, model, type) -> (matched, total)
FIXTURE_COUNTS = {
    ("windowed", "faithful", "gpt-4", "culturax"): (0, 2),
    ("windowed", "faithful", "gpt-4", "propaganda"): (1, 1),
    ("windowed", "faithful", "model-x", "culturax"): (1, 2),
    ("windowed", "faithful", "model-x", "propaganda"): (2, 2),
    ("windowed", "fixed", "gpt-4", "culturax"): (0, 2),
    ("windowed", "fixed", "gpt-4", "propaganda"): (1, 1),
    ("windowed", "fixed", "model-x", "culturax"): (1, 1),
    ("windowed", "fixed", "model-x", "propaganda"): (2, 2),
    ("prefix", "faithful", "gpt-4", "culturax"): (0, 2),
    ("prefix", "faithful", "gpt-4", "propaganda"): (1, 1),
    ("prefix", "faithful", "model-x", "culturax"): (0, 2),
    ("prefix", "faithful", "model-x", "propaganda"): (1, 2),
    ("prefix", "fixed", "gpt-4", "culturax"): (0, 2),
    ("prefix", "fixed", "gpt-4", "propaganda"): (1, 1),
    ("prefix", "fixed", "model-x", "culturax"): (0, 1),
    ("prefix", "fixed", "model-x", "propaganda"): (1, 2),
}


def test_rescore_fixture_counts():
    # gpt-4: id_1 is empty, id_1001 refused (无法继续写), id_1002 twice unmatched.
    # model-x: id_1001 is an API error; id_1002 "很抱歉，我..." is a refusal only
    # in fixed mode; id_2 and id_1003 have preambles that defeat prefix mode.
    out = rescore(COMPLETIONS, PHRASES)
    got = {
        (r.mode, r.refusal_mode, r.model, r.type): (r.matched, r.total)
        for r in out.itertuples(index=False)
    }
    assert got == FIXTURE_COUNTS


def test_windowed_never_below_prefix_on_fixture():
    out = rescore(COMPLETIONS, PHRASES)
    keys = ["refusal_mode", "model", "type"]
    w = out[out["mode"] == "windowed"].set_index(keys)["matched"]
    p = out[out["mode"] == "prefix"].set_index(keys)["matched"]
    assert (w >= p).all()
    assert (w > p).any()
