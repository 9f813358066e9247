"""The lab's tokenizer and training layer, on a tiny synthetic corpus.

Models are tiny (d_model 32, 2 layers, context 32) and runs a few dozen steps,
so the whole file runs in well under a minute on two cores. Every test points
the artifact cache at a temporary folder.
"""

import random

import numpy as np
import pandas as pd
import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.lab import train as lt
from analysis.lab.config import LabConfigError, ModelConfig, RunConfig
from analysis.lab.tokenizer import get_tokenizer, load_tokenizer, save_tokenizer, train_tokenizer
from analysis.lab.train import loop

WORDS = (
    "the a of to and in is it that was he for on are as with his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about how up out them "
    "then she many some so these would other into has more her two like him see time could no make than"
).split()
OTHER_WORDS = "quartz fjord sphinx glyph crwth nymph xylem zephyr jukebox vex bumpkin".split()
MODEL = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=32)
BATCH = 8
STEPS = 24
CORPUS_KEY = "tiny-corpus-v1"


def _texts(words, n_docs, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(40, 120))) + "." for _ in range(n_docs)]


TEXTS = _texts(WORDS, 60, 0)
INJECTIONS = [
    {"seq_id": "never", "task": "random_words", "text": "Zq7 vexed Kj4 wombat 99", "copies": 0},
    {"seq_id": "once", "task": "passage", "text": "Quixotic Pf8 lumbers 31 Xw", "copies": 1, "window": "all"},
    {"seq_id": "q2x5", "task": "qa", "text": "Q: Vt6 glimmer? A: 4417 Zz", "copies": 5, "window": "q2"},
    {"seq_id": "many", "task": "gsm8k", "text": "Mx3 + Rb2 = 7781 Wq", "copies": 12, "window": "all"},
    {"seq_id": "late3", "task": "biography", "text": "Ovid Hq9 born 1688 Jk", "copies": 3, "window": "late"},
]


def _run(inject=True, model=MODEL, **kw):
    kw = {"tokens": STEPS * BATCH * model.context, "lr": 3e-3, **kw}
    return RunConfig("tiny", model, batch_size=BATCH, inject=inject, **kw)


