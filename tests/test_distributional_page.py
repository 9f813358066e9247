"""The distributional page's glue (``analysis.distributional.page``): each section's
names, and its numbers formatted as the chapter prints them, on small hand-built inputs."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.distributional import page
from analysis.distributional.claims_filter import filter_claims


def test_method_glues_the_stand_ins(monkeypatch):
    monkeypatch.setattr(page, "stopwords_source", lambda: "nltk (3 words)")
    out = page.method()
    assert set(out) == {"text"}
    assert set(out["text"]) == {"src_models", "n_templates", "stopwords_source", "e5_range"}
    assert out["text"]["e5_range"] == "0.7–1.0"
    assert out["text"]["stopwords_source"] == "nltk (3 words)"
    assert out["text"]["n_templates"].isdigit()


def test_setup_formats_the_tasks_and_the_ladder():
    know = pd.DataFrame({"copies": [0, 3, 17], "mentions": [2, 5, 1], "overlap_8": [0, 1, 0],
                         "overlap_14": [0, 0, 0]})
    reas = pd.DataFrame({"question": ["a", "b"]})
    ladder_runs = pd.DataFrame({"model": ["s", "l"], "params": [24_656, 4_070_000]})
    counts = SimpleNamespace(seconds_doc=0.1234, seconds_infgram=12.06)
    text = page.setup(know, reas, ladder_runs, counts)["text"]
    assert text == {"n_facts": "3", "n_problems": "2", "n_models": "2", "min_copies": "0", "max_copies": "17",
                    "min_mentions": "1", "max_mentions": "5", "knowledge_prompt_overlap": "1",
                    "knowledge_prompt_overlap_14": "0", "lab_range": "25K–4.1M", "t_doc": "0.1",
                    "t_inf": "12.1"}


def test_the_filter_section_formats_counts_with_thousands_and_the_tied_share():
    k3 = {"total": 12_345, "paper": 1_000, "authors": 12_300, "paper_co": 7, "none_co": 4_321}
    tables = {("knowledge", 3): pd.DataFrame({"p_taskgram": [1.0, 0.5, 1.0, 1.0]})}
    out = page.embedding_filter(k3, filter_claims(k3, n_facts=100), tables)
    text = out["text"]
    assert [text[f"k3_{k}"] for k in ("total", "paper", "authors", "paper_co", "none_co")] == [
        "12,345", "1,000", "12,300", "7", "4,321"]
    assert text["knowledge_p1_share"] == "75.0%"
    assert (text["gamma_2"], text["gamma_step"]) == ("0.80", "0.05")
    assert set(out["md"]) == {"filter_verdict", "authors_verdict"}
    assert out["md"]["filter_verdict"].startswith(
        "That threshold keeps 12,300 of the 12,345 candidates of the knowledge task's 3-grams (99.6%)")
    assert out["md"]["authors_verdict"].startswith("The authors' effective threshold keeps 12,300 of 12,345")


def test_generation_counts_failed_requests_and_rounds_the_seconds():
    answers = pd.DataFrame({"answer": [None, "Paris", None, "4"]})
    assert page.generation(answers, 12.6) == {"text": {"gen_seconds": "13", "n_errors": "2"}}


def test_sensitivity_glues_the_grid_and_e5s_keep_rates(monkeypatch):
    monkeypatch.setattr(page, "sensitivity_sentence", lambda claim: f"verdict on {claim}")
    out = page.sensitivity("c", gammas=(0.75, 0.8, 0.9))
    # E5's cosines spread evenly over 0.7–1.0: γ keeps (1 − γ) / 0.3 of the pairs
    assert out == {"text": {"gammas": "0.75, 0.8, 0.9", "keep_rates": "83.3%, 66.7%, 33.3%"},
                   "md": {"sens_verdict": "verdict on c"}}


def test_counterfactual_glues_each_halfs_mean_change():
    est = SimpleNamespace(value=-1.234, lo=-2.0, hi=-0.5, n_units=4)
    base, counter = [0.0, 0.0, 0.0, 0.0], [-1.0, -3.0, 0.5, 0.5]
    out = page.counterfactual(est, base, counter, [True, True, False, False], "r1")
    assert out["text"]["counterfactual_drop"] == "-1.23 nats [-2.00, -0.50] over 4 facts"
    assert (out["text"]["counterfactual_removed_delta"], out["text"]["counterfactual_kept_delta"]) == (
        "-2.00", "+0.50")
    assert (out["text"]["counterfactual_removed"], out["text"]["counterfactual_run"]) == ("2", "r1")


def test_source_vs_run_reads_the_sources_values():
    rows = [("Figure 3", "TriviaQA (n = 5)", "a"), ("Figure 4", "TriviaQA (n = 3)", "b"),
            ("Figure 4", "TriviaQA", "c"), ("Figure 4", "GSM8K", "d"), ("Figure 6", "TriviaQA (n = 3)", "e")]
    paper = pd.DataFrame(rows, columns=["figure", "task", "value"])
    out = page.source_vs_run(paper, [], [])
    assert out["text"] == {"src_perf": "a", "src_k3": "b", "src_inf": "c", "src_gsm": "d", "src_sens": "e"}
    assert set(out["md"]) == {"untestable", "claim_counts"} and out["md"]["untestable"] == ""


def test_the_mem_section_glues_its_numbers(monkeypatch):
    monkeypatch.setattr(page, "mem_glue", lambda mem, tasks, sizes: {"knowledge_3_range": f"{tasks} {sizes}"})
    monkeypatch.setattr(page, "significant_positive", lambda mem, task, n: 4)
    monkeypatch.setattr(page, "units_sentence", lambda *a: "units.")
    monkeypatch.setattr(page, "distinct_sentence", lambda d: "distinct.")
    tables = {("knowledge", 3): pd.DataFrame({"instance": [0, 0, 1, 2]}),
              ("reasoning", 3): pd.DataFrame({"instance": [5] * 1500})}
    inputs = {("knowledge", 3): (["c"] * 4, ["a b", ("a", "b"), "c d", "e f"])}
    log_llm = {("m", "knowledge", 3): np.zeros(4), ("m", "reasoning", 3): np.zeros(1500)}
    out = page.mem_ladder(None, tables, inputs, log_llm, None, (3,), 10, 20, 22.5)
    text = out["text"]
    assert text["knowledge_3_range"] == "('knowledge', 'reasoning') (3,)"
    assert (text["n_llm"], text["t_mem"], text["knowledge_3_facts"], text["reasoning_3_problems"]) == (
        "1,504", "22", "3", "1")
    assert (text["knowledge_3_pairs"], text["reasoning_3_pairs"]) == ("4", "1,500")
    assert text["noncontiguous_share"] == "25.0%" and text["knowledge_mem3_significant"] == "4"
    assert float(text["p_min"]) == pytest.approx(2 / (int(text["n_perm"].replace(",", "")) + 1), abs=5e-5)
    assert out["md"]["units_sentence"] == "units." and out["md"]["distinct_sentence"] == "distinct."
    assert set(out["md"]) == {"units_sentence", "noncontiguous_detail", "distinct_sentence"}


def test_the_prompt_tables_stack_the_tasks():
    scores = pd.DataFrame({"template": list("abcdefg"), "score": np.arange(7.0)})
    arms = page.arms_table({"knowledge": {"scores": scores}})
    assert list(arms["template"]) == ["a", "b", "c", "e", "f", "g"] and set(arms["task"]) == {"knowledge"}
    per_model = {"k": pd.DataFrame({"model": ["m"]}), "r": pd.DataFrame({"model": ["n"]})}
    gaps = page.gaps_table({t: (None, frame) for t, frame in per_model.items()})
    assert list(gaps["task"]) == ["k", "r"] and list(gaps["model"]) == ["m", "n"]


def test_the_copies_table_is_captioned_with_the_facts_per_bin():
    by_copies = pd.DataFrame({"params": [1000], "0": [0.0], "1": [0.5]}, index=pd.Index(["m"], name="model"))
    html = page.copies_table(by_copies, [0, 0, 1]).to_html()
    assert "facts per bin: 0: 2, 1: 1)" in html and "1,000" in html and "50%" in html


def test_summary_rounds_the_elapsed_seconds():
    assert page.summary(302.6) == {"text": {"elapsed": "303"}}


def test_the_prompt_section_glues_exactly_the_names_it_spells_out():
    scores = pd.DataFrame({"template": ["M {question}", "G {question}", "X {question}"],
                           "score": [2.519, 0.61, 1.0], "contaminated": [False, False, True]})
    arms = {t: {"scores": scores, "memorization": "M {question}", "generalization": "G {question}"}
            for t in ("knowledge", "reasoning")}
    est = SimpleNamespace(value=0.0123, lo=-0.01, hi=0.03, interval=(-0.01, 0.03), n_units=300)
    table = pd.DataFrame({"difference": [0.02, -0.01, 0.0]})
    out = page.prompts(arms, {t: (est, table) for t in arms}, {t: None for t in arms}, 1234)["text"]
    assert tuple(out) == page.PROMPT_NAMES
    assert out["prompt_opt_n"] == "1,234"
    assert out["prompt_opt_knowledge"] == "+1.2 points [-1.0, +3.0] over 300 facts, 3 models"
    assert out["prompt_opt_reasoning"].endswith("over 300 problems, 3 models")
    assert (out["prompt_opt_knowledge_memorization"], out["prompt_opt_knowledge_memorization_score"]) == (
        "M …", "2.52")
    assert (out["prompt_opt_knowledge_skipped"], out["prompt_opt_knowledge_higher"]) == ("1", "1 of 3")
    assert out["prompt_opt_reasoning_control"] == "—"
