"""The local transformers backend on the two real embedded models.

These load real weights (the first run converts each GGUF once, about a minute),
so they carry the ``slow`` mark; CI runs them.
"""

import numpy as np
import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.models import GenerationSettings, ModelError, load_model
from analysis.models.generation import _eos_ids
from analysis.models.local import LocalModel

pytestmark = pytest.mark.slow

PROMPTS = [
    "The capital of France is",
    "To be, or not to be, that is the",
    "续写句子：我们再仔细推究这敬仰之情的根源",
]


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    model = load_model("smollm2-135m-instruct", cache=QueryCache(tmp_path_factory.mktemp("q") / "q.sqlite"))
    model.model  # load once for the module
    return model


def test_unknown_model_fails_before_loading():
    with pytest.raises(ModelError, match="unknown model"):
        load_model("not-a-model")


def test_builtin_chat_model_is_chat_and_wraps_prompt_in_template(smol):
    assert smol.is_chat
    ids = smol._encode(smol_request(smol, "hi"))
    assert smol.tokenizer.decode(ids).endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def smol_request(model, text):
    from analysis.models.base import Request

    return Request([{"role": "user", "content": text}], True, GenerationSettings())


def _reference_greedy(model, prompt, chat, n):
    """Greedy decoding by hand: argmax of the full forward pass, one token at a time."""
    from analysis.models.base import Request

    ids = model._encode(
        Request([{"role": "user", "content": prompt}] if chat else prompt, chat, GenerationSettings())
    )
    out = []
    with torch.inference_mode():
        for _ in range(n):
            logits = model.model(torch.tensor([ids + out])).logits[0, -1]
            out.append(int(logits.argmax()))
    return out


def test_batched_greedy_matches_token_by_token_argmax(smol):
    n = 8
    answers = smol.generate(PROMPTS, GenerationSettings(max_new_tokens=n), chat=False)
    for prompt, answer in zip(PROMPTS, answers):
        ref = _reference_greedy(smol, prompt, chat=False, n=n)
        assert answer.text == smol.tokenizer.decode(ref, skip_special_tokens=True)
        assert answer.meta["new_tokens"] == n


