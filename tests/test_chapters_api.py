"""Chapters run end to end on an API model, as a reader runs them.

The fault-injecting loopback server (tests/fakeserver.py) plays an
OpenAI-compatible endpoint. Its answers are planted so the rates the chapter
glues are known exactly; it injects 429 (with Retry-After), 500 and timeouts
that the model layer must retry through, and one prompt that always fails: it
is left out of the denominator, reported, and sent again (alone) by a second
execution.

The chapters run on the smoke lab of the run's shared cache (trained once, by
tests/conftest.py's ``smoke_lab``), each test with its own query cache; the size test
trains its ladder in an empty cache of its own (a class of its own, which pytest-xdist
runs beside the smoke lab's training).
"""

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from analysis.book import plan
from analysis.book.chapters import declaration
from analysis.core import data
from analysis.core.claims import NOT_TESTABLE, from_json
from analysis.lab import profiles
from analysis.lab.phrase_selection import english_phrases
from analysis.models.api import UNREACHABLE_AFTER
from analysis.phrases.params import PARAMS as PHRASES_PARAMS
from analysis.phrases.run import prompts as phrase_prompts
from analysis.phrases.run import sample_phrases
from analysis.size.method_probe import sample_positions
from analysis.size.params import PARAMS
from analysis.size.run import chapter_templates, chapter_texts
from fakeserver import FakeOpenAIServer, Fault

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_chapters import execute, glued_values  # noqa: E402
from execute_chapters import main as execute_main  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("MEMBOOK_DATA_MIRROR"), reason="MEMBOOK_DATA_MIRROR is unset"),
]
MODEL = "api:fake-model"
WRONG = "完全不同的一段文字内容在这里出现了很多次而且很长"


@pytest.fixture
def api_env(monkeypatch):
    """Fast retries for the kernel's API model (it inherits this environment)."""
    monkeypatch.setenv("MEMBOOK_API_KEY", "sk-test")
    monkeypatch.setenv("MEMBOOK_API_TIMEOUT", "1.5")
    monkeypatch.setenv("MEMBOOK_API_MAX_RETRIES", "2")
    monkeypatch.setenv("MEMBOOK_API_BASE_DELAY", "0.05")
    return monkeypatch


@pytest.mark.usefixtures("smoke_lab", "real_models")
def test_phrases_on_an_api_model_with_faults(api_env, shared_artifacts, tmp_path):
    params = PHRASES_PARAMS.resolve("smoke")
    sample = sample_phrases(data.phrases(), params["n_per_type"], seed=params["seed"])
    prompts = dict(zip(sample["id"], phrase_prompts(sample, chat=True)))
    sm = sample.loc[sample["type"] == "propaganda", "id"].tolist()
    cx = sample.loc[sample["type"] == "culturax", "id"].tolist()
    correct = set(sm[:2] + cx[:1])  # 2 state-media endings and 1 CulturaX ending come back verbatim
    broken = sm[-1]  # always fails: excluded from the state-media denominator (2 of 5, not 2 of 6)
    with FakeOpenAIServer(api_key="sk-test") as server:
        for row in sample.itertuples():
            answer = row.end if row.id in correct else WRONG
            server.always(prompts[row.id], Fault(content=answer))
        server.always(prompts[broken], Fault.error(500))
        server.script(prompts[sm[0]], [Fault.error(429, retry_after=0.2)])
        server.script(prompts[sm[1]], [Fault.error(500)])
        server.script(prompts[cx[0]], [Fault.slow(3.0)])  # longer than the 1.5 s timeout
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)

        execute("phrases", {"profile": "smoke", "models": MODEL}, tmp_path)
        values = glued_values(tmp_path / "phrases.ipynb")
        assert values["first_model"] == MODEL
        assert values["first_sm"].startswith("40.0% [")  # 2 of 5
        assert values["first_cx"].startswith("16.7% [")  # 1 of 6
        assert values["n_errors"] == "1" and values["run_errors"] == "1"
        assert values["top_rate"] == "40.0% (2 of 5), for api:fake-model on state coordinated media phrases"
        # retried through 429, 500 and a timeout; the broken prompt tried 1 + 2 times
        assert server.count(prompts[sm[0]]) == 2 and server.count(prompts[sm[1]]) == 2
        assert server.count(prompts[cx[0]]) == 2 and server.count(prompts[broken]) == 3

        before = server.count()
        execute("phrases", {"profile": "smoke", "models": MODEL}, tmp_path)
        again = server.requests[before:]
        assert [r.prompt for r in again] == [prompts[broken]] * 3  # only the failed prompt is sent again
        values = glued_values(tmp_path / "phrases.ipynb")
        assert values["run_calls"] == "1" and values["run_errors"] == "1"
        assert values["first_sm"].startswith("40.0% [")


