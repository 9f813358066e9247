"""Parameter validation, table formatting, the static explorer, and a chapter's
claims from glue to results/<chapter>.json."""

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.book import report
from analysis.core.claims import INCONCLUSIVE, REPRODUCED, Claim, directional, from_json, not_testable
from analysis.models import ModelError, check_model_name
from analysis.phrases.method_rates import score
from analysis.phrases.params import PARAMS, PROFILES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_chapters import glued_values, write_results  # noqa: E402


def test_profile_values_are_taken_and_overridden():
    params = PARAMS.resolve("smoke", n_per_type=3, models=None)
    assert params["n_per_type"] == 3
    assert params["models"] == PROFILES["smoke"]["models"]
    assert params["max_new_tokens"] == PROFILES["smoke"]["max_new_tokens"]


def test_models_given_as_comma_separated_string(monkeypatch):
    monkeypatch.setenv("MEMBOOK_API_KEY", "sk-test")
    params = PARAMS.resolve("smoke", models="gemma3-270m, api:openai/gpt-4o")
    assert params["models"] == ["gemma3-270m", "api:openai/gpt-4o"]


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"profile": "smok"},
         "profile must be one of ['smoke', 'default', 'paper'], got 'smok' (did you mean 'smoke'?)"),
        ({"profile": "smoke", "models": "gpt5"}, "unknown model 'gpt5'"),
        ({"profile": "smoke", "n_per_type": 0}, "n_per_type must be an integer in [1, inf], got 0"),
        ({"profile": "smoke", "n_per_type": -5}, "n_per_type must be an integer in [1, inf], got -5"),
        ({"profile": "smoke", "max_new_tokens": 2.5},
         "max_new_tokens must be an integer in [1, 4096], got 2.5"),
        ({"profile": "smoke", "temperature": 1.0}, "unknown parameter 'temperature' for chapter 'phrases'"),
        ({"profile": "smoke", "models": ""}, "models must be comma-separated model names"),
        ({"profile": "smoke", "threshold": 1.5}, "threshold must be a number in [0, 1], got 1.5"),
    ],
)
def test_bad_parameters_name_the_parameter_and_allowed_values(kwargs, needle):
    profile = kwargs.pop("profile")
    with pytest.raises(report.ParameterError) as err:
        PARAMS.resolve(profile, **kwargs)
    assert needle in str(err.value)


def test_unknown_model_error_lists_the_builtin_models():
    with pytest.raises(ModelError) as err:
        check_model_name("smollm")
    assert "smollm2-135m-instruct" in str(err.value) and "gemma3-270m" in str(err.value)


@pytest.mark.parametrize(
    "name, backend",
    [("smollm2-135m-instruct", "local"), ("gemma3-270m", "local"), ("api:openai/gpt-4o", "api"),
     ("EleutherAI/pythia-70m", "local"), ("lab:wide-1", "lab")],
)
def test_model_names_resolve_to_backends(name, backend):
    assert check_model_name(name) == backend


def test_rate_table_formats_counts_rates_and_intervals():
    rates = pd.DataFrame({"model": ["m"], "type": ["propaganda"], "matched": [5], "total": [100],
                          "rate": [0.05], "ci_lo": [0.021543], "ci_hi": [0.111750]})
    row = report.rate_table(rates, {"propaganda": "state media"}).iloc[0]
    assert row["matched / total"] == "5 / 100"
    assert row["rate"] == "5.0%"
    assert row["95% Wilson interval"] == "[2.2, 11.2]%"
    assert row["type"] == "state media"


def _scored():
    phrases = pd.DataFrame({"id": ["a", "b"], "type": ["propaganda", "culturax"],
                            "start": ["开始", "起点"], "end": ["我们的结尾", "</script>尾"]})
    comp = pd.DataFrame({"phrase_id": ["a", "b"], "model": ["m", "m"], "type": ["propaganda", "culturax"],
                         "prompt": ["续写句子：开始", "续写句子：起点"],
                         "completion": ["好的，我们的结尾。", None], "error": [None, "APIError: 500"]})
    return score(comp, phrases), phrases