def test_logprobs_equal_a_direct_forward_pass(smol):
    ctx, cont = "The capital of France is", " Paris, the city of light"
    lp = smol.logprobs([ctx], [cont])[0]
    tok = smol.tokenizer
    c_ids = tok(ctx)["input_ids"]
    s_ids = tok(cont, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = smol.model(torch.tensor([c_ids + s_ids])).logits[0]
    ref = torch.log_softmax(logits, -1)[torch.arange(len(c_ids) - 1, len(c_ids) + len(s_ids) - 1), s_ids]
    assert lp.shape == (len(s_ids),)
    np.testing.assert_allclose(lp, ref.numpy(), atol=1e-4)
    assert np.all(lp <= 0)


def test_logprobs_keep_the_end_of_a_context_longer_than_the_positions(smol):
    ctx, cont = "One two three four five six seven eight nine ten eleven twelve", " thirteen fourteen"
    tok = smol.tokenizer
    s_ids = tok(cont, add_special_tokens=False)["input_ids"]
    c_ids = tok(ctx)["input_ids"]
    limit = len(s_ids) + 4
    config = smol.model.config
    saved = config.max_position_embeddings
    config.max_position_embeddings = limit
    try:
        lp = smol.logprobs([ctx], [cont])[0]
    finally:
        config.max_position_embeddings = saved
    kept = c_ids[-4:]  # the last 4 context tokens and the continuation fill the limit
    with torch.inference_mode():
        logits = smol.model(torch.tensor([kept + s_ids])).logits[0]
    ref = torch.log_softmax(logits, -1)[torch.arange(3, 3 + len(s_ids)), s_ids]
    np.testing.assert_allclose(lp, ref.numpy(), atol=1e-4)


def test_next_token_is_the_argmax(smol):
    tok = smol.tokenizer
    with torch.inference_mode():
        logits = smol.model(torch.tensor([tok("The capital of France is")["input_ids"]])).logits[0, -1]
    assert smol.next_token(["The capital of France is"])[0] == tok.decode([int(logits.argmax())])


def test_warm_rerun_makes_no_call_and_loads_no_weights(smol, tmp_path):
    cache = QueryCache(tmp_path / "q.sqlite")
    first = LocalModel.from_name("smollm2-135m-instruct", cache=cache)
    first._tok, first._model = smol.tokenizer, smol.model  # reuse loaded weights
    cold = first.generate(PROMPTS, GenerationSettings(max_new_tokens=6))
    assert first.calls == len(PROMPTS)
    again = LocalModel.from_name("smollm2-135m-instruct", cache=cache)
    warm = again.generate(PROMPTS, GenerationSettings(max_new_tokens=6))
    assert again.calls == 0 and again._model is None
    assert [a.text for a in warm] == [a.text for a in cold] and all(a.cached for a in warm)


def test_sampling_is_seeded(smol):
    s = GenerationSettings(max_new_tokens=12, temperature=1.0, top_k=50, top_p=0.95, seed=7)
    from analysis.models.base import Request

    requests = [Request(p, False, s) for p in PROMPTS[:2]]
    a, b = dict(smol._generate(requests)), dict(smol._generate(requests))
    assert [a[i].text for i in range(2)] == [b[i].text for i in range(2)]
    other = dict(
        smol._generate(
            [Request(p, False, GenerationSettings(**{**s.as_dict(), "seed": 8})) for p in PROMPTS[:2]]
        )
    )
    assert [a[i].text for i in range(2)] != [other[i].text for i in range(2)]


def test_gemma_base_model_converts_loads_and_continues(tmp_path):
    gemma = load_model("gemma3-270m", cache=QueryCache(tmp_path / "q.sqlite"))
    assert not gemma.is_chat
    answer = gemma.generate(["The capital of France is"], GenerationSettings(max_new_tokens=6))[0]
    assert answer.ok and answer.meta["new_tokens"] == 6 and answer.text.strip()
    # a 270M base model ranks " Paris" third here (after " the" and " a"), at p ≈ 0.08
    lp = gemma.logprobs(["The capital of France is"], [" Paris"])[0]
    assert lp.shape == (1,) and lp[0] > np.log(0.05)


def test_conversion_keeps_the_gguf_models_logits(smol):
    from transformers import AutoModelForCausalLM

    from analysis.models.checkpoints import _gguf_file

    gguf = _gguf_file("smollm2-135m-instruct")
    direct = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    ids = torch.tensor([smol.tokenizer("Four score and seven years ago")["input_ids"]])
    with torch.inference_mode():
        np.testing.assert_allclose(smol.model(ids).logits.numpy(), direct(ids).logits.numpy(), atol=1e-4)


def test_generate_ids_is_greedy_argmax_for_exactly_n_tokens_and_cached(smol):
    """Token-level generation: the prompt is used as given (no template, no special
    tokens added), the answer has exactly max_new_tokens ids (no end-of-text stop)
    and equals a token-by-token argmax; a second call is a cache hit."""
    prompts = smol.tokenize(["To be, or not to be, that is the", "Call me Ishmael. Some years ago"])
    plain = smol.tokenizer("To be, or not to be, that is the", add_special_tokens=False)["input_ids"]
    assert prompts[0] == plain
    settings = GenerationSettings(max_new_tokens=6)
    answers = smol.generate_ids(prompts, settings)
    for ids, answer in zip(prompts, answers):
        want = []
        with torch.inference_mode():
            for _ in range(6):
                logits = smol.model(torch.tensor([ids + want])).logits[0, -1]
                want.append(int(logits.argmax()))
        assert answer.meta["ids"] == want
        assert answer.text == smol.detokenize([want])[0]
    calls = smol.calls
    again = smol.generate_ids(prompts, settings)
    assert smol.calls == calls and all(a.cached for a in again)
    assert [a.meta["ids"] for a in again] == [a.meta["ids"] for a in answers]


def test_generate_ids_does_not_stop_at_end_of_text(smol):
    # after a user turn and a finished assistant turn, the model's argmax soon ends the text
    text = smol.tokenizer.apply_chat_template([{"role": "user", "content": "Say OK."}],
                                              add_generation_prompt=True, tokenize=False) + "OK."
    ids = smol.tokenizer(text, add_special_tokens=False)["input_ids"]
    stops = set(_eos_ids(smol.tokenizer, smol.model))
    want = []
    with torch.inference_mode():
        for _ in range(12):
            want.append(int(smol.model(torch.tensor([ids + want])).logits[0, -1].argmax()))
    assert stops & set(want[:-1])  # the reference passes an end-of-text token before the end
    answer = smol.generate_ids([ids], GenerationSettings(max_new_tokens=12))[0]
    assert answer.meta["ids"] == want  # and the answer goes on past it, as the reference does
    text_answer = smol.complete([text], GenerationSettings(max_new_tokens=12))[0]
    assert text_answer.meta["finish_reason"] == "stop"  # text generation still stops there


def test_score_ids_equals_a_direct_forward_pass_and_is_cached(smol):
    seqs = smol.tokenize(["To be, or not to be, that is the question", "Call me Ishmael."])
    scores = smol.score_ids(seqs)
    for ids, s in zip(seqs, scores):
        with torch.inference_mode():
            logits = smol.model(torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        want_lp = [float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1)]
        want_top = [int(logits[i].argmax()) == ids[i + 1] for i in range(len(ids) - 1)]
        assert np.allclose(s["logprobs"], want_lp, atol=1e-4)
        assert list(s["argmax"]) == want_top
    calls = smol.calls
    again = smol.score_ids(seqs)
    assert smol.calls == calls and list(again[0]["argmax"]) == list(scores[0]["argmax"])
    with pytest.raises(ModelError, match="at least two token ids"):
        smol.score_ids([[5]])
