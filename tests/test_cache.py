"""The query cache, the artifact cache, and the caching done by the Model base class."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from analysis.core.cache import QueryCache, artifact_path, cache_dir, stable_hash
from analysis.models.base import Answer, GenerationSettings, Model, ModelError, Request


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "membook-cache"))


def put(cache: QueryCache, key: str, text: str | None = "t", error: str | None = None, meta=None):
    cache.put(
        key,
        backend="b",
        model="m",
        kind="chat",
        request={"prompt": key},
        text=text,
        error=error,
        meta=meta,
    )


# -- QueryCache ----------------------------------------------------------------------


def test_put_get_round_trip(cache):
    put(cache, "k1", "hello", meta={"finish_reason": "stop", "usage": {"total_tokens": 3}})
    hit = cache.get("k1")
    assert hit.text == "hello" and hit.error is None
    assert hit.meta == {"finish_reason": "stop", "usage": {"total_tokens": 3}}
    assert cache.get("absent") is None


def test_put_replaces_and_survives_reopen(cache, tmp_path):
    put(cache, "k", "first")
    put(cache, "k", "second")
    assert cache.count() == 1
    cache.close()
    reopened = QueryCache(tmp_path / "queries.sqlite")
    assert reopened.get("k").text == "second"
    reopened.close()


def test_errors_are_stored_as_errors(cache):
    put(cache, "bad", text=None, error="RateLimitError: slow down")
    put(cache, "good", text="")
    bad, good = cache.get("bad"), cache.get("good")
    assert bad.text is None and bad.error == "RateLimitError: slow down"
    assert good.text == "" and good.error is None
    assert cache.count(errors=True) == 1 and cache.count(errors=False) == 1
    assert cache.count(model="m") == 2 and cache.count(model="other") == 0


def test_get_many_beyond_one_chunk(cache):
    keys = [f"key-{i}" for i in range(1234)]
    for k in keys:
        put(cache, k, text=k.upper())
    found = cache.get_many(keys + ["missing-1", "missing-2"])
    assert len(found) == 1234
    assert all(found[k].text == k.upper() for k in keys)


def test_key_independent_of_dict_order():
    a = QueryCache.key("b", "m", "chat", {"prompt": "p", "settings": {"x": 1, "y": 2}})
    b = QueryCache.key("b", "m", "chat", {"settings": {"y": 2, "x": 1}, "prompt": "p"})
    assert a == b and len(a) == 64
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})


def test_key_changes_with_every_input():
    base = Request("p", chat=False, settings=GenerationSettings())
    key = QueryCache.key("b", "m", "complete", base.as_dict())
    others = {
        QueryCache.key("b2", "m", "complete", base.as_dict()),
        QueryCache.key("b", "m2", "complete", base.as_dict()),
        QueryCache.key("b", "m", "chat", base.as_dict()),
        QueryCache.key("b", "m", "complete", dataclasses.replace(base, prompt="q").as_dict()),
        QueryCache.key("b", "m", "complete", dataclasses.replace(base, chat=True).as_dict()),
    }
    changed = {"max_new_tokens": 17, "temperature": 0.5, "top_k": 5, "top_p": 0.5, "seed": 1}
    assert set(changed) == {f.name for f in dataclasses.fields(GenerationSettings)}
    for name, value in changed.items():
        settings = dataclasses.replace(GenerationSettings(), **{name: value})
        others.add(
            QueryCache.key(
                "b", "m", "complete", dataclasses.replace(base, settings=settings).as_dict()
            )
        )
    assert key not in others and len(others) == 5 + len(changed)


# -- artifact cache ------------------------------------------------------------------


def test_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" and cache_dir().is_dir()
    assert QueryCache().path == tmp_path / "elsewhere" / "queries.sqlite"


def test_artifact_path_changes_with_every_input(tmp_path):
    key = {"model": "gemma", "quant": "q4", "revision": 1}
    path = artifact_path("checkpoints", key)
    assert path.parent == cache_dir() / "checkpoints"
    assert artifact_path("checkpoints", dict(reversed(list(key.items())))) == path
    variants = [
        artifact_path("other-kind", key),
        artifact_path("checkpoints", {**key, "model": "smollm"}),
        artifact_path("checkpoints", {**key, "quant": "q8"}),
        artifact_path("checkpoints", {**key, "revision": 2}),
        artifact_path("checkpoints", {**key, "extra": None}),
    ]
    assert path not in variants and len(set(variants)) == len(variants)


# -- the Model base class's caching --------------------------------------------------


class CountingModel(Model):
    """Answers ``"<prompt> next words"``; fails on prompts in ``failing``; records what it was sent."""

    backend = "counting"

    def __init__(self, *args, failing=(), texts=None, **kw):
        super().__init__(*args, **kw)
        self.failing = set(failing)
        self.texts = texts or {}
        self.sent: list = []
        self.logprob_calls: list = []

    def _generate(self, requests):
        # answer in reverse order, as a concurrent backend might
        for i in reversed(range(len(requests))):
            prompt = requests[i].prompt
            self.sent.append(prompt)
            key = prompt if isinstance(prompt, str) else prompt[-1]["content"]
            if key in self.failing:
                yield i, Answer(None, error="BoomError: backend down")
            else:
                yield (
                    i,
                    Answer(
                        self.texts.get(key, f"{key} next words"), meta={"finish_reason": "stop"}
                    ),
                )

    def _logprobs(self, contexts, continuations):
        for i, (c, s) in enumerate(zip(contexts, continuations)):
            self.logprob_calls.append((c, s))
            yield i, [-0.5 * (k + 1) for k in range(len(s.split()))]


def test_duplicates_in_a_batch_are_sent_once(cache):
    model = CountingModel("m", cache=cache)
    answers = model.complete(["a", "b", "a", "c", "b"])
    assert sorted(model.sent) == ["a", "b", "c"]
    assert model.calls == 3
    assert [a.text for a in answers] == [
        "a next words",
        "b next words",
        "a next words",
        "c next words",
        "b next words",
    ]


def test_cached_answers_are_reused(cache):
    CountingModel("m", cache=cache).complete(["a", "b"])
    again = CountingModel("m", cache=cache)
    answers = again.complete(["b", "a", "new"])
    assert again.sent == ["new"] and again.calls == 1
    assert [a.cached for a in answers] == [True, True, False]
    assert answers[0].text == "b next words" and answers[0].meta == {"finish_reason": "stop"}


def test_chat_and_complete_are_cached_apart(cache):
    model = CountingModel("m", cache=cache)
    model.complete(["a"])
    model.chat(["a"])
    assert model.sent == ["a", [{"role": "user", "content": "a"}]]
    with pytest.raises(ModelError):
        model.complete([[{"role": "user", "content": "a"}]])


def test_other_model_names_do_not_share_answers(cache):
    CountingModel("m", cache=cache).complete(["a"])
    other = CountingModel("m2", cache=cache)
    other.complete(["a"])
    assert other.calls == 1


def test_next_word(cache):
    model = CountingModel(
        "m",
        cache=cache,
        failing={"err"},
        texts={"lead": "  hello, world", "blank": "   \n ", "none": ""},
    )
    assert model.next_word(["lead", "blank", "none", "err"]) == ["hello,", "", "", None]
    assert sorted(model.sent) == ["blank", "err", "lead", "none"]  # raw completion, not chat


def test_errors_retried_only_when_asked(cache):
    failing = CountingModel("m", cache=cache, failing={"x"})
    [answer] = failing.complete(["x"])
    assert answer.error == "BoomError: backend down" and answer.text is None
    assert cache.count(errors=True) == 1

    frozen = CountingModel("m", cache=cache, retry_errors=False)
    [again] = frozen.complete(["x"])
    assert frozen.sent == [] and again.cached and again.error == answer.error

    retrying = CountingModel("m", cache=cache, retry_errors=True)
    [fixed] = retrying.complete(["x"])
    assert retrying.sent == ["x"] and fixed.text == "x next words"
    assert cache.count(errors=True) == 0


def test_logprobs_are_cached(cache):
    model = CountingModel("m", cache=cache)
    first = model.logprobs(["ctx", "ctx"], ["one two", "three"])
    assert len(model.logprob_calls) == 2
    np.testing.assert_allclose(first[0], [-0.5, -1.0])
    np.testing.assert_allclose(first[1], [-0.5])

    again = CountingModel("m", cache=cache)
    second = again.logprobs(["ctx", "ctx"], ["one two", "three"])
    assert again.logprob_calls == [] and again.calls == 0
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    row = cache.get(again._key("logprobs", {"context": "ctx", "continuation": "one two"}))
    assert json.loads(json.dumps(row.meta)) == {"logprobs": [-0.5, -1.0]}

    with pytest.raises(ModelError):
        model.logprobs(["a"], ["b", "c"])