def test_explorer_embeds_highlight_offsets_and_escapes_script_tags():
    scored, phrases = _scored()
    html = report.explorer_html(scored, phrases, 0.4, "ex1")
    blob = re.search(r'<script type="application/json">(.*?)</script>', html, re.S).group(1)
    payload = json.loads(blob.replace("<\\/", "</"))
    assert "</script>尾" not in blob  # escaped, so it cannot end the data block early
    first = payload["phrases"][0]  # the matched phrase is listed first
    r = first["results"]["m"]
    assert r["matched"] is True
    assert r["cleaned"][r["match_start"]:r["match_end"]] == "我们的结尾"
    errored = payload["phrases"][1]["results"]["m"]
    assert errored["error"] is True and errored["distance"] is None


def test_widget_explorer_shows_the_highlighted_window():
    scored, phrases = _scored()
    box = report.explorer_widget(scored, phrases, 0.4)
    phrase, model, out = box.children
    assert phrase.value == "a" and model.value == "m"
    assert "<mark>我们的结尾</mark>" in out.value and "distance 0.000" in out.value
    phrase.value = "b"  # the errored request: no completion text, no distance
    assert "<mark>" not in out.value and "distance –" in out.value


def test_lab_model_names_resolve_through_the_lab_index(tmp_path, isolated_cache):
    from analysis.lab.index import register
    from analysis.models import load_model

    assert not (isolated_cache / "lab").exists()  # the test's own, empty cache
    with pytest.raises(ModelError, match="no trained lab run 'tiny'; trained runs: none yet"):
        load_model("lab:tiny")
    (tmp_path / "ckpt").mkdir()
    register("tiny", tmp_path / "ckpt")
    model = load_model("lab:tiny")
    assert model.path == str(tmp_path / "ckpt") and not model.is_chat and model._model is None


def test_a_retrained_checkpoint_gets_a_new_cache_identity(tmp_path):
    import os

    from analysis.models.local import LocalModel

    (tmp_path / "config.json").write_text("{}")
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"old")
    before = LocalModel("lab:x", tmp_path).cache_identity()
    assert before == LocalModel("lab:x", tmp_path).cache_identity()
    weights.write_bytes(b"new weights")
    os.utime(weights, ns=(1, 1))
    assert LocalModel("lab:x", tmp_path).cache_identity() != before


# -- claims: glued by the chapter, written to results/<chapter>.json by execute_chapters.py --


def chapter_claims() -> list[Claim]:
    status, reason = directional(value=0.6, null=0.5, p=0.01, n=40, min_n=30)
    auc = Claim(id="e1_auc", chapter="size", statement="Popular texts are predicted better.", status=status,
                reason=reason, comparison="AUC > 0.5", value=0.6, interval=(0.52, 0.68), n=40, p=0.01,
                min_n=30, source_value="0.71", section="size-ladder", unit="texts", n_units=40,
                null_kind="analytic", null_value=0.5, control_value=0.51)
    status, reason = directional(value=0.7, null=0.5, p=0.001, n=17, min_n=30)
    small = Claim(id="e2_small", chapter="size", statement="The smallest pair agrees.", status=status,
                  reason=reason, comparison="AUC > 0.5", value=0.7, n=17, p=0.001, min_n=30, by_design=True,
                  by_design_reason="forced by the lab's construction", unit="models", source_value="0.9",
                  control_reason="none applies")
    return [auc, small, not_testable("e3_api", "size", "An API model agrees.", "no API model in this run",
                                     unit="models", source_value="0.8")]


