"""The lab profiles' budgets (``analysis.lab.budget``) against hand counts, and the
GPU profile's design targets, checked from its configuration (nothing is trained)."""

import math
import os

import pytest

from analysis.lab import budget, ladder, profiles
from analysis.lab.config import WINDOWS, ModelConfig, RunConfig
from analysis.lab.train import param_count


def test_flops_per_token_by_hand():
    run = RunConfig("r", ModelConfig(n_layer=2, d_model=32, n_head=1, d_ff=128, context=128), tokens=4096)
    # N = 1024*32 + 2*(4*32*32 + 3*32*128 + 2*32) + 32 = 65,696; attention 12*2*128*32 = 98,304
    assert param_count(run.model, 1024) == 65_696
    assert budget.flops_per_token(run, 1024) == 6 * 65_696 + 98_304


def test_smoke_budget_counts_shared_and_forked_runs():
    prof = profiles.get_profile("smoke")
    table = budget.run_budget("smoke", tflops=1.0).set_index("run")
    assert list(table.index) == [r.name for r in prof.runs]
    # std-s1x is the ladder's wide-16 (same weights): trained once, by wide-16
    assert table.at["std-s1x", "tokens_trained"] == 0
    assert table.at["wide-16", "tokens_trained"] == table.at["wide-16", "tokens"]
    # range-q3 forks from its twin at ceil(0.5 * 58) = 29 of its 58 steps of 16 x 128 tokens
    q3 = prof.run("range-q3")
    assert q3.steps == 58 and WINDOWS["q3"][0] == 0.5
    assert table.at["range-q3", "tokens_trained"] == (58 - 29) * 16 * 128
    assert table.at["range-q1", "tokens_trained"] == 58 * 16 * 128
    row = table.loc["wide-32"]
    per_token = budget.flops_per_token(prof.run("wide-32"), prof.vocab_size)
    assert row["flops"] == row["tokens_trained"] * per_token
    assert row["hours"] == pytest.approx(row["flops"] / 1e12 / 3600)
    with pytest.raises(ValueError, match="tflops must be a positive number"):
        budget.run_budget("smoke", tflops=0)


def test_gpu_profile_meets_its_design_from_the_configuration():
    prof = profiles.get_profile("gpu")
    table = budget.run_budget("gpu")
    ladder_runs = table[table["family"].str.startswith("ladder")]
    span = ladder_runs["params"].max() / ladder_runs["params"].min()
    # at least 30x, up to the low hundreds of millions
    assert span >= 30 and 1e8 <= table["params"].max() < 3e8
    assert table["tokens_trained"].sum() >= 1e9
    assert prof.corpus.duplicate_levels == (0, 1, 4, 16, 64, 256)  # Hubble's copy levels
    assert 8 <= table["hours"].sum() <= 16  # about 12 hours at the assumed throughput
    # both families see the same tokens in the same order; each family's sizes grow
    for fam in ("ladder-wide", "ladder-deep"):
        runs = [r for r in prof.runs if r.family == fam]
        assert len({(r.tokens, r.batch_size, r.seed) for r in runs}) == 1
        sizes = [param_count(r.model, prof.vocab_size) for r in runs]
        assert sizes == sorted(sizes)
    # every injection window holds its run's copies (one copy per row)
    n_tasks = len(prof.corpus.injection_tasks)
    copies = sum(level * count * n_tasks for level, count in prof.corpus.level_sizes())
    for run in prof.runs:
        if run.inject:
            lo, hi = WINDOWS[run.window or "all"]
            assert copies <= (math.ceil(hi * run.steps) - math.ceil(lo * run.steps)) * run.batch_size


def test_epochs_count_the_tokens_per_word_of_the_profiles_vocabulary(monkeypatch):
    # measured on Lab v4's corpora: 1.244 tokens a word under the gpu lab's 32,768-entry tokenizer,
    # 473,311 from 330,686 words under the default lab's 4,096 entries
    assert budget.tokens_per_word(32_768) == 1.24 and budget.tokens_per_word(4_096) == 1.43
    assert budget.tokens_per_word(8_192) == 1.43 and budget.tokens_per_word(1_024) == 1.43
    assert budget.tokens_per_word(65_536) == 1.24
    monkeypatch.setattr(budget, "corpus_words", lambda profile: 5_137_222)
    # 200M tokens in steps of 64 rows of 512 tokens: 6,103 steps, 199,983,104 tokens
    assert budget.summary("gpu")["ladder_epochs"] == pytest.approx(199_983_104 / (5_137_222 * 1.24))
    assert round(budget.summary("gpu")["ladder_epochs"]) == 31  # 27 at the default lab's 1.43


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MEMBOOK_DATA_MIRROR"), reason="MEMBOOK_DATA_MIRROR is unset")
def test_gpu_corpus_builds_and_its_tokens_per_word_are_the_measured_ones():
    from analysis.lab.tokenizer import get_tokenizer
    from analysis.lab.train import tokenize_stream

    prof = profiles.get_profile("gpu")
    words = budget.corpus_words("gpu")
    s = budget.summary("gpu")
    assert prof.run("wide-64").steps == 6_103
    per_word = budget.tokens_per_word(prof.vocab_size)
    assert s["ladder_epochs"] == pytest.approx(199_983_104 / (words * per_word))
    assert words > 4_000_000  # the background's 2M words and the excerpts' copies
    corpus = ladder.profile_corpus("gpu")
    texts = corpus.training_texts()
    tokens = len(tokenize_stream(texts, get_tokenizer(texts, corpus.fingerprint(), prof.vocab_size)))
    assert tokens / words == pytest.approx(budget.TOKENS_PER_WORD[prof.vocab_size], abs=0.005)
