"""The API backend against a real local HTTP server (tests/fakeserver.py).

Everything goes through the official ``openai`` client over a socket: retries,
timeouts, error recording, key hygiene, bounded concurrency, caching, and
resuming a run killed midway.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from analysis.core.cache import QueryCache
from analysis.models import GenerationSettings, ModelError, load_model
from analysis.models.api import (
    KEY_ENVS,
    NOT_SENT,
    UNREACHABLE_AFTER,
    OpenAIChatModel,
    _retry_after,
    reset_endpoints,
)
from analysis.models.base import KEEP_GOING_ENV
from fakeserver import FakeOpenAIServer, Fault

KEY = "sk-membook-test-9f3c1a77e2"
SRC = Path(__file__).resolve().parents[1] / "src"
FAST = {"timeout": 2.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 3}


@pytest.fixture(autouse=True)
def _env(module_key, monkeypatch, tmp_path):
    """Known key, no stray endpoint config, cache isolated in tmp_path."""
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "membook-cache"))


def make(server, cache, **kw) -> OpenAIChatModel:
    return OpenAIChatModel("fake-model", base_url=server.base_url, cache=cache, **{**FAST, **kw})


# -- talking to the server -------------------------------------------------------


def test_openai_client_talks_to_server_with_bearer_key(server, cache):
    [answer] = make(server, cache).chat(["hello"])
    assert answer.text == "echo:hello"
    [req] = server.requests
    assert req.headers["user-agent"].startswith("OpenAI/Python ")
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["model"] == "fake-model"
    assert req.body["messages"] == [{"role": "user", "content": "hello"}]


def test_happy_path_answers_in_input_order(server, cache):
    prompts = [f"prompt {i}" for i in range(12)]
    server.delay = 0.01
    answers = make(server, cache, concurrency=4).generate(prompts)
    assert [a.text for a in answers] == [f"echo:{p}" for p in prompts]
    assert all(a.ok and not a.cached for a in answers)
    assert answers[0].meta["finish_reason"] == "stop"
    assert answers[0].meta["model"] == "fake-model"
    assert answers[0].meta["usage"] == {
        "prompt_tokens": 2,
        "completion_tokens": 2,
        "total_tokens": 4,
    }
    assert server.count() == 12


def test_message_lists_are_sent_as_given(server, cache):
    conversation = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]
    [answer] = make(server, cache).chat([conversation])
    assert answer.text == "echo:second"
    assert server.requests[0].body["messages"] == conversation


def test_settings_mapping(server, cache):
    model = make(server, cache)
    model.chat(
        ["a"], GenerationSettings(max_new_tokens=7, temperature=0.5, top_k=20, top_p=0.9, seed=3)
    )
    model.chat(["b"])
    body_a, body_b = (r.body for r in server.requests)
    assert (body_a["max_tokens"], body_a["temperature"], body_a["top_p"]) == (7, 0.5, 0.9)
    # a sampled request sends its own seed: a hash of the request (settings.seed and its sample index)
    from analysis.models.base import Request

    sampled = GenerationSettings(max_new_tokens=7, temperature=0.5, top_k=20, top_p=0.9, seed=3)
    assert body_a["seed"] == Request([{"role": "user", "content": "a"}], True, sampled).seed
    assert body_a["top_k"] == 20  # via extra_body, merged into the JSON body
    assert (body_b["max_tokens"], body_b["temperature"], body_b["seed"]) == (256, 0.0, 0)
    assert "top_k" not in body_b and "top_p" not in body_b


def test_served_model_name_recorded(cache):
    with FakeOpenAIServer(api_key=KEY, served_model="provider/fake-model-2025") as s:
        [answer] = make(s, cache).chat(["x"])
    assert answer.meta["model"] == "provider/fake-model-2025"


# -- retries -----------------------------------------------------------------------


def test_429_then_success(server, cache):
    server.script("p", [Fault.error(429)])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text == "echo:p" and answer.ok
    assert server.count("p") == 2
    assert answer.meta["attempts"] == 2


def test_retry_after_is_honoured(server, cache):
    # backoff alone would wait <= base_delay (0.01 s); Retry-After asks for 0.3 s
    server.script("p", [Fault.error(429, retry_after=0.3)])
    [answer] = make(server, cache, max_delay=5.0).chat(["p"])
    first, second = server.requests
    assert answer.text == "echo:p"
    assert second.time - first.time >= 0.3


def test_retry_after_is_capped(server, cache):
    server.script("p", [Fault.error(503, retry_after=3600)])
    start = time.monotonic()
    [answer] = make(server, cache, max_delay=0.2).chat(["p"])
    assert answer.text == "echo:p"
    assert server.count("p") == 2
    assert time.monotonic() - start < 2.0


def test_error_inside_a_200_response_is_retried(server, cache):
    # OpenRouter reports a failed upstream provider as 200 with an "error" object
    upstream = json.dumps({"error": {"message": "provider unavailable", "code": 502}})
    server.script("p", [Fault(body=upstream)])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text == "echo:p"
    assert server.count("p") == 2


def test_retry_after_header_forms():
    def exc(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert _retry_after(exc({"retry-after": "2"})) == 2.0
    assert _retry_after(exc({"retry-after": "0.5"})) == 0.5
    assert _retry_after(exc({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    http_date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < _retry_after(exc({"retry-after": http_date})) <= 31
    assert _retry_after(exc({"retry-after": "soon"})) is None
    assert _retry_after(exc({})) is None
    assert _retry_after(ValueError("no response")) is None


def test_500_twice_then_success(server, cache):
    server.script("p", [Fault.error(500), Fault.error(500)])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text == "echo:p"
    assert server.count("p") == 3


def test_503_then_success(server, cache):
    server.script("p", [Fault.error(503)])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text == "echo:p"
    assert server.count("p") == 2


def test_slow_response_times_out_then_succeeds(server, cache):
    server.script("p", [Fault.slow(1.5)])
    start = time.monotonic()
    [answer] = make(server, cache, timeout=0.3).chat(["p"])
    assert answer.text == "echo:p"
    assert server.count("p") == 2
    assert time.monotonic() - start < 1.5  # the retry did not wait for the slow reply


def test_timeout_every_time_is_an_error(server, cache):
    server.always("p", Fault.slow(1.0))
    [answer] = make(server, cache, timeout=0.2, max_retries=1).chat(["p"])
    assert answer.text is None
    assert answer.error.startswith("APITimeoutError: ")
    assert server.count("p") == 2


def test_connection_refused_is_retried_then_an_error(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        url = s.base_url
    model = OpenAIChatModel("fake-model", base_url=url, cache=cache, **{**FAST, "max_retries": 2})
    [answer] = model.chat(["p"])
    assert answer.text is None
    assert answer.error.startswith("APIConnectionError: ")
    assert answer.meta["attempts"] == 3


def test_a_refused_key_stops_every_further_request_to_the_endpoint(cache, monkeypatch):
    # every answer an error, as a run with --keep-going sees it (without it, the call
    # raises CannotMeasure: tests/test_cannot_measure.py)
    monkeypatch.setenv(KEEP_GOING_ENV, "1")
    with FakeOpenAIServer(api_key="the-right-key") as s:
        model = OpenAIChatModel("fake-model", base_url=s.base_url, cache=cache, concurrency=4, **FAST)
        answers = model.chat([f"prompt {i}" for i in range(40)])
        sent = s.count()
        assert 1 <= sent <= 4  # at most the requests already in flight when the first 401 came back
        assert all(a.text is None for a in answers)
        refused = [a for a in answers if not a.error.startswith(NOT_SENT)]
        assert len(refused) == sent and all("401" in a.error for a in refused)
        not_sent = [a for a in answers if a.error.startswith(NOT_SENT)]
        assert len(not_sent) == 40 - sent
        assert all(a.error.startswith("not sent: authentication failed (HTTP 401") for a in not_sent)
        assert cache.count(errors=True) == sent  # what was never sent is not stored
        assert model.calls == sent
        # a second model on the same endpoint and key sends nothing either
        other = OpenAIChatModel("other-model", base_url=s.base_url, cache=cache, **FAST)
        [answer] = other.chat(["one more"])
        assert answer.error.startswith(NOT_SENT) and s.count() == sent
        # the next run (here: the endpoints forgotten) tries again
        reset_endpoints()
        other = OpenAIChatModel("other-model", base_url=s.base_url, cache=cache, **FAST)
        other.chat(["one more"])
        assert s.count() == sent + 1


def test_an_unreachable_endpoint_stops_after_a_few_failed_requests(cache, monkeypatch):
    monkeypatch.setenv(KEEP_GOING_ENV, "1")  # as with --keep-going (tests/test_cannot_measure.py)
    with FakeOpenAIServer(api_key=KEY) as s:
        url = s.base_url
    model = OpenAIChatModel("fake-model", base_url=url, cache=cache,
                            **{**FAST, "max_retries": 1}, concurrency=1)
    answers = model.chat([f"prompt {i}" for i in range(12)])
    tried = answers[:UNREACHABLE_AFTER]
    assert all(a.error.startswith("APIConnectionError") and a.meta["attempts"] == 2 for a in tried)
    rest = answers[UNREACHABLE_AFTER:]
    assert all(a.error.startswith("not sent: the endpoint is unreachable") for a in rest)
    assert model.calls == UNREACHABLE_AFTER


# -- failures become errors, never text --------------------------------------------


def test_persistent_500_is_an_error_stored_and_retried_on_demand(server, cache):
    server.always("p", Fault.error(500))
    [answer] = make(server, cache, max_retries=2).chat(["p", "ok"])[:1]
    assert answer.text is None
    assert answer.error.startswith("InternalServerError: ")
    assert server.count("p") == 3  # first attempt + 2 retries
    assert cache.count(errors=True) == 1 and cache.count(errors=False) == 1

    server.always("p", None)  # the outage is over
    frozen = make(server, cache, retry_errors=False)
    [again] = frozen.chat(["p"])
    assert again.cached and again.text is None and again.error == answer.error
    assert frozen.calls == 0 and server.count("p") == 3

    retrying = make(server, cache, retry_errors=True)
    [fixed] = retrying.chat(["p", "ok"])[:1]
    assert fixed.text == "echo:p" and fixed.ok
    assert retrying.calls == 1 and server.count("p") == 4 and server.count("ok") == 1
    assert cache.count(errors=True) == 0


def test_malformed_json_is_an_error_not_text(server, cache):
    server.script("p", [Fault.malformed()])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text is None
    assert answer.error.startswith("MalformedResponseError: ")
    assert server.count("p") == 1
    assert cache.count(errors=True) == 1


def test_missing_choices_is_an_error(server, cache):
    server.script("p", [Fault.no_choices()])
    [answer] = make(server, cache).chat(["p"])
    assert answer.text is None
    assert answer.error == "MalformedResponseError: response has no choices"


def test_400_fails_after_one_call(server, cache):
    server.always("p", Fault.error(400))
    [answer] = make(server, cache).chat(["p"])
    assert answer.text is None
    assert answer.error.startswith("BadRequestError: ")
    assert answer.meta["status_code"] == 400
    assert server.count("p") == 1


@pytest.mark.parametrize("content", ["", None])
def test_empty_content_is_an_answer_not_an_error(server, cache, content):
    server.script("p", [Fault.empty(content, finish_reason="length")])
    [answer] = make(server, cache).chat(["p"])
    assert answer.ok and answer.text == ""
    assert answer.meta["finish_reason"] == "length"
    assert server.count("p") == 1
    assert cache.count(errors=False) == 1


def test_raw_completion_is_refused_before_any_request(server, cache):
    model = make(server, cache)
    with pytest.raises(ModelError, match="chat"):
        model.complete(["Once upon a time"])
    with pytest.raises(ModelError):
        model.next_word(["Once upon a"])
    assert server.count() == 0 and cache.count() == 0


# -- configuration and key hygiene ----------------------------------------------------


def test_missing_key_fails_at_construction(monkeypatch, server):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelError) as info:
        OpenAIChatModel("fake-model", base_url=server.base_url)
    for name in KEY_ENVS:
        assert name in str(info.value)
    assert server.count() == 0


def test_key_cannot_be_passed_as_argument(server):
    with pytest.raises(ModelError, match="environment"):
        OpenAIChatModel("fake-model", base_url=server.base_url, api_key="sk-other")


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"OPENAI_API_KEY": "sk-openai"}, "sk-openai"),
        ({"OPENROUTER_API_KEY": "sk-router", "OPENAI_API_KEY": "sk-openai"}, "sk-router"),
        ({"MEMBOOK_API_KEY": "sk-mb", "OPENROUTER_API_KEY": "sk-router"}, "sk-mb"),
    ],
)
def test_key_fallback_order(monkeypatch, cache, env, expected):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with FakeOpenAIServer() as s:
        make(s, cache).chat(["x"])
        assert s.requests[0].headers["authorization"] == f"Bearer {expected}"


def test_base_url_from_environment_and_cache_identity(monkeypatch, server, cache):
    monkeypatch.setenv("MEMBOOK_API_BASE_URL", server.base_url)
    model = load_model("api:fake-model", cache=cache, **FAST)
    assert isinstance(model, OpenAIChatModel)
    assert model.cache_identity() == f"127.0.0.1:{server.port}/fake-model"
    assert model.chat(["x"])[0].text == "echo:x"
    assert server.count() == 1
    # one name everywhere: the model is called what the user passed; the endpoint gets the bare id
    assert model.name == "api:fake-model" and model.model_id == "fake-model"
    assert server.requests[0].body["model"] == "fake-model"


def test_retry_settings_from_the_environment(monkeypatch, cache):
    monkeypatch.setenv("MEMBOOK_API_TIMEOUT", "2.5")
    monkeypatch.setenv("MEMBOOK_API_MAX_RETRIES", "1")
    model = OpenAIChatModel("m", cache=cache)
    assert (model.timeout, model.max_retries) == (2.5, 1)
    assert OpenAIChatModel("m", cache=cache, max_retries=4).max_retries == 4  # an argument wins
    monkeypatch.setenv("MEMBOOK_API_MAX_RETRIES", "many")
    with pytest.raises(ModelError, match="MEMBOOK_API_MAX_RETRIES must be a whole number, got 'many'"):
        OpenAIChatModel("m", cache=cache)


def test_default_endpoint_is_openrouter(cache):
    model = OpenAIChatModel("some/model", cache=cache)
    assert model.cache_identity() == "openrouter.ai/some/model"
    assert model.base_url == "https://openrouter.ai/api/v1"


def test_endpoints_do_not_share_cache_entries(cache):
    with FakeOpenAIServer(api_key=KEY) as a, FakeOpenAIServer(api_key=KEY) as b:
        make(a, cache).chat(["x"])
        model_b = make(b, cache)
        model_b.chat(["x"])
        assert model_b.calls == 1 and b.count() == 1


def test_key_never_leaks(server, cache, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    server.script("retry", [Fault.error(429), Fault.error(500)])
    server.always("echo", Fault.echo_authorization(400))
    model = make(server, cache)
    answers = model.chat(["ok", "retry", "echo"])
    assert [a.ok for a in answers] == [True, True, False]
    assert KEY not in answers[2].error and "[redacted]" in answers[2].error
    assert KEY not in repr(model) and KEY not in str(model)
    for answer in answers:
        assert KEY not in json.dumps(answer.meta)
    assert KEY not in caplog.text
    assert "retrying" in caplog.text  # the retries were logged, without the key
    cache.close()
    files = list(tmp_path.glob("queries.sqlite*"))
    assert files
    for path in files:
        assert KEY.encode() not in path.read_bytes()
    with sqlite3.connect(tmp_path / "queries.sqlite") as conn:
        rows = conn.execute("SELECT * FROM answers").fetchall()
    assert len(rows) == 3 and KEY not in repr(rows)


# -- concurrency and caching ---------------------------------------------------------


def test_bounded_concurrency(server, cache):
    server.delay = 0.05
    answers = make(server, cache, concurrency=2).chat([f"p{i}" for i in range(10)])
    assert all(a.ok for a in answers)
    assert server.max_in_flight == 2  # never more, and concurrency really happened


def test_rerun_makes_no_calls_and_returns_identical_answers(server, cache):
    prompts = [f"p{i}" for i in range(6)] + ["p0"]
    first = make(server, cache).chat(prompts)
    assert server.count() == 6  # the duplicate was sent once
    model = make(server, cache)
    second = model.chat(prompts)
    assert model.calls == 0 and server.count() == 6
    assert [(a.text, a.error) for a in second] == [(a.text, a.error) for a in first]
    assert all(a.cached for a in second) and not any(a.cached for a in first)
    assert [a.meta["finish_reason"] for a in second] == [a.meta["finish_reason"] for a in first]


def test_different_settings_are_different_requests(server, cache):
    model = make(server, cache)
    model.chat(["p"])
    model.chat(["p"], GenerationSettings(temperature=0.7, seed=1))
    model.chat(["p"], GenerationSettings(temperature=0.7, seed=2))
    model.chat(["p"], GenerationSettings(temperature=0.7, seed=2))
    assert server.count("p") == 3


# -- kill and resume -----------------------------------------------------------------

RUNNER = textwrap.dedent(
    """
    import json, sys
    from analysis.core.cache import QueryCache
    from analysis.models import load_model

    prompts = [f"resume prompt {i:02d}" for i in range(30)]
    model = load_model("api:fake-model", cache=QueryCache(sys.argv[1]), concurrency=3,
                       base_delay=0.01, max_delay=0.05, timeout=5)
    answers = model.chat(prompts)
    print(json.dumps([[a.text, a.error] for a in answers]))
    """
)


def _answered_prompts(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT request FROM answers WHERE error IS NULL").fetchall()
    return {json.loads(r)["prompt"][-1]["content"] for (r,) in rows}


def test_kill_and_resume(server, tmp_path):
    server.delay = 0.1
    prompts = [f"resume prompt {i:02d}" for i in range(30)]
    path = tmp_path / "resume.sqlite"
    env = {
        **os.environ,
        "MEMBOOK_API_BASE_URL": server.base_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    cmd = [sys.executable, "-c", RUNNER, str(path)]

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while server.count() < 10:
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the runner never reached 10 requests"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    seen_before = server.requests
    committed = _answered_prompts(path)
    assert committed, "nothing was committed before the kill"
    assert len(committed) < 30 and len(seen_before) < 30, "the kill came too late"
    assert committed <= {r.prompt for r in seen_before}

    done = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    resumed = json.loads(done.stdout.decode().strip().splitlines()[-1])
    seen_after = server.requests[len(seen_before) :]
    resent = [r.prompt for r in seen_after]
    assert not committed & set(resent), "a committed answer was asked for again"
    assert sorted(resent) == sorted(set(prompts) - committed)  # the rest, once each
    for prompt in committed:
        assert sum(r.prompt == prompt for r in server.requests) == 1

    assert len(resumed) == 30 and all(error is None for _, error in resumed)
    assert _answered_prompts(path) == set(prompts)

    clean = make(server, QueryCache(tmp_path / "clean.sqlite"), concurrency=8).chat(prompts)
    assert [text for text, _ in resumed] == [a.text for a in clean]