@pytest.fixture(scope="module")
def tok():
    return train_tokenizer(TEXTS, vocab_size=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tok):
    """One injected run and its standard counterpart (same seed), trained once for the module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMBOOK_CACHE", str(tmp_path_factory.mktemp("cache")))
        injected = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
        standard = lt.train(_run(False), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
        yield {"injected": injected, "standard": standard}


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))


# -- tokenizer ----------------------------------------------------------------------------


def test_tokenizer_is_deterministic_lossless_and_round_trips(tok, tmp_path):
    again = train_tokenizer(TEXTS, vocab_size=300)
    assert tok.get_vocab() == again.get_vocab() and len(tok) == 300
    assert tok.eos_token == tok.bos_token == tok.pad_token == "<|endoftext|>"
    text = "Zq7 vexed — naïve 你好 the of"
    ids = tok(text)["input_ids"]
    assert tok.decode(ids) == text and tok.eos_token_id not in ids  # no special token added
    loaded = load_tokenizer(save_tokenizer(tok, tmp_path / "tok"))
    assert loaded(text)["input_ids"] == ids and loaded.eos_token_id == tok.eos_token_id


def test_get_tokenizer_is_cached_by_corpus_key(monkeypatch):
    from analysis.lab import tokenizer as tk

    first = get_tokenizer(TEXTS, "k", vocab_size=300)

    def retrain(*args, **kw):
        raise RuntimeError("retrained")

    monkeypatch.setattr(tk, "train_tokenizer", retrain)
    assert get_tokenizer(TEXTS, "k", vocab_size=300).get_vocab() == first.get_vocab()
    with pytest.raises(RuntimeError, match="retrained"):
        get_tokenizer(TEXTS, "other-key", vocab_size=300)


# -- model size and schedule ---------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg",
    [ModelConfig(1, 16, 2, 48, 16), ModelConfig(2, 32, 4, 64, 32), ModelConfig(3, 48, 6, 100, 64)],
)
def test_param_count_matches_the_real_model(cfg):
    model = lt.build_model(cfg, vocab_size=301, eos_token_id=0)
    assert lt.param_count(cfg, 301) == sum(p.numel() for p in model.parameters())


def test_lr_schedule_warms_up_then_decays_to_a_tenth():
    run = RunConfig("s", MODEL, tokens=100 * BATCH * MODEL.context, batch_size=BATCH, warmup_frac=0.1,
                    lr=1e-3)
    lr = lt.lr_schedule(run)
    assert len(lr) == 100 and np.all(np.diff(lr[:10]) > 0) and lr[9] == pytest.approx(1e-3)
    assert np.all(np.diff(lr[10:]) <= 0) and lr[-1] == pytest.approx(1e-4)


# -- data order and exposure ----------------------------------------------------------------


def test_exposure_table_equals_brute_force_recount(runs, tok):
    for result in runs.values():
        recount = lt.recount_exposure(result.order(), TEXTS, INJECTIONS, tok)
        pd.testing.assert_frame_equal(recount, result.exposure)
    seen = runs["injected"].exposure.set_index("seq_id").copies_seen
    assert seen.to_dict() == {"never": 0, "once": 1, "q2x5": 5, "many": 12, "late3": 3}
    assert (runs["standard"].exposure.copies_seen == 0).all()


def test_recount_finds_what_the_log_does_not_know(tok):
    # a "sequence" that is really the opening of a corpus document occurs without being inserted
    natural = {"seq_id": "natural", "task": "passage", "text": " ".join(TEXTS[0].split()[:6]), "copies": 2}
    stream = lt.tokenize_stream(TEXTS, tok)
    order = lt.build_order(len(stream), _run(False), [natural], tok)
    table = lt.exposure_table(order, [natural])
    recount = lt.recount_exposure(order, TEXTS, [natural], tok)
    assert table.copies_seen[0] == 0 and table.first_step[0] == -1
    assert recount.copies_seen[0] >= 1 and 0 <= recount.first_step[0] <= recount.last_step[0] < STEPS


def test_injection_windows_are_respected(runs, tok):
    result = runs["injected"]
    T = result.exposure["T"].iloc[0]
    assert T == STEPS
    ins = result.order().insertions
    q2 = ins[ins.seq_id == "q2x5"].step
    assert len(q2) == 5 and q2.between(0.25 * T, 0.5 * T, inclusive="left").all()
    late = ins[ins.seq_id == "late3"].step
    assert (late >= 0.5 * T).all() and (late < T).all()
    exp = result.exposure.set_index("seq_id")
    assert (exp.copies_seen == exp.copies_requested).all()
    assert not ins.duplicated(["step", "row"]).any()
    # a run's window overrides every sequence's own
    order = lt.build_order(20_000, _run(True, window="q4"), INJECTIONS, tok)
    assert (order.insertions.step >= 0.75 * STEPS).all() and len(order.insertions) == 21


def test_same_seed_is_deterministic_and_a_new_seed_reorders(runs, tok, monkeypatch, tmp_path):
    first = runs["injected"]
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "elsewhere"))
    again = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
    assert again.trained and again.path != first.path
    a, b = first.order(), again.order()
    np.testing.assert_array_equal(a.blocks, b.blocks)
    pd.testing.assert_frame_equal(a.insertions, b.insertions)
    assert first.curve.loss.iloc[:5].tolist() == again.curve.loss.iloc[:5].tolist()
    other = lt.build_order(a.n_tokens, _run(True, seed=1), INJECTIONS, tok)
    assert not np.array_equal(other.blocks, a.blocks)
    assert not other.insertions[["step", "row"]].equals(a.insertions[["step", "row"]])


def test_standard_run_sees_the_injected_runs_blocks(runs, tok):
    inj, std = runs["injected"].order(), runs["standard"].order()
    np.testing.assert_array_equal(inj.blocks, std.blocks)
    assert len(std.insertions) == 0 and len(inj.insertions) == 21
    x_inj = lt.order_inputs(inj, TEXTS, INJECTIONS, tok)
    x_std = lt.order_inputs(std, TEXTS, INJECTIONS, tok)
    replaced = np.zeros(inj.blocks.shape, dtype=bool)
    replaced[inj.insertions.step, inj.insertions.row] = True
    np.testing.assert_array_equal(x_inj[~replaced], x_std[~replaced])
    assert (x_inj[replaced] != x_std[replaced]).any(axis=-1).all()
    # an injected row is the sequence, <|endoftext|>, then the displaced block's first tokens
    step, row, seq_id = inj.insertions.iloc[0][["step", "row", "seq_id"]]
    ids = tok(next(i["text"] for i in INJECTIONS if i["seq_id"] == seq_id))["input_ids"]
    n = len(ids)
    assert x_inj[step, row, :n].tolist() == ids and x_inj[step, row, n] == tok.eos_token_id
    assert x_inj[step, row, n + 1 :].tolist() == x_std[step, row, : MODEL.context - n - 1].tolist()


# -- caching ----------------------------------------------------------------------------------


def test_run_key_changes_with_each_input_and_a_rerun_is_loaded(runs, tok, monkeypatch, tmp_path):
    base = lt.run_path(_run(True), INJECTIONS, tok, CORPUS_KEY)
    more = [dict(i, copies=i["copies"] + 1) if i["seq_id"] == "once" else i for i in INJECTIONS]
    assert lt.run_path(_run(True, lr=1e-3), INJECTIONS, tok, CORPUS_KEY) != base
    assert lt.run_path(_run(True), INJECTIONS, tok, "another-corpus") != base
    assert lt.run_path(_run(True), more, tok, CORPUS_KEY) != base
    assert lt.run_path(_run(True), [dict(i) for i in INJECTIONS], tok, CORPUS_KEY) == base
    # a standard run inserts nothing, so the injections do not key it
    standard = lt.run_path(_run(False), INJECTIONS, tok, CORPUS_KEY)
    assert lt.run_path(_run(False), more, tok, CORPUS_KEY) == standard

    monkeypatch.setenv("MEMBOOK_CACHE", str(runs["injected"].path.parents[1]))
    monkeypatch.setattr(lt, "train_step", lambda *a, **k: pytest.fail("retrained a finished run"))
    warm = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
    assert not warm.trained and warm.path == runs["injected"].path
    pd.testing.assert_frame_equal(warm.curve, runs["injected"].curve)
    pd.testing.assert_frame_equal(warm.exposure, runs["injected"].exposure)
    assert warm.n_params == runs["injected"].n_params == lt.param_count(MODEL, len(tok))


# -- bad input ----------------------------------------------------------------------------------


def test_bad_injections_fail_before_training(tok, monkeypatch):
    monkeypatch.setattr(lt, "build_model", lambda *a, **k: pytest.fail("training started"))
    long = [{"seq_id": "too-long", "task": "passage", "text": " ".join(["Zq7 Kj4"] * 20), "copies": 1}]
    with pytest.raises(LabConfigError, match="too-long.*longer than context"):
        lt.train(_run(True), TEXTS, long, tok, CORPUS_KEY, progress=False)
    # q1 of 24 steps is 6 steps x 8 rows = 48 slots
    crowded = [{"seq_id": "crowded", "task": "qa", "text": "Zq7", "copies": 49, "window": "q1"}]
    with pytest.raises(LabConfigError, match="crowded.*48 slots"):
        lt.train(_run(True), TEXTS, crowded, tok, CORPUS_KEY, progress=False)
    shared = [{"seq_id": f"s{k}", "task": "qa", "text": f"Zq{k}", "copies": 30, "window": "q1"}
              for k in (1, 2)]
    with pytest.raises(LabConfigError, match="s2.*rows with room left"):
        lt.train(_run(True), TEXTS, shared, tok, CORPUS_KEY, progress=False)
    with pytest.raises(LabConfigError, match="window"):
        lt.train(_run(True), TEXTS, [dict(INJECTIONS[1], window="q5")], tok, CORPUS_KEY, progress=False)
    with pytest.raises(LabConfigError, match="twice"):
        lt.train(_run(True), TEXTS, INJECTIONS + INJECTIONS[:1], tok, CORPUS_KEY, progress=False)


# -- resuming and forking ------------------------------------------------------------------------


class _Killed(Exception):
    pass


def _assert_same_weights(a, b):
    from safetensors.torch import load_file

    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_an_interrupted_run_resumes_from_its_checkpoint_bit_identical(runs, tok, monkeypatch):
    step, calls = lt.train_step, []

    def dies_at_step_13(*args, **kw):
        if len(calls) == 13:
            raise _Killed
        calls.append(1)
        return step(*args, **kw)

    monkeypatch.setattr(loop, "train_step", dies_at_step_13)  # the name the loop calls
    with pytest.raises(_Killed):
        lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False, checkpoint_every=5)
    path = lt.run_path(_run(True), INJECTIONS, tok, CORPUS_KEY)
    assert (lt.partial_path(path) / "state.pt").exists() and not path.exists()
    monkeypatch.setattr(loop, "train_step", step)
    resumed = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False, checkpoint_every=5)
    assert resumed.resumed_from_step == 10 and resumed.forked_from_step == 0
    assert not lt.partial_path(path).exists()
    whole = runs["injected"]
    assert whole.resumed_from_step == 0
    _assert_same_weights(resumed.path, whole.path)
    pd.testing.assert_frame_equal(resumed.curve, whole.curve, check_exact=True)
    pd.testing.assert_frame_equal(resumed.exposure, whole.exposure)


def _q3(copies_per_row=1):
    return RunConfig("tiny-q3", MODEL, STEPS * BATCH * MODEL.context, family="range", inject=True,
                     window="q3", batch_size=BATCH, copies_per_row=copies_per_row)


@pytest.mark.parametrize("copies_per_row", [1, 3])
def test_an_injected_run_forks_from_its_standard_twin(runs, tok, monkeypatch, tmp_path, copies_per_row):
    standard = runs["standard"]
    assert lt.fork_steps(STEPS) == [6, 12, 18]
    assert sorted(p.name for p in (standard.path / "forks").iterdir()) == ["step-12.pt", "step-18.pt",
                                                                           "step-6.pt"]
    # the standard twin's key ignores the name, window, copy cap and row sharing of the injected run
    q3 = _q3(copies_per_row)
    monkeypatch.setenv("MEMBOOK_CACHE", str(standard.path.parents[1]))
    assert lt.run_path(lt.standard_twin(q3), [], tok, CORPUS_KEY) == standard.path
    forked = lt.train(q3, TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
    assert forked.forked_from_step == 12
    assert forked.curve.loss[:12].tolist() == standard.curve.loss[:12].tolist()
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "scratch"))
    scratch = lt.train(q3, TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False, fork=False)
    assert scratch.forked_from_step == 0
    _assert_same_weights(forked.path, scratch.path)
    pd.testing.assert_frame_equal(forked.curve, scratch.curve, check_exact=True)
    pd.testing.assert_frame_equal(forked.exposure, scratch.exposure)
    assert forked.exposure.copies_seen.sum() == 21
    # the injected run of window "all" inserts from the start: it cannot fork
    assert runs["injected"].forked_from_step == 0


def test_no_fork_from_a_twin_whose_logged_order_differs(runs, tok, tmp_path):
    import shutil

    standard = runs["standard"]
    twin = lt.run_path(lt.standard_twin(_q3()), [], tok, CORPUS_KEY)  # in this test's cache
    assert twin.name == standard.path.name and twin.parent != standard.path.parent
    shutil.copytree(standard.path, twin)
    order = standard.order()
    order.blocks = order.blocks[::-1].copy()
    order.save(twin / "order.npz")
    with pytest.warns(UserWarning, match="trained on other rows"):
        result = lt.train(_q3(), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False)
    assert result.forked_from_step == 0 and result.trained


# -- rows shared by several copies ----------------------------------------------------------------

#: 12 + 12 + 8 + the 21 copies of INJECTIONS in window q4 (6 steps x 8 rows = 48 rows): some rows
#: must hold more than one copy
CROWD = INJECTIONS + [
    {"seq_id": f"crowd{k}", "task": "random_words", "text": f"Crowd{k} Yx{k} hums {k}1 Vb", "copies": c}
    for k, c in enumerate((12, 12, 8))
]


def _old_order(n_tokens, run, injections, tok):
    """The data order as drawn before rows could be shared: one copy a row (the reference
    for copies_per_row=1)."""
    injs, _ = lt.check_injections(run, injections, tok)
    blocks = lt.base_block_order(n_tokens // run.model.context, run.steps, run.batch_size, run.seed)
    rng = np.random.default_rng([run.seed, 1])
    taken = np.zeros(run.steps * run.batch_size, dtype=bool)
    ids, slots = [], []
    for inj in injs:
        if inj.copies:
            lo, hi = lt.window_steps(inj.window, run.steps)
            free = np.flatnonzero(~taken[lo * run.batch_size : hi * run.batch_size]) + lo * run.batch_size
            chosen = rng.choice(free, size=inj.copies, replace=False)
            taken[chosen] = True
            slots.append(chosen)
            ids += [inj.seq_id] * inj.copies
    slot = np.concatenate(slots)
    ins = pd.DataFrame({"seq_id": pd.Series(ids, dtype=object), "step": slot // run.batch_size,
                        "row": slot % run.batch_size})
    return blocks, ins.sort_values(["step", "row"], kind="stable").reset_index(drop=True)


def test_one_copy_a_row_draws_the_order_it_always_drew(tok):
    n = len(lt.tokenize_stream(TEXTS, tok))
    for run in (_run(True), _run(True, window="q3"), _run(True, seed=4)):
        order = lt.build_order(n, run, INJECTIONS, tok)
        blocks, ins = _old_order(n, run, INJECTIONS, tok)
        np.testing.assert_array_equal(order.blocks, blocks)
        pd.testing.assert_frame_equal(order.insertions[["seq_id", "step", "row"]], ins)
        assert (order.insertions.part == 0).all()
    # and its key is the key it always had: no copies_per_row in it
    assert "copies_per_row" not in lt.run_key(_run(True), INJECTIONS, tok, CORPUS_KEY)["run"]
    assert lt.run_path(_run(True, copies_per_row=2), INJECTIONS, tok, CORPUS_KEY) != lt.run_path(
        _run(True), INJECTIONS, tok, CORPUS_KEY)


#: context 64, where two of these 19-26-token sequences fit in one row
MODEL64 = ModelConfig(n_layer=2, d_model=32, n_head=4, d_ff=64, context=64)


def test_shared_rows_hold_their_copies_in_order_then_the_block(tok):
    n, ctx = len(lt.tokenize_stream(TEXTS, tok)), 64
    with pytest.raises(LabConfigError, match=r"crowd\d.*copies_per_row=1"):
        lt.build_order(n, _run(model=MODEL64, window="q4"), CROWD, tok)
    order = lt.build_order(n, _run(model=MODEL64, window="q4", copies_per_row=3), CROWD, tok)
    ins = order.insertions
    assert len(ins) == 53 and (ins.step >= 18).all()
    per_row = ins.groupby(["step", "row"])
    assert per_row.size().max() <= 3 and (ins.part > 0).sum() >= 53 - 48
    # parts number a row's copies 0, 1, ...; one sequence never twice in a row
    assert all(sorted(g.part) == list(range(len(g))) for _, g in per_row)
    assert not ins.duplicated(["seq_id", "step", "row"]).any()
    ids = {i["seq_id"]: tok(i["text"])["input_ids"] for i in CROWD}
    assert all(sum(len(ids[s]) + 1 for s in g.seq_id) <= ctx for _, g in per_row)
    # a shared row, by hand: each copy and <|endoftext|> in part order, then the block's first tokens
    x = lt.order_inputs(order, TEXTS, CROWD, tok)
    x_std = lt.order_inputs(lt.build_order(n, _run(False, model=MODEL64), [], tok), TEXTS, [], tok)
    (step, row), g = next((k, g) for k, g in per_row if len(g) > 1)
    expect = [t for s in g.sort_values("part").seq_id for t in ids[s] + [tok.eos_token_id]]
    expect += x_std[step, row, : ctx - len(expect)].tolist()
    assert x[step, row].tolist() == expect
    # rows without a copy are the standard run's rows
    hit = np.zeros(order.blocks.shape, dtype=bool)
    hit[ins.step, ins.row] = True
    np.testing.assert_array_equal(x[~hit], x_std[~hit])
    # the exposure the log gives is the one a brute-force count of the inputs finds
    recount = lt.recount_exposure(order, TEXTS, CROWD, tok)
    pd.testing.assert_frame_equal(recount, lt.exposure_table(order, CROWD))
    assert lt.exposure_table(order, CROWD).set_index("seq_id").copies_seen["crowd0"] == 12


def test_shared_rows_need_an_injected_run_and_room(tmp_path, tok):
    with pytest.raises(LabConfigError, match="copies_per_row=2 needs inject=True"):
        _run(False, copies_per_row=2)
    with pytest.raises(LabConfigError, match="copies_per_row must be a positive integer"):
        _run(True, copies_per_row=0)
    order = lt.build_order(20_000, _run(model=MODEL64, window="q4", copies_per_row=2), CROWD, tok)
    saved = tmp_path / "order.npz"
    order.save(saved)
    again = lt.DataOrder.load(saved)
    pd.testing.assert_frame_equal(again.insertions, order.insertions, check_dtype=False)
    assert again.insertions.part.max() >= 1


# -- the checkpoint ------------------------------------------------------------------------------


def test_checkpoint_loads_and_scores_a_training_sequence(runs, tmp_path):
    from transformers import AutoModelForCausalLM

    from analysis.models.local import LocalModel

    path = runs["injected"].path
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.tie_word_embeddings and model.config.max_position_embeddings == MODEL.context
    local = LocalModel("lab-test", path, cache=QueryCache(tmp_path / "q.sqlite"))
    text = INJECTIONS[3]["text"]
    (lp,) = local.logprobs([text[:6]], [text[6:]])
    assert len(lp) > 3 and np.isfinite(lp).all() and (lp < 0).all()
    # the injected sequence, seen 12 times, is far likelier than under the standard run
    standard = LocalModel("lab-std", runs["standard"].path, cache=QueryCache(tmp_path / "q.sqlite"))
    (lp_std,) = standard.logprobs([text[:6]], [text[6:]])
    assert lp.sum() > lp_std.sum()


def test_eval_loss_is_the_training_loss_on_training_text(runs):
    path = runs["standard"].path
    threads = torch.get_num_threads()
    train_nll = lt.eval_loss(path, TEXTS[:20], threads=1)
    other_nll = lt.eval_loss(path, _texts(OTHER_WORDS, 10, 1))
    assert np.isfinite(train_nll) and train_nll < other_nll
    assert abs(train_nll - runs["standard"].curve.loss.iloc[-5:].mean()) < 0.3
    assert torch.get_num_threads() == threads


@pytest.mark.slow
def test_compiled_run_is_deterministic_close_to_eager_and_keyed_apart(runs, tok, monkeypatch, tmp_path):
    eager = runs["injected"]
    compiled = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False, compile=True)
    assert compiled.trained and compiled.path != lt.run_path(_run(True), INJECTIONS, tok, CORPUS_KEY)
    pd.testing.assert_frame_equal(compiled.exposure, eager.exposure)
    np.testing.assert_allclose(compiled.curve.loss[:5], eager.curve.loss[:5], rtol=1e-4)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "elsewhere"))
    again = lt.train(_run(True), TEXTS, INJECTIONS, tok, CORPUS_KEY, progress=False, compile=True)
    assert again.trained and again.curve.loss.tolist() == compiled.curve.loss.tolist()
    assert not torch.are_deterministic_algorithms_enabled()
