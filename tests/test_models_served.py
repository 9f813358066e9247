"""Token-level access to a served model (analysis.models.served), against the fake
server speaking vLLM's and llama-cpp-python's response shapes (tests/served_toys.py).

Every score is compared with the toy model's own, computed by hand from its bigram
distribution; the refusals name what is missing and what provides it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from analysis.models import ModelError
from analysis.models.api import OpenAIChatModel, reset_endpoints
from analysis.models.served import align, prompt_entries, topk_moments
from fakeserver import FakeOpenAIServer, Fault
from served_toys import BOS, VOCAB, ToyServed

KEY = "sk-membook-served-41d0"
FAST = {"timeout": 2.0, "base_delay": 0.01, "max_delay": 0.05, "max_retries": 2}
TEXTS = ["the cat sat", "memorization", "a b"]


pytestmark = pytest.mark.usefixtures("module_key")


def served(toy: ToyServed):
    return FakeOpenAIServer(api_key=KEY, served=toy)


def make(server, cache, **kw) -> OpenAIChatModel:
    return OpenAIChatModel("toy", base_url=server.base_url, cache=cache, **{**FAST, **kw})


@pytest.mark.parametrize("dialect,bos", [("vllm", False), ("vllm", True), ("llamacpp", True)])
def test_probe_learns_what_the_server_can_do(cache, dialect, bos):
    toy = ToyServed(dialect, bos=bos)
    with served(toy) as server:
        caps = make(server, cache).capabilities()
    assert caps.tokenize == ("/tokenize" if dialect == "vllm" else "/extras/tokenize")
    assert caps.prefix == ((BOS,) if bos else ())
    assert caps.token_ids is (dialect == "vllm")
    assert caps.prompt_scores == ("prompt_logprobs" if dialect == "vllm" else "echo")
    # 20 asked for; the prompt token's own entry joins the top 20 when it is not among them
    assert caps.top_k >= 20 and caps.tokenizer


@pytest.mark.parametrize("dialect,bos", [("vllm", False), ("vllm", True), ("llamacpp", True)])
def test_scores_equal_the_models_own(cache, dialect, bos):
    toy = ToyServed(dialect, bos=bos)
    with served(toy) as server:
        model = make(server, cache)
        ids = model.tokenize(TEXTS)
        assert ids == [toy.encode(t, special=False) for t in TEXTS]
        assert model.detokenize(ids) == TEXTS
        assert model.id_prefix() == ([BOS] if bos else [])
        scores = model.score_ids(ids)
        calls = server.count()
        # what the model reads: its prefix, then the ids; scored are tokens 1..n-1 of the ids
        for got, seq in zip(scores, ids):
            want = toy.scores(([BOS] if bos else []) + seq)[-(len(seq) - 1):]
            np.testing.assert_allclose(got["logprobs"], want, rtol=0, atol=1e-9)
            best = [int(np.argmax(toy.logprobs_after(a))) == b for a, b in zip(seq, seq[1:])]
            assert got["argmax"].tolist() == best
        # a second call is answered from the cache
        again = make(server, cache).score_ids(ids)
        assert server.count() == calls
        assert all(np.array_equal(a["logprobs"], b["logprobs"]) for a, b in zip(again, scores))


def test_moments_from_the_top_k_are_marked_and_close(cache):
    toy = ToyServed("vllm")
    with served(toy) as server:
        model = make(server, cache)
        [seq] = model.tokenize(["memorization"])
        [got] = model.score_ids_stats([seq])
        model.vocab_size = VOCAB  # the tail's mass spread over the rest of the vocabulary
        [spread] = model.score_ids_stats([seq])
    exact = np.asarray(toy.moments(seq))
    # the toy's distribution is a wide bump: the top 20 hold most but not all of the mass.
    # Left out, the tail's negative terms are missing and mu is too high; spread evenly
    # over the other tokens, the error shrinks
    left_out, evened = got["mu"] - exact[:, 0], spread["mu"] - exact[:, 0]
    assert (left_out > 0.5).all()
    assert np.abs(evened).max() < np.abs(left_out).min()
    np.testing.assert_array_equal(got["logprobs"], spread["logprobs"])
    # the stored answer says how its moments were computed
    model.vocab_size = None
    stored = cache.get_many({model._key("score_ids_stats", {"ids": seq})})
    [row] = stored.values()
    assert row.meta["moments"] == "top-k" and row.meta["top_k"] >= 20


def test_topk_moments_by_hand():
    # the whole vocabulary: exact
    p = np.array([0.5, 0.25, 0.25])
    lp = np.log(p)
    mu = float((p * lp).sum())
    sigma = float(np.sqrt((p * (lp - mu) ** 2).sum()))
    assert topk_moments(lp) == pytest.approx((mu, sigma))
    # the top two of four tokens (0.5, 0.3) and a tail of 0.2 over the other two at 0.1 each
    full = np.log(np.array([0.5, 0.3, 0.1, 0.1]))
    pf = np.exp(full)
    mu_f = float((pf * full).sum())
    sigma_f = float(np.sqrt((pf * (full - mu_f) ** 2).sum()))
    assert topk_moments(full[:2], vocab_size=4) == pytest.approx((mu_f, sigma_f))
    # without the vocabulary's size the tail is left out
    part = np.exp(full[:2])
    assert topk_moments(full[:2])[0] == pytest.approx(float((part * full[:2]).sum()))


def test_align_reads_llamacpp_echo_without_its_bos():
    # llama.cpp echoes [a, b, c] + one generated token for the sequence [BOS, a, b, c]
    entries = [None, {"logprob": -1.0}, {"logprob": -2.0}, {"logprob": -9.0}]
    got = align(entries, [BOS, 10, 11, 12], [BOS], "echo")
    assert got == [None, {"logprob": -1.0}, {"logprob": -2.0}]
    with pytest.raises(ValueError, match="scored 2 prompt tokens for a sequence of 4"):
        align(entries[:3], [BOS, 10, 11, 12], [BOS], "echo")
    # without a leading BOS, an echo one entry short is llama-cpp-python's shifted echo
    with pytest.raises(ValueError, match="scored 3 prompt tokens for a sequence of 4: llama-cpp"):
        align(entries, [10, 11, 12, 13], [], "echo")
    # prompt_logprobs: one entry per prompt token, the first None
    assert align([None, {"logprob": -1.0}], [5, 6], [], "prompt_logprobs") == [{"logprob": -1.0}]


def test_prompt_entries_read_vllm_ranks_by_token_id():
    payload = {"choices": [{"prompt_logprobs": [None, {"7": {"logprob": -0.5, "rank": 2},
                                                        "9": {"logprob": -0.3, "rank": 1}}]}]}
    dialect, [first, second] = prompt_entries(payload, [4, 7])
    assert dialect == "prompt_logprobs" and first is None
    assert second == {"logprob": -0.5, "argmax": False, "top": [-0.5, -0.3]}
    with pytest.raises(ValueError, match="no entry for token 8"):
        prompt_entries(payload, [4, 8])


def test_a_server_without_scores_is_refused_naming_the_option(cache, monkeypatch):
    toy = ToyServed("llamacpp", bos=True)
    # llama_cpp.server without --logits_all: the completion comes back, but no logprobs
    original = toy._completion

    def no_logprobs(body):
        status, payload = original({**body, "logprobs": None})
        return status, payload

    monkeypatch.setattr(toy, "_completion", no_logprobs)
    with served(toy) as server:
        model = make(server, cache)
        with pytest.raises(ModelError, match="prompt_scores.*--logits_all true"):
            model.require("prompt_scores", "tokenize")
        # the token-level call fails the same way, before sending any score request
        before = server.count()
        with pytest.raises(ModelError, match="lacks what this chapter needs"):
            model.score_ids([[10, 11, 12]])
        assert server.count() == before


def test_llamacpp_echo_without_a_bos_is_refused_but_generation_works(cache):
    # llama-cpp-python reads each echoed token's score from the next position when the
    # model adds no beginning-of-sequence token (SmolLM2): the probe sees the echo one
    # entry short and refuses prompt scores before any sequence is sent
    toy = ToyServed("llamacpp", bos=False)
    with served(toy) as server:
        model = make(server, cache)
        caps = model.capabilities()
        assert caps.tokenize == "/extras/tokenize" and caps.prefix == ()
        assert caps.prompt_scores is None
        assert "scored" in caps.why["prompt_scores"] and "next position" in caps.why["prompt_scores"]
        before = server.count()
        with pytest.raises(ModelError, match="prompt_scores.*assumes a leading beginning-of-sequence"):
            model.score_ids(model.tokenize(["the cat sat"]))
        # tokenize was called, no completions request was sent
        assert not any(r.body.get("path") == "/v1/completions" for r in server.requests[before:])


def test_a_chat_only_endpoint_has_no_tokenizer(server, cache):
    # the plain fake server: chat completions only, no tokenize route, no completions
    model = make(server, cache)
    caps = model.capabilities()
    assert caps.tokenize is None and caps.prompt_scores is None
    with pytest.raises(ModelError, match="tokenize: the model's own tokenizer.*/extras/tokenize"):
        model.tokenize(["hello"])


def test_llamacpp_text_that_retokenizes_differently_is_never_scored(cache):
    toy = ToyServed("llamacpp", bos=True)
    with served(toy) as server:
        model = make(server, cache)
        good = toy.encode("abc", special=False)
        # byte 0xff alone is not UTF-8: its text comes back as the replacement character's bytes
        bad = [0xFF + 3, 100]
        with pytest.raises(ModelError, match="1 of 2 score requests failed.*tokenizes this sequence"):
            model.score_ids([good, bad])
        # the good one was scored and kept; the failed one was not stored
        sent = server.count()
        [again] = model.score_ids([good])
        assert server.count() == sent
        np.testing.assert_allclose(again["logprobs"], toy.scores([BOS] + good)[1:], atol=1e-9)


def test_a_server_error_is_an_error_and_the_next_run_resumes(cache):
    toy = ToyServed("vllm")
    with served(toy) as server:
        model = make(server, cache)
        ids = model.tokenize(TEXTS)
        n = server.count()
        # every later request fails with 400 (not retried): the first score call measures nothing
        for call in range(n + 1, n + 10):
            server.on_call(call, Fault.error(400))
        with pytest.raises(ModelError, match="3 of 3 score requests failed"):
            model.score_ids(ids)
        server.clear()
        scores = make(server, cache).score_ids(ids)
        assert len(scores) == 3 and all(np.isfinite(s["logprobs"]).all() for s in scores)


def test_the_tokenizer_is_part_of_the_cache_key(tmp_path):
    # one server and model name whose tokenizer changes (it starts putting BOS first): the
    # probe of each cache finds its own tokenizer, and no score key is shared
    from analysis.core.cache import QueryCache
    with served(ToyServed("vllm", bos=False)) as server:
        a = make(server, QueryCache(tmp_path / "a.sqlite"))
        a.capabilities()
        server.served = ToyServed("vllm", bos=True)
        b = make(server, QueryCache(tmp_path / "b.sqlite"))
        assert a.capabilities().tokenizer != b.capabilities().tokenizer
        assert a._key("score_ids", {"ids": [4, 5]}) != b._key("score_ids", {"ids": [4, 5]})
        assert a._key("chat", {"x": 1}) == b._key("chat", {"x": 1})  # chat answers do not depend on it


@pytest.mark.parametrize("dialect,bos", [("vllm", False), ("llamacpp", True), ("llamacpp", False)])
def test_generate_ids_continue_for_exactly_n_tokens(cache, dialect, bos):
    from analysis.models import GenerationSettings
    toy = ToyServed(dialect, bos=bos)
    with served(toy) as server:
        model = make(server, cache)
        # prompts whose greedy continuations stay ASCII: llama.cpp names tokens by text
        prompts = model.tokenize(["3", "ru"])
        answers = model.generate_ids(prompts, GenerationSettings(max_new_tokens=5))
    for prompt, answer in zip(prompts, answers):
        seq = ([BOS] if bos else []) + prompt
        for _ in range(5):
            seq.append(int(np.argmax(toy.logprobs_after(seq[-1]))))
        assert answer.meta["ids"] == seq[-5:] and answer.text == toy.decode(seq[-5:])
    if dialect == "vllm":
        body = next(r.body for r in server.requests if r.body.get("path") == "/v1/completions"
                    and r.body.get("max_tokens") == 5)
        # told to go past an end-of-text token and to name the new tokens by id
        assert body["ignore_eos"] and body["min_tokens"] == 5 and body["return_tokens_as_token_ids"]


def test_llamacpp_continuation_split_inside_a_character_is_an_error(cache):
    from analysis.models import GenerationSettings
    with served(ToyServed("llamacpp", bos=True)) as server:
        model = make(server, cache)
        # "the cat" continues into bytes above 127: their text cannot give back the ids
        # an error answer, as every failed generation is (the entropy chapter scores none)
        [answer] = model.generate_ids(model.tokenize(["the cat"]), GenerationSettings(max_new_tokens=5))
        assert not answer.ok and "tokenizes to 9 ids, not the 5 generated" in answer.error


def test_a_server_that_dies_mid_run_measures_nothing_and_the_next_run_resumes(cache):
    from fakeserver import Fault
    toy = ToyServed("vllm")
    texts = [f"seq {i}" for i in range(6)]
    with served(toy) as server:
        model = make(server, cache, concurrency=1)
        ids = model.tokenize(texts)
        model.capabilities()
        n = server.count()
        server.on_call(n + 3, Fault.die())  # the server dies on the third score request
        with pytest.raises(ModelError, match="4 of 6 score requests failed"):
            model.score_ids(ids)
        # the two answered before the death are cached; the four that failed are never scored.
        # The server comes back; this process forgets that the endpoint was unreachable
        server.revive()
        server.clear()
        reset_endpoints()
        before = server.count()
        again = make(server, cache, concurrency=1).score_ids(ids)
        assert server.count() - before == 4
        for got, seq in zip(again, ids):
            np.testing.assert_allclose(got["logprobs"], toy.scores(seq)[-(len(seq) - 1):], rtol=0, atol=1e-9)


SCORER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from analysis.core.cache import QueryCache
    from analysis.models import load_model

    start = Path(sys.argv[2])
    while not start.exists():
        time.sleep(0.005)
    model = load_model("api:toy", cache=QueryCache(sys.argv[1]), concurrency=2, base_delay=0.01,
                       max_delay=0.05, timeout=5)
    scores = model.score_ids(json.loads(sys.argv[3]))
    print(json.dumps({"calls": model.calls, "logprobs": [[float(x) for x in s["logprobs"]] for s in scores]}))
    """
)


