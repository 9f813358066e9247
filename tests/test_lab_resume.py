"""Resuming a killed run, and injected runs forked from their standard twin, on the smoke lab.

A run killed by SIGKILL in a real subprocess resumes from its partial
checkpoint; an injection-range run starts from its standard twin's fork where
its window opens. Both must end bit-identical (every tensor, the loss curve,
the exposure table) to the same run trained from step 0 in another cache.

They need the offline data mirror for the smoke corpus and skip when
``MEMBOOK_DATA_MIRROR`` is unset. The smoke runs are 14-29 steps of a
16-wide model, trained on one thread; the whole file takes well under a minute
after the corpus (about 10 s).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from analysis.core import data
from analysis.lab import ladder, profiles
from analysis.lab import train as lt
from analysis.lab.tokenizer import load_tokenizer, save_tokenizer
from analysis.lab.train import devices

pytestmark = pytest.mark.skipif(
    not os.environ.get(data.MIRROR_ENV),
    reason=f"{data.MIRROR_ENV} is unset: point it at the offline data mirror",
)

SMOKE = profiles.PROFILES["smoke"]
#: runs picked by role, not name: the longest perturbed run, the range runs, their standard twin
PERTURBED = max((r for r in SMOKE.runs if r.family == "perturbed"), key=lambda r: r.steps)
RANGE = {r.window: r for r in SMOKE.runs if r.family == "range"}

#: one thread in the child and the parent alike: bit-identity assumes the same thread count
THREADS = 1


def _twin_in_profile(run):
    """The profile's standard run of ``run``'s shape, budget and seed (its standard twin)."""
    shape = (run.model, run.tokens, run.seed)
    return next(r for r in SMOKE.runs if r.family == "standard" and (r.model, r.tokens, r.seed) == shape)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The smoke corpus's training texts, key, tokenizer and injected sequences, built once."""
    from analysis.lab.tokenizer import get_tokenizer

    cache = tmp_path_factory.mktemp("corpus-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMBOOK_CACHE", str(cache))
        corpus = ladder.profile_corpus("smoke")
        texts = corpus.training_texts()
        key = corpus.fingerprint()
        tok = get_tokenizer(texts, key, SMOKE.vocab_size)
    return SimpleNamespace(texts=texts, key=key, tok=tok, injections=list(corpus.injections), cache=cache)


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "cache"))


def _train(lab, run, **kw):
    injs = ladder.run_injections(run, lab.injections)
    return lt.train(run, lab.texts, injs, lab.tok, lab.key, progress=False, threads=THREADS, **kw)


def _assert_same_run(a, b):
    """Bit-identical weights, and equal curve, exposure and data order."""
    from safetensors.torch import load_file

    wa, wb = load_file(a.path / "model.safetensors"), load_file(b.path / "model.safetensors")
    assert wa.keys() == wb.keys() and len(wa) > 0
    unequal = [k for k in wa if not torch.equal(wa[k], wb[k])]
    assert not unequal, f"tensors differ: {unequal[:5]}"
    pd.testing.assert_frame_equal(a.curve, b.curve, check_exact=True)
    pd.testing.assert_frame_equal(a.exposure, b.exposure, check_exact=True)
    oa, ob = a.order(), b.order()
    assert (oa.blocks == ob.blocks).all()
    pd.testing.assert_frame_equal(oa.insertions, ob.insertions)


