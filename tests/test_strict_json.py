"""Every JSON the project writes is strict JSON: a missing number is ``null``, never
``NaN`` or ``Infinity`` (which a reader in another language fails on)."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.book import report
from analysis.core import jsonio
from analysis.models import base

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import execute_chapters as X  # noqa: E402


def strict(text: str):
    """Parse as a strict reader does (JavaScript's ``JSON.parse``, serde, jq)."""
    def refuse(name):
        raise AssertionError(f"{name} in what should be strict JSON: {text[:200]}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_and_missing_numbers_are_null():
    value = {"nan": float("nan"), "inf": float("inf"), "np": np.float64("-inf"), "na": pd.NA,
             "nat": pd.NaT, "ok": np.int64(3), "nested": [1.5, (float("nan"),)], "text": "NaN"}
    assert strict(jsonio.dumps(value)) == {"nan": None, "inf": None, "np": None, "na": None, "nat": None,
                                           "ok": 3, "nested": [1.5, [None]], "text": "NaN"}
    with pytest.raises(ValueError, match="NaN is not JSON"):
        jsonio.loads('{"x": NaN}')


def test_a_chapters_glue_with_a_nan_is_written_as_strict_json_with_null(monkeypatch, tmp_path):
    """The phrases chapter's case: a lab model with no error beside an API model with
    one. pandas holds the lab model's missing ``last_error`` as NaN (a column of texts),
    and ``json.dumps`` wrote it as ``NaN``."""
    monkeypatch.setattr(base, "_USAGE", defaultdict(Counter, {
        "lab:smoke/s-1": Counter(queries=10, hits=10), "api:x": Counter(queries=4, calls=4, errors=1)}))
    monkeypatch.setattr(base, "_LAST_ERROR", {"api:x": "APIError: 500"})
    glued: dict[str, str] = {}
    monkeypatch.setattr(report, "glue_text", lambda **v: glued.update({k: str(x) for k, x in v.items()}))
    monkeypatch.setattr(report, "glue_md", lambda **v: glued.update(v))
    table = report.glue_usage()
    assert table["last_error"].isna().tolist() == [True, False]  # the NaN is there to be written
    models = strict(glued["run_models"])
    assert [m["last_error"] for m in models] == [None, "APIError: 500"]
    # results/<chapter>.json, with a parameter that is NaN
    path = X.write_results("phrases", "default", {"n": float("nan")}, 1.0, glued, "abc", tmp_path)
    record = strict(path.read_text())
    assert record["usage"]["models"][0]["last_error"] is None and record["params"] == {"n": None}


def test_the_executed_notebook_and_the_timings_are_strict_json(tmp_path):
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps({"metadata": {"papermill": {"duration": math.nan}}, "cells": []}))
    X.tidy_notebook(path)
    assert strict(path.read_text())["metadata"]["papermill"]["duration"] is None


#: where ``json.dumps`` may stay: what is not a file the project writes for readers (the
#: query cache's own columns and hashes, request bodies, ids and strings inside the lab's
#: corpus and order files) and the two strict writers themselves
PLAIN_JSON_ALLOWED = {
    "src/analysis/core/jsonio.py", "src/analysis/core/claims.py", "src/analysis/core/artifacts.py",
    "src/analysis/core/query_cache.py", "src/analysis/core/memo.py",
    "src/analysis/ngrams/infini_api.py", "src/analysis/lab/corpus/facts.py",
    "src/analysis/lab/corpus/problems.py", "src/analysis/lab/tokenizer.py", "src/analysis/lab/train/order.py",
}


def test_every_other_json_writer_goes_through_jsonio():
    import re

    plain = re.compile(r"\bjson\.dumps?\(")
    files = [p for folder in ("src", "scripts") for p in (ROOT / folder).rglob("*.py")]
    found = sorted(str(p.relative_to(ROOT)) for p in files
                   if plain.search(p.read_text()) and str(p.relative_to(ROOT)) not in PLAIN_JSON_ALLOWED)
    assert found == []