def test_two_runs_sharing_a_cache_score_each_sequence_once(tmp_path):
    # two processes (two chapter kernels) on one query cache: each sequence is sent once
    from analysis.core.cache import QueryCache
    from test_cache_safety import python_path
    toy = ToyServed("vllm")
    path, start = tmp_path / "shared.sqlite", tmp_path / "start"
    with FakeOpenAIServer(api_key=KEY, served=toy, delay=0.02) as server:
        first = make(server, QueryCache(path))
        ids = first.tokenize([f"shared {i:02d}" for i in range(24)])
        first.capabilities()  # the probe, before the race (kept in the cache)
        first.cache.close()
        before = server.count()
        env = {**os.environ, "MEMBOOK_API_BASE_URL": server.base_url, "PYTHONPATH": python_path()}
        argv = [sys.executable, "-c", SCORER, str(path), str(start), json.dumps(ids)]
        procs = [subprocess.Popen(argv, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]
        time.sleep(2.0)  # both processes started and waiting
        start.touch()
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
        sent = server.requests[before:]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    # 24 score requests, not 48: the second process waited for the first one's answers
    assert len(sent) == 24 and all(r.body.get("path") == "/v1/completions" for r in sent)
    assert sum(r["calls"] for r in results) == 24
    assert results[0]["logprobs"] == results[1]["logprobs"]
    for got, seq in zip(results[0]["logprobs"], ids):
        np.testing.assert_allclose(got, toy.scores(seq)[-(len(seq) - 1):], rtol=0, atol=1e-9)


def test_text_pieces_cut_after_line_breaks_and_join_back():
    from analysis.models.served import text_pieces

    text = "ab\ncd\nefgh\nij"
    assert text_pieces(text, 6) == ["ab\ncd\n", "efgh\n", "ij"]
    assert text_pieces("abcdefg", 3) == ["abc", "def", "g"]  # no line break: cut at the limit
    assert text_pieces("short", 100) == ["short"]
    assert "".join(text_pieces(text * 50, 7)) == text * 50
    with pytest.raises(ValueError, match="limit"):
        text_pieces(text, 0)


@pytest.mark.parametrize("dialect", ["vllm", "llamacpp"])
def test_a_long_text_is_tokenized_in_pieces_and_joined(cache, dialect, monkeypatch):
    from analysis.models import served as served_module

    monkeypatch.setattr(served_module, "TOKENIZE_CHARS", 8)
    toy = ToyServed(dialect, bos=dialect == "llamacpp")
    text = "the cat\nsat on\nthe mat\nand the dog\n"
    with served(toy) as server:
        model = make(server, cache)
        model.capabilities()
        before = server.count()
        [ids] = model.tokenize([text])
        sent = server.count() - before
    assert ids == toy.encode(text, special=False)  # byte-level: the pieces join exactly
    assert sent == len(served_module.text_pieces(text, 8)) == 5  # one request a piece