# the child trains the run exactly as the parent does, each step delayed so the kill lands mid-run
CHILD = """
import json, sys, time
from analysis.lab import ladder, profiles, train as lt
from analysis.lab.train import loop
from analysis.lab.tokenizer import load_tokenizer

args = json.load(open(sys.argv[1]))
step = loop.train_step

def slow_step(*a, **k):
    time.sleep(0.25)
    return step(*a, **k)

loop.train_step = slow_step  # the name the training loop calls
run = profiles.PROFILES["smoke"].run(args["run"])
lt.train(run, args["texts"], args["injections"], load_tokenizer(args["tokenizer"]), args["key"],
         progress=False, threads=args["threads"], checkpoint_every=args["every"])
"""


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_checkpoint_bit_identical(lab, tmp_path, monkeypatch):
    # an injected run, so the resumed steps materialise inserted copies too
    run, every = PERTURBED, 5
    assert run.steps > 2 * every
    injs = ladder.run_injections(run, lab.injections)
    tok_dir = save_tokenizer(lab.tok, tmp_path / "tok")
    assert lt.tokenizer_fingerprint(load_tokenizer(tok_dir)) == lt.tokenizer_fingerprint(lab.tok)
    args = {"run": run.name, "texts": lab.texts, "key": lab.key, "tokenizer": str(tok_dir),
            "threads": THREADS, "every": every,
            "injections": [{k: getattr(i, k) for k in ("seq_id", "task", "text", "copies", "window")}
                           for i in injs]}
    (tmp_path / "args.json").write_text(json.dumps(args))

    cache = tmp_path / "killed"
    monkeypatch.setenv("MEMBOOK_CACHE", str(cache))
    path = lt.run_path(run, injs, lab.tok, lab.key)
    state = lt.partial_path(path) / "state.pt"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "args.json")],
                             env={**os.environ, "MEMBOOK_CACHE": str(cache)})
    try:
        deadline = time.monotonic() + 180
        while not state.exists():
            assert child.poll() is None, f"the child exited ({child.returncode}) before its first checkpoint"
            assert time.monotonic() < deadline, "no partial checkpoint after 180 s"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not (path / "DONE.json").exists() and state.exists()

    resumed = _train(lab, run, checkpoint_every=every)
    assert resumed.trained and resumed.path == path
    assert 0 < resumed.resumed_from_step < run.steps and resumed.resumed_from_step % every == 0
    assert resumed.forked_from_step == 0 and resumed.tokens_per_second > 0 and resumed.seconds > 0
    assert not lt.partial_path(path).exists()
    done = json.loads((path / "DONE.json").read_text())
    assert done["resumed_from_step"] == resumed.resumed_from_step
    assert done["steps_trained"] == run.steps - resumed.resumed_from_step

    # the uninterrupted run, elsewhere, with the default checkpoint interval (no checkpoint in 29 steps)
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "whole"))
    whole = _train(lab, run)
    assert whole.trained and whole.resumed_from_step == 0
    _assert_same_run(resumed, whole)
    assert (whole.exposure.copies_seen > 0).any()
    # loaded from the cache, the result still says where its training resumed
    monkeypatch.setenv("MEMBOOK_CACHE", str(cache))
    assert lt.load_run(path, injs).resumed_from_step == resumed.resumed_from_step


@pytest.mark.slow
@pytest.mark.parametrize("window", ["q2", "q3", "q4"])
def test_a_range_run_forked_from_its_standard_twin_equals_one_from_scratch(lab, tmp_path, monkeypatch,
                                                                           window):
    run = RANGE[window]
    T = run.steps
    lo = lt.window_steps(run.window, T)[0]
    twin = lt.standard_twin(run)
    assert (twin.inject, twin.window, twin.max_copies) == (False, None, None)
    # the profile's standard run of that shape and budget is the twin: its key ignores names
    std = _twin_in_profile(run)
    assert std.name != run.name
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "forked"))
    assert lt.run_path(twin, [], lab.tok, lab.key) == lt.run_path(std, lab.injections, lab.tok, lab.key)
    standard = _train(lab, std)
    saved = sorted(int(p.stem.removeprefix("step-")) for p in (standard.path / "forks").glob("step-*.pt"))
    assert saved == lt.fork_steps(T) and lo in saved
    assert not lt.partial_path(standard.path).exists()
    forked = _train(lab, run)
    assert forked.trained and forked.forked_from_step == lo > 0 and forked.resumed_from_step == 0
    assert json.loads((forked.path / "DONE.json").read_text())["steps_trained"] == T - lo
    assert forked.curve.loss[:lo].tolist() == standard.curve.loss[:lo].tolist()
    assert forked.curve.loss[lo:].tolist() != standard.curve.loss[lo:].tolist()
    assert not (forked.path / "forks").exists()  # an injected run saves no forks

    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "scratch"))
    _train(lab, std, fork=False)  # the twin is there too, but forking is off
    scratch = _train(lab, run, fork=False)
    assert scratch.forked_from_step == 0
    _assert_same_run(forked, scratch)
    exposure = forked.exposure
    assert (exposure.copies_seen == exposure.copies_requested).all() and exposure.copies_seen.sum() > 0
    assert (exposure.loc[exposure.copies_seen > 0, "first_step"] >= lo).all()


@pytest.mark.slow
def test_build_lab_trains_the_twin_first_and_forks_from_it(lab, monkeypatch):
    # the corpus and tokenizer are cached there already; no other test trains in that cache
    monkeypatch.setenv("MEMBOOK_CACHE", str(lab.cache))
    monkeypatch.setattr(devices, "default_threads", lambda: THREADS)
    late, twin = RANGE["late"], _twin_in_profile(RANGE["late"])
    shapes = {(r.model, r.tokens, r.seed) for r in RANGE.values()}
    ladder_run = next(r for r in SMOKE.runs
                      if r.family.startswith("ladder") and (r.model, r.tokens, r.seed) not in shapes)
    # the range run is named first: build_lab still trains its twin before it (one run at a
    # time here; tests/test_lab_workers.py forks a run from its twin side by side)
    names = [late.name, twin.name, ladder_run.name]
    built = ladder.build_lab("smoke", runs=names, progress=False, workers=1)
    assert list(built.results) == names
    result = built.results[late.name]
    assert result.trained and result.forked_from_step == lt.window_steps("late", late.steps)[0] > 0
    assert (built.results[twin.name].path / "forks").is_dir()
    # no range run of the profile forks from this ladder run: it saves no forks
    assert not (built.results[ladder_run.name].path / "forks").exists()
