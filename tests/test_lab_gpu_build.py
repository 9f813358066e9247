"""A cold build under torchrun: what every process reads from the cache, and how long a
process waits for the others; the GPU lab built one run per GPU (``--shard``).

The corpus is a small synthetic one here (its builder stood in for), so nothing needs
the data mirror; the tokenizer and the token stream are the real ones.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from analysis.lab import ladder, profiles
from analysis.lab import train as lt
from analysis.lab.corpus import Corpus, Document, Injection
from analysis.lab.train import devices, order, stream
from analysis.lab.train.devices import Placement

WORDS = "the a of to and in is it that was he for on are as with his they at be this from have".split()
SMOKE = profiles.PROFILES["smoke"]
PROFILE = profiles.LabProfile(SMOKE.corpus, 300, SMOKE.runs[:1])


def _corpus(config, phrase_candidates=None):
    rng = random.Random(0)
    docs = [Document(f"bg-{i}", "background", "generated",
                     " ".join(rng.choice(WORDS) for _ in range(60)), 1 + i % 3) for i in range(40)]
    return Corpus(config, docs, [], [Injection("qa-004-0", "qa", "Q: Vt6 glimmer? A: 4417", 4)])


@pytest.fixture
def built(monkeypatch, tmp_path):
    """A counter of the corpus builds, the builder stood in for and the cache empty."""
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    monkeypatch.setattr(ladder, "phrase_candidates", lambda config: None)
    monkeypatch.setattr(ladder, "barrier", lambda place: None)
    calls = []

    def build_corpus(config, phrase_candidates=None):
        calls.append(config)
        return _corpus(config, phrase_candidates)

    monkeypatch.setattr(ladder, "build_corpus", build_corpus)  # the name profile_corpus calls
    return calls


def test_the_corpus_is_built_once_and_read_back_whole(built):
    first = ladder.profile_corpus(PROFILE)
    again = ladder.profile_corpus(PROFILE)
    assert len(built) == 1
    assert again is not first and again.fingerprint() == first.fingerprint()
    assert again.training_texts() == first.training_texts() and again.injections == first.injections
    # another recipe is another corpus
    other = profiles.LabProfile(profiles.PROFILES["default"].corpus, 300)
    ladder.profile_corpus(other)
    assert len(built) == 2


def test_every_other_process_reads_the_corpus_tokenizer_and_stream_from_the_cache(built, monkeypatch):
    from analysis.lab import tokenizer as lab_tokenizer

    place = {rank: Placement(world_size=2, rank=rank, local_rank=rank, local_world_size=2) for rank in (0, 1)}
    corpus, texts, key, tok = ladder._corpus_and_tokenizer(PROFILE, place[0])
    assert len(built) == 1
    # the second process: nothing built, trained or tokenized again
    monkeypatch.setattr(ladder, "build_corpus", lambda *a, **k: pytest.fail("built the corpus again"))
    monkeypatch.setattr(lab_tokenizer, "train_tokenizer", lambda *a, **k: pytest.fail("trained a tokenizer"))
    monkeypatch.setattr(stream, "tokenize_stream", lambda *a, **k: pytest.fail("tokenized the corpus again"))
    corpus1, texts1, key1, tok1 = ladder._corpus_and_tokenizer(PROFILE, place[1])
    assert (texts1, key1) == (texts, key) and lt.tokenizer_fingerprint(tok1) == lt.tokenizer_fingerprint(tok)
    cached = stream.token_stream(texts1, tok1)
    assert (cached == order.tokenize_stream(texts, tok)).all() and cached.dtype.name == "int32"
    # other texts are another stream
    with pytest.raises(pytest.fail.Exception, match="tokenized the corpus again"):
        stream.token_stream(texts1[:-1], tok1)


def test_the_process_group_waits_as_long_as_a_cold_build(monkeypatch):
    import torch.distributed as dist

    joined = {}
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    monkeypatch.setattr(dist, "init_process_group",
                        lambda backend, **kw: joined.update(backend=backend, **kw))
    devices.init_distributed(Placement(world_size=2, rank=1, local_rank=1, local_world_size=2))
    assert joined == {"backend": "gloo", "timeout": timedelta(seconds=devices.PROCESS_GROUP_TIMEOUT_S)}
    # torch's default under NCCL is 10 minutes; a cold build of the GPU lab may take longer
    assert joined["timeout"] >= timedelta(hours=1)
    joined.clear()
    devices.init_distributed(Placement())  # alone: no group
    assert joined == {}


# -- one run per GPU: shards -------------------------------------------------------------------------


def _tiny_profile():
    from dataclasses import replace

    from analysis.lab.config import ModelConfig, RunConfig

    model = ModelConfig(n_layer=2, d_model=32, n_head=1, d_ff=64, context=128)
    step = 8 * 128  # tokens of one step: costs are proportional to steps
    std = RunConfig("std", model, 400 * step, batch_size=8)
    return profiles.LabProfile(SMOKE.corpus, 300, (
        std, RunConfig("wide-a", model, 300 * step, batch_size=8), RunConfig("wide-b", model, 100 * step,
                                                                              batch_size=8),
        replace(std, name="range-q3", family="range", inject=True, window="q3"),  # forks at step 200
        replace(std, name="twin", family="standard"),  # std's key: trained once, with std
    ))


def test_shards_put_the_runs_others_fork_from_first_and_balance_the_rest():
    prof = _tiny_profile()
    cost = {r.name: ladder.train_cost(r, 300) / ladder.train_cost(prof.run("wide-b"), 300) for r in prof.runs}
    assert cost == {"std": 4, "wide-a": 3, "wide-b": 1, "range-q3": 2, "twin": 4}
    # std (and twin, its key) to shard 0 until 4; wide-a to shard 1 until 3, wide-b after it until 4;
    # range-q3 needs std's fork, done at 4: it ends at 6 on either shard, the first taken
    assert ladder.shard_runs(prof, 2) == [["std", "twin", "range-q3"], ["wide-a", "wide-b"]]
    assert ladder.shard_runs(prof, 1) == [["std", "twin", "wide-a", "wide-b", "range-q3"]]
    assert [r.name for r in ladder.training_order(prof, prof.runs)] == ["std", "twin", "wide-a", "wide-b",
                                                                       "range-q3"]
    with pytest.raises(ladder.LabConfigError, match="shards must be a positive integer, got 0"):
        ladder.shard_runs(prof, 0)


@pytest.mark.parametrize("shards", [3, 8])
def test_the_gpu_labs_shards_train_every_run_once(shards):
    prof = profiles.get_profile("gpu")
    split = ladder.shard_runs("gpu", shards)
    names = [n for shard in split for n in shard]
    assert sorted(names) == sorted(r.name for r in prof.runs)  # each run in exactly one shard
    where = {n: i for i, shard in enumerate(split) for n in shard}
    for a in prof.runs:
        for b in prof.runs:
            if profiles.unlabelled(a) == profiles.unlabelled(b):
                assert where[a.name] == where[b.name]  # one key, one shard: trained once
    sources = ladder.fork_sources(prof)
    for shard in split:
        runs = [prof.run(n) for n in shard]
        assert runs == ladder.training_order(prof, runs)  # the shard trains in its listed order
        # a run others fork from comes before anything else of its shard
        first_other = next((i for i, r in enumerate(runs) if profiles.unlabelled(r) not in sources),
                           len(runs))
        assert all(profiles.unlabelled(r) not in sources for r in runs[first_other:])
    keys = [{profiles.unlabelled(prof.run(n)) for n in shard} for shard in split]
    loads = [sum(ladder.train_cost(u, prof.vocab_size) for u in shard) for shard in keys]
    total = sum(ladder.train_cost(u, prof.vocab_size) for u in {profiles.unlabelled(r) for r in prof.runs})
    largest = max(ladder.train_cost(r, prof.vocab_size) for r in prof.runs)
    assert sum(loads) == pytest.approx(total)
    # a greedy list schedule: no shard holds more than an even share and the largest run
    assert max(loads) <= total / shards + largest


class _Time:
    """A clock and a sleep: sleeping moves the clock; ``on_sleep`` acts at each sleep."""

    def __init__(self, on_sleep):
        self.now, self.on_sleep, self.sleeps = 0.0, on_sleep, 0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
        self.sleeps += 1
        self.on_sleep(self.sleeps)


def test_a_shard_waits_for_a_twin_in_training_elsewhere_and_not_for_a_dead_one(tmp_path):
    import os
    import time

    twin = tmp_path / "lab-runs" / "twin"
    partial = lt.partial_path(twin)
    start = time.time()

    def training(n):  # a checkpoint every 10 minutes for an hour, then the run folder
        if n % 20 == 0:
            partial.mkdir(parents=True, exist_ok=True)
            (partial / "state.pt").write_text(str(n))
            os.utime(partial / "state.pt", (start + n * 30, start + n * 30))
        if n == 120:
            twin.mkdir(parents=True)
            (twin / "DONE.json").write_text("{}")

    t = _Time(training)
    assert lt.wait_for_run(twin, stale_seconds=1800, poll_seconds=30, sleep=t.sleep, clock=t.clock)
    assert t.sleeps == 120
    # a twin whose trainer stopped writing: the wait ends 30 minutes after its last checkpoint
    dead = _Time(lambda n: None)
    assert not lt.wait_for_run(tmp_path / "dead", stale_seconds=1800, poll_seconds=30, sleep=dead.sleep,
                               clock=dead.clock)
    assert dead.now == 1800
    assert lt.wait_for_run(twin, sleep=lambda s: pytest.fail("waited for a finished run"))


def test_the_entry_point_builds_its_shard_and_prepares(monkeypatch, capsys):
    from analysis.lab import build

    for bad, message in (("8/8", "0 <= I < N"), ("a/b", "must be I/N, two integers")):
        with pytest.raises(SystemExit):
            build.parse_args(["--profile", "gpu", "--shard", bad])
        assert message in capsys.readouterr().err
    seen = {}

    def build_lab(profile, runs=None, wait_for_twins=False, **kw):
        seen.update(profile=profile, runs=runs, wait=wait_for_twins)
        raise ladder.LabConfigError("stop here")

    monkeypatch.setattr(build, "build_lab", build_lab)
    assert build.main(["--profile", "gpu", "--shard", "3/8", "--device", "cpu"]) == 2
    assert seen == {"profile": "gpu", "runs": ladder.shard_runs("gpu", 8)[3], "wait": True}
    assert build.main(["--profile", "smoke", "--shard", "0/2", "--family", "ladder-deep"]) == 2
    assert seen["runs"] == [n for n in ladder.shard_runs("smoke", 2)[0] if n.startswith("deep-")]
    assert build.main(["--profile", "smoke", "--runs", "wide-16"]) == 2
    assert seen == {"profile": "smoke", "runs": ["wide-16"], "wait": False}
    prepared = []
    monkeypatch.setattr(build, "prepare_lab", prepared.append)
    assert build.main(["--profile", "gpu", "--prepare"]) == 0 and prepared == ["gpu"]
    # under torchrun every process trains every run: no waiting for other builds
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ladder.LabConfigError, match="wait_for_twins is for single-process builds"):
        ladder.build_lab("smoke", progress=False, device="cpu", wait_for_twins=True)
