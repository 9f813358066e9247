"""The scoreboard page: claims read back from results/*.json, the headline table, the
counts of source claims per status, and per chapter a table of the source's claims
and one of the book's extensions."""

import json

from analysis.book import scoreboard
from analysis.core.claims import EXTENSION, HOLDS, INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Claim


def _write(folder, chapter, claims):
    record = {"chapter": chapter, "values": {"x": "1"}, "claims": [c.to_dict() for c in claims]}
    (folder / f"{chapter}.json").write_text(json.dumps(record))


def _claims():
    e3 = Claim(id="e3_three_full", chapter="predicting", statement="recency predicts extraction",
               status=NOT_REPRODUCED, reason="significant in the opposite direction",
               comparison="AUC > null", value=0.424, interval=(0.35, 0.5), n=230, n_units=23, unit="cells",
               p=0.01, source_value="0.61",
               section="pred-e3", null_kind="permutation", null_value=0.39, control_value=0.41)
    law = Claim(id="lab_law", chapter="size", statement="the index tracks size", status=REPRODUCED,
                reason="R² 0.93 ≥ 0.8", comparison="R² ≥ 0.8", value=0.93, n=10, n_units=10, unit="models",
                section="size-ladder", source_value="R² = 0.95", null_kind="permutation", null_value=0.1,
                control_value=0.12, by_design=True, by_design_reason="forced by the ladder")
    gap = Claim(id="gap_x", chapter="size", statement="a gap", status=INCONCLUSIVE, reason="covers 0",
                comparison="gap > 0", value=0.2, n=17, n_units=17, unit="texts", source_value="+0.3",
                control_reason="no signal-free twin", family="gaps", p=0.02, p_adjusted=0.06)
    ext = Claim(id="sens", chapter="size", kind=EXTENSION, statement="Mem rises at every threshold",
                status=HOLDS, reason="p < 0.05", comparison="ρ rises", value=0.2, n=17, n_units=17,
                unit="thresholds", control_reason="none applies")
    return e3, law, gap, ext


def test_claims_table_reads_every_chapter_in_book_order(tmp_path):
    e3, law, gap, ext = _claims()
    _write(tmp_path, "predicting", [e3])
    _write(tmp_path, "size", [law, gap, ext])
    (tmp_path / "lab.json").write_text(json.dumps({"chapter": "lab", "values": {}}))  # no claims yet
    table = scoreboard.claims_table(tmp_path)
    assert list(table["id"]) == ["lab_law", "gap_x", "sens", "e3_three_full"]  # size before predicting
    assert scoreboard.status_counts(table, "source") == {"reproduced": 1, "not reproduced": 1,
                                                         "inconclusive": 1, "not testable here": 0}
    assert scoreboard.counts_sentence(table, "size") == (
        "Of this chapter's 2 claims a source makes, 1 reproduced, 0 not reproduced, 1 inconclusive, "
        "0 not testable here; besides, 1 claim of the book's own: 1 holds, 0 does not hold, "
        "0 inconclusive, 0 not testable here.")
    book = scoreboard.counts_sentence(table)
    assert book.startswith("Of the book's 3 claims a source makes, 1 reproduced, 1 not reproduced, "
                           "1 inconclusive")


def test_cells_show_units_null_control_and_holm(tmp_path):
    e3, law, gap, ext = _claims()
    _write(tmp_path, "size", [law, gap])
    _write(tmp_path, "predicting", [e3])
    table = scoreboard.claims_table(tmp_path)
    row = table.set_index("id").loc
    assert scoreboard.this_run(row["e3_three_full"]) == "0.424 [0.35, 0.5]; p = 0.01"
    assert scoreboard.this_run(row["gap_x"]) == "0.2; p = 0.02 (Holm 0.06)"
    assert scoreboard.units(row["e3_three_full"]) == "23 cells (230 rows)"
    assert scoreboard.units(row["lab_law"]) == "10 models"
    assert scoreboard.null(row["e3_three_full"]) == "permutation 0.39"
    assert scoreboard.control(row["gap_x"]) == "none: no signal-free twin"
    long = {"control_value": None, "control_reason": "x" * 70}
    assert scoreboard.control(long) == "none: " + "x" * 59 + "…"  # the whole reason stays in results/
    assert scoreboard.status_cell(row["lab_law"]) == "**reproduced** (by design: forced by the ladder)"
    assert scoreboard.status_cell(row["gap_x"]) == "**inconclusive** [Holm: gaps]"


def test_markdown_has_the_headlines_then_two_tables_per_chapter(tmp_path):
    e3, law, gap, ext = _claims()
    _write(tmp_path, "size", [law, gap, ext])
    _write(tmp_path, "predicting", [e3])
    text = scoreboard.scoreboard_markdown(scoreboard.claims_table(tmp_path))
    head, rest = text.split("### Size", 1)
    assert "### Each source's headline claims" in head
    assert "`lab_law`" in head and "`e3_three_full`" in head and "`sens`" not in head
    assert "{ref}`section <pred-e3>`" in rest
    size = rest.split("### Predicting")[0]
    assert size.index("**The source's claims**") < size.index("**The book's extensions**")
    assert "| Mem rises at every threshold (`sens`) | extension |" in size
    assert text.count("\n### ") == 3
    row = next(line for line in size.splitlines() if "`sens`" in line)
    assert row.endswith("| — |")  # no section, no link


def test_by_design_list_comes_from_the_flags(tmp_path):
    e3, law, gap, ext = _claims()
    _write(tmp_path, "size", [law, gap])
    _write(tmp_path, "predicting", [e3])
    text = scoreboard.by_design_markdown(scoreboard.claims_table(tmp_path))
    assert text == ("- **Size**:\n  - the index tracks size (`lab_law`, reproduced): forced by the ladder")


def test_no_claims_says_so(tmp_path):
    text = scoreboard.scoreboard_markdown(scoreboard.claims_table(tmp_path))
    assert "No chapter has recorded claims" in text
