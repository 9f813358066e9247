"""scripts/bench_models.py's roofline helpers: the FLOP count of a decoder step, the
rows a batch keeps running after they stopped, and the static-cache loop it times
against ``generate``, checked on a tiny random Llama (the reused prefix cache is the
model layer's: tests/test_prefix_cache.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_models as bm  # noqa: E402

# L=2 layers, d=4, h=2 query heads and k=1 key-value head of size 2, f=8, V=10
TINY = dict(hidden_size=4, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
            num_key_value_heads=1, head_dim=2, vocab_size=10)


def test_flop_per_token_by_hand():
    # per layer: q 4*2*2=16, k and v 4*1*2=8 each, o 2*2*4=16, MLP 3*4*8=96 -> 144;
    # 2 layers 288, head 4*10=40 -> 328 parameters, 656 FLOP; attention 4*h*dh*(L*c) = 4*2*2*10 = 160
    assert bm.flop_per_token(SimpleNamespace(**TINY), 5) == 816.0
    assert bm.flop_per_token(SimpleNamespace(**TINY), 0) == 656.0


def test_flop_per_token_sliding_window_caps_the_context():
    cfg = SimpleNamespace(**TINY, layer_types=["sliding_attention", "full_attention"], sliding_window=3)
    assert bm.flop_per_token(cfg, 5) == 656.0 + 4 * 2 * 2 * (3 + 5)
    assert bm.flop_per_token(cfg, 2) == 656.0 + 4 * 2 * 2 * (2 + 2)


def test_flop_per_token_counts_every_linear_weight_of_a_real_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(**TINY, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    weights = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    assert bm.flop_per_token(config, 0) == 2 * weights


def test_prefill_and_answer_flop_by_hand():
    cfg = SimpleNamespace(**TINY)
    # body 656 - 80 = 576 a position, attention 32c at c = 1, 2, 3, the head once (80)
    assert bm.prefill_flop(cfg, 3) == 3 * 576 + 32 * (1 + 2 + 3) + 80
    # the first new token comes out of the prefill, the second is a step at context 4
    assert bm.answer_flop(cfg, 3, 2) == bm.prefill_flop(cfg, 3) + 656 + 32 * 4
    assert bm.answer_flop(cfg, 3, 1) == bm.prefill_flop(cfg, 3)


def test_wasted_row_steps_by_hand():
    # sorted by length: batch (1, 3) runs 4 steps, row 3 used 2 (its token and the end
    # of text); batch (2, 0) runs 4, row 0 used 3
    assert bm.wasted_row_steps([5, 1, 3, 2], [2, 4, 4, 1], [True, False, False, True], 4, 2) == (3, 16)
    # a batch whose rows all stopped runs until its last row's end of text
    assert bm.wasted_row_steps([1, 2], [1, 2], [True, True], 8, 2) == (1, 6)
    assert bm.wasted_row_steps([1, 2], [8, 8], [False, False], 8, 1) == (0, 16)


PROMPTS = [[5, 6, 7, 8, 9, 10], [5, 6, 7, 11], [5, 6, 7, 12, 13, 14, 15, 16], [5, 6, 7, 17, 18]]


def _generate(hf, ids, att, budget, **kw):
    with torch.inference_mode():
        return hf.generate(input_ids=ids, attention_mask=att, max_new_tokens=budget, do_sample=False,
                           pad_token_id=0, eos_token_id=[], temperature=None, top_p=None, top_k=None,
                           **kw)[:, ids.shape[1]:]


def test_static_loop_equals_generate(tiny_llama):
    (_, ids, att), = bm.left_padded(PROMPTS, 8, pad=0)
    expected = _generate(tiny_llama, ids, att, 6)
    assert torch.equal(bm.static_loop(tiny_llama, ids, att, 6, eos=[], pad=0), expected)


def test_static_loop_stops_rows_at_end_of_text(tiny_llama):
    (_, ids, att), = bm.left_padded(PROMPTS, 8, pad=0)
    free = bm.static_loop(tiny_llama, ids, att, 6, eos=[], pad=0)
    eos = int(free[0, 2])  # the first row's third token ends it: the row is padding after it
    got = bm.static_loop(tiny_llama, ids, att, 6, eos=[eos], pad=0)
    assert got[0].tolist()[:3] == free[0].tolist()[:3]
    assert got[0].tolist()[3:] == [0] * (got.shape[1] - 3)


def test_built_in_models_take_the_batch_size_the_roofline_chose(tmp_path):
    """Gemma 3 generates in batches of 32 (``bench_models.py --roofline``: 1.26-1.48x
    on the phrases chapter's prompts, answers identical); SmolLM2 keeps 16; an
    explicit batch size wins."""
    from analysis.core.cache import QueryCache
    from analysis.models.local import LocalModel

    with QueryCache(tmp_path / "q.sqlite") as cache:
        assert LocalModel.from_name("gemma3-270m", cache=cache).batch_size == 32
        assert LocalModel.from_name("smollm2-135m-instruct", cache=cache).batch_size == 16
        assert LocalModel.from_name("gemma3-270m", cache=cache, batch_size=8).batch_size == 8