class TestOwnLadder:
    """A class of its own: pytest-xdist's ``--dist loadscope`` runs it on one worker while
    another trains the smoke lab (it needs none: it trains its ladder itself)."""

    @pytest.mark.usefixtures("real_models")
    def test_size_on_an_api_chat_model_uses_the_templates(self, api_env, isolated_cache, tmp_path):
        # an empty cache (the test's own): the chapter trains the lab ladder it needs before probing it
        params = PARAMS.resolve("smoke")
        popular, baseline = chapter_texts(params)
        samples = sample_positions({**popular, **baseline}, params["prefix_lens"], params["n_per_text"],
                                        seed=params["seed"], baseline=list(baseline))
        template = chapter_templates(params["template_ids"]).iloc[0]
        with FakeOpenAIServer(api_key="sk-test") as server:
            for row in samples.itertuples():
                # the popular texts are answered right, the baseline stories wrong
                answer = row.target if row.text_id in popular else "zzzz"
                server.always(template.template.replace("{prefix}", row.prefix), Fault(content=answer))
            api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
            execute("size", {"profile": "smoke", "models": MODEL}, tmp_path)
            assert server.count() == len(samples)  # one chat query per position (one template)
            assert all(r.body["messages"][0]["role"] == "system" for r in server.requests)
        index = json.loads((isolated_cache / "lab" / "index.json").read_text())
        # the ladder it probes, and the ablation and held-out runs it places on the law
        assert sorted(index) == sorted(f"smoke/{r.name}" for r in profiles.get_profile("smoke").runs
                                       if r.family.startswith("ladder")
                                       or r.family in (profiles.ABLATION, profiles.HELDOUT))
        values = glued_values(tmp_path / "size.ipynb")
        assert values["lab_n"] == "4"
        # popular texts all right, baseline all wrong: accuracies 1 and 0, a gap of +1
        assert all(number in values["gap_text"] for number in (MODEL, "1.000", "0.000", "+1.000"))
        [gap] = [c for c in from_json(values["claims"])
                 if c.id.startswith("gap_") and c.extra["model"] == MODEL]
        assert gap.value == 1.0 and gap.extra["popular"] == 1.0 and gap.extra["baseline"] == 0.0
        assert values["n_errors"] == "0" and values["cal_verdict"]


