"""The tables the book renders at build time (book/_ext/book_tables.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from book_tables import USAGE, cost_table, markdown_table, status_tables  # noqa: E402


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


def test_cost_table_reads_the_recorded_whole_book_runs(tmp_path):
    assert cost_table(tmp_path) == (None, [])
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "book_cold.json").write_text(json.dumps({
        "kind": "cold", "commit": "0123456789abcdef", "date": "2026-12-01T21:00:00Z", "cores": 2,
        "torch_threads": 2, "load_before": [0.1, 0.2, 0.3], "load_after": [2.5, 2.1, 2.0],
        "execute_minutes": 50.0, "build_minutes": 1.5, "total_minutes": 51.5,
        "chapters": {"size": {"minutes": 20.04, "calls": "7472"},
                     "phrases": {"minutes": 9.96, "calls": "900"}}}))
    (tmp_path / "bench" / "results" / "book_warm.json").write_text(json.dumps({
        "kind": "warm", "commit": "0123456789abcdef", "date": "2026-12-01T22:00:00Z", "cores": 2,
        "load_before": [0.5], "load_after": [0.6], "build_minutes": 1.2, "total_minutes": 3.0,
        "chapters": {"size": {"minutes": 0.9, "calls": "0"}}}))
    table, notes = cost_table(tmp_path)
    assert table.to_dict("records") == [
        {"": "phrases", "cold (min)": "10.0", "cold: model calls": "900", "warm (min)": "—",
         "warm: model calls": "—"},
        {"": "size", "cold (min)": "20.0", "cold: model calls": "7,472", "warm (min)": "0.9",
         "warm: model calls": "0"},
        {"": "site build", "cold (min)": "1.5", "cold: model calls": "—", "warm (min)": "1.2",
         "warm: model calls": "—"},
        {"": "total", "cold (min)": "51.5", "cold: model calls": "8,372", "warm (min)": "3.0",
         "warm: model calls": "0"}]
    assert notes[0] == ("The cold run: commit 0123456789, 2026-12-01 21:00 UTC, 2 cores (2 torch threads); "
                        "load average 0.1 before and 2.5 after (above the core count, other work shared "
                        "the machine).")
    # the warm run's load (0.5, 0.6) stayed within its 2 cores
    assert notes[1] == ("The warm run: commit 0123456789, 2026-12-01 22:00 UTC, 2 cores (— torch threads); "
                        "load average 0.5 before and 0.6 after (within the core count).")


def test_cost_table_shows_a_run_of_two_chapters_at_a_time_as_its_own_column(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "book_warm-jobs2.json").write_text(json.dumps({
        "kind": "warm", "jobs": 2, "commit": "0123456789abcdef", "date": "2026-12-02T12:00:00Z",
        "cores": 2, "torch_threads": 2, "load_before": [0.2], "load_after": [1.9],
        "build_minutes": 0.3, "total_minutes": 2.1,
        "chapters": {"lab": {"minutes": 0.4, "calls": "0"}, "entropy": {"minutes": 1.3, "calls": "0"}}}))
    table, [note] = cost_table(tmp_path)
    assert list(table.columns) == ["", "warm, 2 at a time (min)", "warm, 2 at a time: model calls"]
    assert table["warm, 2 at a time (min)"].tolist() == ["0.4", "1.3", "0.3", "2.1"]
    assert note == ("The warm, 2 at a time run: commit 0123456789, 2026-12-02 12:00 UTC, 2 cores (2 torch "
                    "threads); load average 0.2 before and 1.9 after (within the core count). It executed "
                    "the lab page alone, then 2 chapters at a time (`--jobs 2`), so its chapters' minutes "
                    "overlap.")