def test_glued_claims_are_written_under_claims_and_not_under_values(monkeypatch, tmp_path):
    glued = {}
    monkeypatch.setattr(report, "glue_text", lambda **v: glued.update({k: str(x) for k, x in v.items()}))
    monkeypatch.setattr(report, "glue_md", lambda **v: glued.update(v))
    claims = chapter_claims()
    assert [c.status for c in claims] == [REPRODUCED, INCONCLUSIVE, "not testable here"]
    assert report.glue_claims(claims, render=lambda c: f"{c.id}: {c.status}") == claims
    assert set(glued) == {"claims", "claim_e1_auc", "claim_e2_small", "claim_e3_api"}
    assert glued["claim_e2_small"] == "e2_small: inconclusive"

    usage = {"run_queries": "10", "run_calls": "4", "run_hits": "6", "run_errors": "0"}
    values = {**glued, "n_texts": "41", **usage}
    path = write_results("size", "default", {"profile": "default"}, 12.34, values, "abc123",
                         results_dir=tmp_path)
    record = json.loads(path.read_text())
    assert path == tmp_path / "size.json"
    assert record["claims"] == [c.to_dict() for c in claims]
    assert from_json(json.dumps(record["claims"])) == claims
    assert "claims" not in record["values"] and record["values"]["n_texts"] == "41"
    assert record["values"]["claim_e1_auc"] == "e1_auc: reproduced"  # the renderings stay glued values
    assert record["usage"] == {"queries": 10, "calls": 4, "hits": 6, "errors": 0}
    assert (record["chapter"], record["commit"], record["seconds"]) == ("size", "abc123", 12.3)
    assert "claims" in values  # the caller's values are left as they were


def test_a_chapter_without_claims_writes_an_empty_list(tmp_path):
    path = write_results("lab", "default", {}, 1.0, {"n_runs": "8"}, "abc", results_dir=tmp_path)
    record = json.loads(path.read_text())
    assert record["claims"] == [] and record["values"] == {"n_runs": "8"}


def test_lab_fingerprints_go_to_their_own_key(tmp_path):
    rows = [{"run": "wide-32", "weights_sha256": "ab" * 32, "final_loss": 4.25, "final_loss_last": 4.5,
             "steps": 10}]
    path = write_results("lab", "default", {}, 1.0, {"n_runs": "8", "lab_fingerprints": json.dumps(rows)},
                         "abc", results_dir=tmp_path)
    record = json.loads(path.read_text())
    assert record["fingerprints"] == rows and record["values"] == {"n_runs": "8"}
    assert "fingerprints" not in json.loads(write_results("size", "default", {}, 1.0, {"a": "1"}, "abc",
                                                          results_dir=tmp_path).read_text())


def test_claims_glued_as_markdown_survive_the_executed_notebook(tmp_path):
    """A claim's text holds quotes and backslashes ("the source's", "\\u"): glued as
    Markdown it is stored as is, and execute_chapters.py reads the same claims back."""
    claim = not_testable("q", "size", "The source's \"index\" \\ tracks size.", "no model's answer",
                         unit="models", source_value="0.8")
    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "claims", "mime_prefix": ""}},
           "data": {"text/markdown": json.dumps([claim.to_dict()], ensure_ascii=False),
                    "text/plain": "<IPython.core.display.Markdown object>"}}
    notebook = tmp_path / "size.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": [out]}]}))
    path = write_results("size", "default", {}, 1.0, glued_values(notebook), "abc", results_dir=tmp_path)
    assert from_json(json.dumps(json.loads(path.read_text())["claims"])) == [claim]


def test_glue_page_sends_text_and_markdown_to_their_own_glue(monkeypatch):
    text, md = {}, {}
    monkeypatch.setattr(report, "glue_text", lambda **v: text.update(v))
    monkeypatch.setattr(report, "glue_md", lambda **v: md.update(v))
    report.glue_page({"text": {"lab_r2": "0.88"}, "md": {"verdict": "**held**"}})
    report.glue_page({"md": {"only": "md"}})
    assert text == {"lab_r2": "0.88"} and md == {"verdict": "**held**", "only": "md"}
    with pytest.raises(ValueError, match="'text' and 'md'.*'txt'"):
        report.glue_page({"txt": {}})
