"""The scoreboard page's table: claims read back from results/*.json."""

import json

from analysis.book import scoreboard
from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Claim


def _write(folder, chapter, claims):
    record = {"chapter": chapter, "values": {"x": "1"}, "claims": [c.to_dict() for c in claims]}
    (folder / f"{chapter}.json").write_text(json.dumps(record))


def _claims():
    auc = Claim(id="e3", chapter="predicting", statement="recency predicts extraction", status=NOT_REPRODUCED,
                reason="the opposite direction, p = 0.01 < 0.05, n = 200", comparison="AUC > 0.5",
                value=0.424, interval=(0.35, 0.5), n=200, p=0.01, source_value="0.61", section="pred-e3")
    law = Claim(id="law", chapter="size", statement="the index tracks size", status=REPRODUCED,
                reason="R² 0.93 ≥ 0.8", comparison="R² ≥ 0.8", value=0.93, n=10, section="size-ladder",
                by_design=True)
    few = Claim(id="sens", chapter="size", statement="Mem rises at every threshold", status=INCONCLUSIVE,
                reason="n = 17 is below the minimum of 30", comparison="ρ rises", value=0.2, n=17)
    return auc, law, few


def test_claims_table_reads_every_chapter_in_book_order(tmp_path):
    auc, law, few = _claims()
    _write(tmp_path, "predicting", [auc])
    _write(tmp_path, "size", [law, few])
    (tmp_path / "lab.json").write_text(json.dumps({"chapter": "lab", "values": {}}))  # no claims yet
    table = scoreboard.claims_table(tmp_path)
    assert list(table["id"]) == ["law", "sens", "e3"]  # size comes before predicting in the book
    assert table.loc[table["id"] == "e3", "interval"].item() == (0.35, 0.5)
    assert scoreboard.status_counts(table) == {"reproduced": 1, "not reproduced": 1, "inconclusive": 1,
                                               "not testable here": 0}


def test_this_run_prints_value_interval_n_and_p(tmp_path):
    auc, _, few = _claims()
    _write(tmp_path, "predicting", [auc, few.__class__(**{**few.to_dict(), "chapter": "predicting",
                                                          "interval": None})])
    table = scoreboard.claims_table(tmp_path)
    assert scoreboard.this_run(table.iloc[0]) == "0.424 [0.35, 0.5]; n = 200; p = 0.01"
    assert scoreboard.this_run(table.iloc[1]) == "0.2; n = 17"


def test_markdown_links_each_claim_to_its_section_and_marks_by_design(tmp_path):
    auc, law, few = _claims()
    _write(tmp_path, "size", [law, few])
    _write(tmp_path, "predicting", [auc])
    text = scoreboard.scoreboard_markdown(scoreboard.claims_table(tmp_path))
    assert "{ref}`section <pred-e3>`" in text
    assert "| recency predicts extraction (`e3`) | 0.61 |" in text
    assert "**reproduced** (by design)" in text
    assert text.count("\n### ") == 2
    row = next(line for line in text.splitlines() if "Mem rises" in line)
    assert row.endswith("| — |")  # no section, no link


def test_no_claims_says_so(tmp_path):
    text = scoreboard.scoreboard_markdown(scoreboard.claims_table(tmp_path))
    assert "No chapter has recorded claims" in text
