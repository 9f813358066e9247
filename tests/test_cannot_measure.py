"""A run stops at the first sign that it cannot measure (issue 48, item 3).

Once an API model's endpoint has refused the key or cannot be reached, the first call
whose answers are all errors, of a model that has had no answer in this process,
raises :class:`~analysis.models.base.CannotMeasure` with the "measured nothing" words of
``scripts/execute_chapters.py``; ``MEMBOOK_KEEP_GOING`` answers errors instead, as
before. An endpoint that answered and refuses later never raises. Against the real
loopback server of tests/fakeserver.py.
"""

from __future__ import annotations

import pytest

from analysis.models import CannotMeasure, ModelError
from analysis.models.api import KEY_ENVS, NOT_SENT, UNREACHABLE_AFTER, OpenAIChatModel, reset_endpoints
from analysis.models.base import KEEP_GOING_ENV, MEASURED_NOTHING
from fakeserver import FakeOpenAIServer, Fault

KEY = "sk-membook-test-cannot-measure"
FAST = {"timeout": 2.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 2}
PROMPTS = [f"prompt {i}" for i in range(40)]


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MEMBOOK_API_BASE_URL", raising=False)
    monkeypatch.delenv(KEEP_GOING_ENV, raising=False)
    monkeypatch.setenv("MEMBOOK_API_KEY", KEY)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "membook-cache"))
    reset_endpoints()
    yield
    reset_endpoints()


def model_on(url: str, cache, name: str = "fake-model", **kw) -> OpenAIChatModel:
    return OpenAIChatModel(name, base_url=url, cache=cache, **{**FAST, **kw})


def test_a_refused_key_raises_at_the_first_call(cache):
    with FakeOpenAIServer(api_key="the-right-key") as s:
        model = model_on(s.base_url, cache, concurrency=4)
        with pytest.raises(CannotMeasure) as caught:
            model.chat(PROMPTS)
        assert 1 <= s.count() <= 4  # only the requests in flight when the first 401 came back
        message = str(caught.value)
        assert message.startswith(f"{MEASURED_NOTHING}: every one of its 40 queries to api:fake-model failed")
        assert "authentication failed (HTTP 401" in message and KEEP_GOING_ENV in message
        assert "the-right-key" not in message and KEY not in message
        assert isinstance(caught.value, ModelError)
        # a second model on the same endpoint and key raises at its first call, sending nothing
        other = model_on(s.base_url, cache, name="other-model")
        with pytest.raises(CannotMeasure, match="every one of its 1 queries to api:other-model failed"):
            other.chat(["one more"])
        assert s.count() <= 4


def test_keep_going_answers_errors_as_before(cache, monkeypatch):
    monkeypatch.setenv(KEEP_GOING_ENV, "1")
    with FakeOpenAIServer(api_key="the-right-key") as s:
        model = model_on(s.base_url, cache, concurrency=4)
        answers = model.chat(PROMPTS)
        again = model.chat(["later"])
        sent = s.count()
    assert 1 <= sent <= 4
    assert all(a.text is None and a.error for a in answers + again)
    assert sum(a.error.startswith(NOT_SENT) for a in answers) == 40 - sent
    assert again[0].error.startswith("not sent: authentication failed (HTTP 401")


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_keep_going_unset_in_words_still_stops(cache, monkeypatch, value):
    monkeypatch.setenv(KEEP_GOING_ENV, value)
    with FakeOpenAIServer(api_key="the-right-key") as s:
        with pytest.raises(CannotMeasure):
            model_on(s.base_url, cache).chat(PROMPTS[:3])


def test_an_endpoint_that_answered_then_refused_does_not_raise(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        model = model_on(s.base_url, cache, concurrency=1)
        first = model.chat(PROMPTS[:3])
        assert all(a.ok for a in first)
        s.api_key = "a-new-key"  # the key is revoked mid-run: every later request is refused
        later = model.chat(PROMPTS[3:10])
        assert all(a.error for a in later)
        assert later[0].error.startswith("AuthenticationError")
        assert all(a.error.startswith("not sent: authentication failed") for a in later[1:])
        # and within one call: answers, then refusals
        reset_endpoints()
        s.api_key = KEY
        mixed = model_on(s.base_url, cache, name="mixed-model", concurrency=1)
        s.on_call(s.count() + 3, Fault.error(401))
        answers = mixed.chat(PROMPTS[10:20])
    assert [a.ok for a in answers[:2]] == [True, True]
    assert all(a.error for a in answers[2:])


def test_an_unreachable_endpoint_raises_once_it_is_given_up(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        url = s.base_url  # closed on leaving: nothing listens there any more
    model = model_on(url, cache, concurrency=1, max_retries=1)
    with pytest.raises(CannotMeasure, match="the endpoint is unreachable") as caught:
        model.chat(PROMPTS[:12])
    assert str(caught.value).startswith(f"{MEASURED_NOTHING}: every one of its 12 queries")
    assert model.calls == UNREACHABLE_AFTER


def test_a_failed_connection_before_the_endpoint_is_given_up_does_not_raise(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        url = s.base_url
    model = model_on(url, cache, concurrency=1, max_retries=0)
    [answer] = model.chat(["p"])  # one failure in a row: not yet unreachable
    assert answer.error.startswith("APIConnectionError")
    with pytest.raises(CannotMeasure):  # the endpoint is given up within the next call
        model.chat(PROMPTS[:UNREACHABLE_AFTER])


def test_errors_from_an_endpoint_that_still_answers_do_not_raise(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        for p in PROMPTS[:3]:
            s.always(p, Fault.error(500))
        answers = model_on(s.base_url, cache, max_retries=1).chat(PROMPTS[:3])
    assert all(a.error.startswith("InternalServerError") for a in answers)


def test_cached_answers_are_a_measurement(cache):
    with FakeOpenAIServer(api_key=KEY) as s:
        model_on(s.base_url, cache).chat(PROMPTS[:2])
        s.api_key = "a-new-key"
        reset_endpoints()
        model = model_on(s.base_url, cache, concurrency=1)
        answers = model.chat(PROMPTS[:4])  # two from the cache, two refused
    assert [a.ok for a in answers] == [True, True, False, False]
    assert [a.cached for a in answers[:2]] == [True, True]