@pytest.mark.usefixtures("smoke_lab", "real_models")
def test_a_refused_connection_measures_nothing_and_fails_without_strict(api_env, shared_artifacts, tmp_path,
                                                                        capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api_env.setenv("MEMBOOK_API_BASE_URL", f"http://127.0.0.1:{port}/v1")
    api_env.setenv("MEMBOOK_API_MAX_RETRIES", "1")
    # --keep-going: the chapter runs to its end, every answer of the model an error (without
    # it, the chapter stops at the query: test_a_wrong_key_stops_the_chapter_before_the_lab)
    code = execute_main(["--chapters", "phrases", "--profile", "smoke", "-p", f"models={MODEL}",
                         "--out", str(tmp_path), "--keep-going"])
    assert code == 1  # without --strict: every query to the model failed, so nothing was measured
    out, err = capsys.readouterr()
    assert "phrases  failed: measured nothing" in out
    assert f"queries to {MODEL} failed" in err and "the endpoint is unreachable" in err
    values = glued_values(tmp_path / "phrases.ipynb")
    n = len(sample_phrases(data.phrases(), PHRASES_PARAMS.resolve("smoke")["n_per_type"]))
    assert values["n_errors"] == str(n)  # every query is an error, none scored as an answer
    [usage] = [m for m in json.loads(values["run_models"]) if m["model"] == MODEL]
    # the endpoint was given up once three requests had failed to connect (a few more were in flight)
    assert UNREACHABLE_AFTER <= usage["calls"] < UNREACHABLE_AFTER + 4 < n
    assert values["first_sm"].startswith("not measured")
    # with no scorable completion, the comparison with the source's rates is not testable here
    assert values["verdict"] and NOT_TESTABLE in {c.status for c in from_json(values["claims"])}


def test_a_wrong_key_stops_the_chapter_before_the_lab(api_env, isolated_cache, tmp_path, capsys):
    """A refused key fails the chapter in the cell that queries the model, with the
    "measured nothing" of a run that measured nothing, before the lab is built or asked
    (an empty cache of the test's own: a lab run the chapter built would be in it)."""
    api_env.delenv("MEMBOOK_KEEP_GOING", raising=False)
    with FakeOpenAIServer(api_key="the-right-key") as server:
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
        code = execute_main(["--chapters", "phrases", "--profile", "smoke", "-p", f"models={MODEL}",
                             "--out", str(tmp_path / "out")])
        sent = server.count()
    assert code == 1
    out, err = capsys.readouterr()
    assert "phrases  failed: measured nothing" in out
    assert "phrases: failed: measured nothing: every one of its" in err
    assert f"queries to {MODEL} failed" in err and "authentication failed (HTTP 401" in err
    assert 1 <= sent <= 4  # the requests in flight when the first 401 came back, then nothing
    # the lab was neither trained nor queried: no lab run, no lab corpus, no lab query in the cache
    assert not (isolated_cache / "lab").exists()
    assert not list(isolated_cache.glob("lab*"))
    nb = json.loads((tmp_path / "out" / "phrases.ipynb").read_text())
    ran = [c["source"] for c in nb["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
    assert not any("build_lab" in "".join(source) for source in ran)


# -- the paper profiles, planned and run (reduced) against the loopback server ---------------
#
# Every chapter that accepts API models is planned at its paper profile, then executed
# at that profile with every parameter of it except the sample sizes, and with the smoke
# lab: the paper profiles use the book's lab, whose ladder takes most of an hour to train
# from an empty cache. What reaches the server is checked against the reduced plan.


def _plan(chapter: str, profile: str, **overrides):
    params = declaration(chapter).resolve(profile, **overrides)
    return params, plan.table(chapter, plan.chapter_plan(chapter, params), price=(1.0, 2.0))


def _api_rows(frame):
    return frame[frame["backend"] == "api"]


@pytest.mark.usefixtures("smoke_lab", "real_models")
def test_phrases_paper_plan_and_reduced_execution(api_env, shared_artifacts, tmp_path):
    params, full = _plan("phrases", "paper", models=[MODEL])
    api = _api_rows(full)
    # all 1,000 phrases of each type, re-asked at most once each, and every English counterpart phrase
    english = len(english_phrases(params["n_english_per_type"], seed=params["seed"]))
    assert api.set_index("part")["queries"].to_dict() == {
        "phrases": 2000, "re-query of short completions": 2000, "English counterpart": english,
        "re-query of short English completions": english}
    assert api.set_index("part")["completion_tokens"].to_dict() == {
        "phrases": 2000 * 256, "re-query of short completions": 2000 * 2048,
        "English counterpart": english * 64, "re-query of short English completions": english * 2048}
    assert set(api["counted"]) == {"estimate (gemma3-270m tokenizer + 4/message)"}
    t = plan.totals(api)
    assert t["cost"] == pytest.approx((t["prompt_tokens"] * 1.0 + t["completion_tokens"] * 2.0) / 1e6)

    reduced = {"models": MODEL, "n_per_type": 3, "n_english_per_type": 2, "lab_profile": "smoke"}
    _, small = _plan("phrases", "paper", **reduced)
    small_api = plan.totals(_api_rows(small))
    with FakeOpenAIServer(api_key="sk-test") as server:
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
        execute("phrases", {"profile": "paper", **reduced}, tmp_path)
        sent = server.requests
    assert small_api["exact_queries"] <= len(sent) <= small_api["queries"]
    # the paper profile's budgets reach the server
    assert {r.body["max_tokens"] for r in sent} <= {256, 2048, 64}
    assert sum(r.body["max_tokens"] == 256 for r in sent) == 6
    assert sum(r.body["max_tokens"] == 64 for r in sent) == len(english_phrases(2))
    values = glued_values(tmp_path / "phrases.ipynb")
    assert values["run_errors"] == "0" and values["first_model"] == MODEL


@pytest.mark.usefixtures("smoke_lab", "real_models")
def test_size_paper_plan_and_reduced_execution(api_env, shared_artifacts, tmp_path):
    params, full = _plan("size", "paper", models=[MODEL])
    api = _api_rows(full)
    # 41 texts x 6 prefix lengths x 100 positions, each in the five Table V templates
    assert len(params["prefix_lens"]) == 6 and params["template_ids"] == (1, 2, 3, 4, 5)
    assert api["queries"].tolist() == [41 * 6 * 100] * 5
    assert api["part"].tolist() == [f"probe (template {k})" for k in range(1, 6)]

    reduced = {"models": MODEL, "n_per_text": 1, "n_lab_per_text": 1, "lab_profile": "smoke"}
    _, small = _plan("size", "paper", **reduced)
    expected = plan.totals(_api_rows(small))
    assert expected["queries"] == expected["exact_queries"] == 41 * 6 * 5
    with FakeOpenAIServer(api_key="sk-test") as server:
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
        execute("size", {"profile": "paper", **reduced}, tmp_path)
        sent = server.requests
    assert len(sent) == expected["queries"]  # the plan counted exactly what reached the server
    assert {r.body["max_tokens"] for r in sent} == {params["max_new_tokens"]}
    assert len({json.dumps(r.body["messages"]) for r in sent}) == len(sent)  # no query sent twice
    values = glued_values(tmp_path / "size.ipynb")
    assert values["n_errors"] == "0"


def test_entropy_on_a_chat_only_endpoint_fails_in_its_first_cell(api_env, tmp_path):
    """A served model whose server gives no tokenizer and no prompt scores (here a chat-only
    endpoint) stops the entropy chapter in its first cell, naming what is missing and the
    server options that provide it, before the lab is built or a model loads."""
    import papermill as pm
    with FakeOpenAIServer(api_key="sk-test") as server:
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
        with pytest.raises(pm.PapermillExecutionError) as err:
            execute("entropy", {"profile": "smoke", "models": MODEL}, tmp_path)
        assert server.count() == 0  # only the probe's routes were tried; no chat request
    text = str(err.value)
    assert "lacks what this chapter needs" in text and "/extras/tokenize" in text and "--logits_all" in text
    nb = json.loads((tmp_path / "entropy.ipynb").read_text())
    executed = [c for c in nb["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
    assert len(executed) <= 3  # parameters, injected parameters, the validating cell
