"""The tables the book renders at build time (book/_ext/book_tables.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from book_tables import USAGE, markdown_table, status_tables  # noqa: E402


def test_markdown_table_escapes_what_markdown_would_read_as_markup():
    frame = pd.DataFrame({"a": ["api:<model id>", "x|y"], "b": [None, "n_per_text"]})
    assert markdown_table(frame).splitlines() == [
        "| a | b |", "|---|---|", "| api:\\<model id\\> |  |", "| x\\|y | n\\_per\\_text |"]


def test_status_tables_read_the_timings_and_results(tmp_path):
    (tmp_path / "book" / "chapters").mkdir(parents=True)
    (tmp_path / "results").mkdir()
    (tmp_path / "book" / "chapters" / "_timings.json").write_text(json.dumps({
        "size": {"profile": "smoke", "seconds": 300.0, "params": {"profile": "smoke", "n_per_text": 3},
                 "usage": {"queries": "10", "calls": "4", "hits": "6", "errors": "0"},
                 "commit": "0123456789abcdef", "executed": "2026-11-30T20:00:00Z"},
        "phrases": {"profile": "default", "seconds": 24.1, "params": {"profile": "default"},
                    "usage": {"calls": "1", "hits": "2", "errors": "0"}},
    }))
    (tmp_path / "results" / "lab.json").write_text(json.dumps({
        "chapter": "lab", "profile": "default", "params": {"profile": "default"}, "commit": "abc",
        "executed": "2026-11-30T19:07:35Z", "seconds": 61.1,
        "usage": {"queries": 3864, "calls": 0, "hits": 3864, "errors": 0}, "values": {"x": "1"}}))
    site, results = status_tables(tmp_path)
    # chapters in the book's order: phrases before size
    assert list(site["chapter"]) == ["phrases", "size"]
    size = site.set_index("chapter").loc["size"]
    assert size["parameters"] == "n_per_text=3" and size["wall time"] == "5.0 min"
    assert size["commit"] == "0123456789" and size["executed (UTC)"] == "2026-11-30 20:00"
    assert size[USAGE] == "4 / 6 / 0"
    phrases = site.set_index("chapter").loc["phrases"]
    assert phrases["parameters"] == "profile defaults" and phrases["commit"] == "—"
    assert phrases["wall time"] == "24 s"
    assert results.to_dict("records") == [{
        "chapter": "lab", "parameters": "profile defaults", "commit": "abc",
        "executed (UTC)": "2026-11-30 19:07", "wall time": "61 s", USAGE: "0 / 3,864 / 0"}]


def test_status_tables_are_none_without_records(tmp_path):
    assert status_tables(tmp_path) == (None, None)
