"""Chapters run end to end on an API model, as a reader runs them.

The fault-injecting loopback server (tests/fakeserver.py) plays an
OpenAI-compatible endpoint. Its answers are planted so the rates the chapter
glues are known exactly; it injects 429 (with Retry-After), 500 and timeouts
that the model layer must retry through, and one prompt that always fails: it
is left out of the denominator, reported, and sent again (alone) by a second
execution.
"""

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from analysis import data, size
from analysis import phrases as ph
from analysis.lab import ladder
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


def test_phrases_on_an_api_model_with_faults(api_env, tmp_path):
    params = ph.PARAMS.resolve("smoke")
    sample = ph.sample_phrases(data.phrases(), params["n_per_type"], seed=params["seed"])
    prompts = dict(zip(sample["id"], ph.prompts(sample, chat=True)))
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


def test_size_on_an_api_chat_model_uses_the_templates(api_env, tmp_path):
    # an empty cache: the chapter trains the lab ladder it needs before probing it
    api_env.setenv("MEMBOOK_CACHE", str(tmp_path / "cache"))
    params = size.PARAMS.resolve("smoke")
    popular, baseline = size.chapter_texts(params)
    samples = size.sample_positions({**popular, **baseline}, params["prefix_lens"], params["n_per_text"],
                                    seed=params["seed"], baseline=list(baseline))
    template = size.chapter_templates(params["template_ids"]).iloc[0]
    with FakeOpenAIServer(api_key="sk-test") as server:
        for row in samples.itertuples():
            # the popular texts are answered right, the baseline stories wrong
            answer = row.target if row.text_id in popular else "zzzz"
            server.always(template.template.replace("{prefix}", row.prefix), Fault(content=answer))
        api_env.setenv("MEMBOOK_API_BASE_URL", server.base_url)
        execute("size", {"profile": "smoke", "models": MODEL}, tmp_path)
        assert server.count() == len(samples)  # one chat query per position (one template)
        assert all(r.body["messages"][0]["role"] == "system" for r in server.requests)
    index = json.loads((tmp_path / "cache" / "lab" / "index.json").read_text())
    assert sorted(index) == sorted(f"smoke/{r.name}" for r in ladder.get_profile("smoke").runs
                                   if r.family.startswith("ladder"))
    values = glued_values(tmp_path / "size.ipynb")
    assert values["lab_n"] == "4"
    assert values["gap_text"].startswith(
        f"For {MODEL}, popular texts are predicted at 1.000 and baseline texts at 0.000: a gap of +1.000")
    assert values["n_errors"] == "0"
    assert "This run's pairwise tests use raw block scores" in values["cal_verdict"]


def test_a_refused_connection_is_recorded_as_errors_and_strict_fails(api_env, tmp_path, capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api_env.setenv("MEMBOOK_API_BASE_URL", f"http://127.0.0.1:{port}/v1")
    api_env.setenv("MEMBOOK_API_MAX_RETRIES", "1")
    code = execute_main(["--chapters", "phrases", "--profile", "smoke", "-p", f"models={MODEL}",
                         "--out", str(tmp_path), "--strict"])
    assert code == 1
    summary = capsys.readouterr().out
    assert "phrases  ok" in summary
    values = glued_values(tmp_path / "phrases.ipynb")
    n = len(ph.sample_phrases(data.phrases(), ph.PARAMS.resolve("smoke")["n_per_type"]))
    assert values["n_errors"] == str(n)  # every query is an error, none scored as an answer
    assert values["first_sm"].startswith("not measured")
    assert values["verdict"] == "This run has no scorable completion to set beside the source's rates."
