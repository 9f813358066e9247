"""API-model concurrency: set by ``MEMBOOK_API_CONCURRENCY`` or ``concurrency=``,
checked before any request, reached at the server, and no part of the cache key.

Counts, not timings: the fake server holds every request for a while, so the
peak number of requests it sees in flight is the client's concurrency.
"""

from __future__ import annotations

import pytest

from analysis.core.cache import QueryCache
from analysis.models import ModelError, load_model
from analysis.models.api import (
    CONCURRENCY_ENV,
    DEFAULT_CONCURRENCY,
    KEY_ENVS,
    MAX_CONCURRENCY,
    OpenAIChatModel,
)

KEY = "sk-membook-test-concurrency"
FAST = {"timeout": 10.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 3}
ALLOWED = "a whole number from 1 to 256"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("MEMBOOK_API_BASE_URL", raising=False)
    monkeypatch.delenv(CONCURRENCY_ENV, raising=False)
    monkeypatch.setenv("MEMBOOK_API_KEY", KEY)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "membook-cache"))


def make(server, cache, **kw) -> OpenAIChatModel:
    return load_model("api:fake-model", base_url=server.base_url, cache=cache, **{**FAST, **kw})


def peak_in_flight(server, model, n: int) -> int:
    """Send ``n`` distinct prompts; the server's peak in flight. The server holds requests
    until ``model.concurrency`` are in flight (so the peak reaches it however slowly the
    workers start), then answers each after 0.2 s (so a client sending more would show more)."""
    server.gate(model.concurrency)
    server.delay = 0.2
    answers = model.chat([f"prompt {i}" for i in range(n)])
    assert all(a.ok and not a.cached for a in answers)
    return server.max_in_flight


def test_bound_is_256():
    assert MAX_CONCURRENCY == 256 and DEFAULT_CONCURRENCY == 4


def test_default_concurrency_reaches_the_server(server, cache):
    model = make(server, cache)
    assert model.concurrency == DEFAULT_CONCURRENCY
    assert peak_in_flight(server, model, 3 * DEFAULT_CONCURRENCY) == DEFAULT_CONCURRENCY


def test_environment_sets_concurrency(monkeypatch, server, cache):
    monkeypatch.setenv(CONCURRENCY_ENV, "6")
    model = make(server, cache)
    assert model.concurrency == 6
    assert peak_in_flight(server, model, 20) == 6


def test_argument_wins_over_environment(monkeypatch, server, cache):
    monkeypatch.setenv(CONCURRENCY_ENV, "6")
    model = make(server, cache, concurrency=3)
    assert model.concurrency == 3
    assert peak_in_flight(server, model, 12) == 3


@pytest.mark.parametrize("text, expected", [(" 16 ", 16), ("1", 1), ("256", 256), ("", DEFAULT_CONCURRENCY)])
def test_environment_values_accepted(monkeypatch, cache, text, expected):
    monkeypatch.setenv(CONCURRENCY_ENV, text)
    assert OpenAIChatModel("m", cache=cache).concurrency == expected


@pytest.mark.parametrize("text", ["0", "-1", "257", "100000", "many", "4.0", "1e2", "8 workers"])
def test_bad_environment_value_fails_before_any_request(monkeypatch, server, cache, text):
    monkeypatch.setenv(CONCURRENCY_ENV, text)
    with pytest.raises(ModelError) as info:
        make(server, cache).chat(["p"])
    assert str(info.value) == (
        f"{CONCURRENCY_ENV} must be {ALLOWED} (requests in flight at once), got {text!r}"
    )
    assert server.count() == 0 and cache.count() == 0


@pytest.mark.parametrize("value", [0, -2, 257, 2.5, "8", True])
def test_bad_argument_fails_before_any_request(monkeypatch, server, cache, value):
    monkeypatch.setenv(CONCURRENCY_ENV, "8")  # a good environment does not rescue a bad argument
    with pytest.raises(ModelError) as info:
        make(server, cache, concurrency=value).chat(["p"])
    message = str(info.value)
    assert message.startswith(f"concurrency must be {ALLOWED}")
    assert CONCURRENCY_ENV in message and repr(value) in message
    assert server.count() == 0 and cache.count() == 0


def test_concurrency_is_not_part_of_the_cache_key(monkeypatch, server, cache):
    prompts = [f"q{i}" for i in range(10)]
    serial = make(server, cache, concurrency=1)
    first = serial.chat(prompts)
    assert server.count() == 10 and not any(a.cached for a in first)

    wide = make(server, cache, concurrency=8)
    again = wide.chat(prompts)
    assert wide.calls == 0 and server.count() == 10
    assert all(a.cached for a in again)
    assert [(a.text, a.error) for a in again] == [(a.text, a.error) for a in first]

    monkeypatch.setenv(CONCURRENCY_ENV, "32")
    from_env = make(server, cache)
    assert from_env.chat(prompts) == again and from_env.calls == 0
    request = {"prompt": [{"role": "user", "content": "q0"}], "chat": True}
    assert serial._key("chat", request) == wide._key("chat", request) == from_env._key("chat", request)


def test_answers_do_not_depend_on_concurrency(server, tmp_path):
    prompts = [f"r{i}" for i in range(40)]
    texts = {}
    for c in (1, 8, 32):
        with QueryCache(tmp_path / f"c{c}.sqlite") as fresh:
            texts[c] = [a.text for a in make(server, fresh, concurrency=c).chat(prompts)]
    assert texts[1] == texts[8] == texts[32] == [f"echo:{p}" for p in prompts]


def test_every_worker_keeps_its_connection_alive(server, cache):
    """Above the openai client's default of 100 kept-alive connections, a second batch
    would open new connections; the pool is sized to the concurrency instead."""
    c = 120
    model = make(server, cache, concurrency=c)
    for batch in range(2):
        server.gate(c)  # every worker holds a connection at once
        answers = model.chat([f"batch {batch} prompt {i}" for i in range(c)])
        assert all(a.ok for a in answers)
        assert server.max_in_flight == c
    assert server.count() == 2 * c
    assert server.connections == c  # the second batch reused the first one's connections
