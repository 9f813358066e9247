"""Training a lab's runs side by side (analysis.lab.workers): the same weights as one at a time."""

import json

import pytest

from analysis.core.cache import CACHE_ENV
from analysis.lab import ladder, workers
from analysis.lab.config import LabConfigError
from analysis.lab.train import Placement
from analysis.lab.train.devices import default_threads


def test_workers_default_to_the_cores_and_bad_settings_name_the_range(monkeypatch):
    monkeypatch.delenv(workers.WORKERS_ENV, raising=False)
    cores = default_threads()
    assert workers.lab_workers() == cores
    assert workers.lab_workers(1) == 1
    monkeypatch.setenv(workers.WORKERS_ENV, "1")
    assert workers.lab_workers() == 1
    monkeypatch.setenv(workers.WORKERS_ENV, "two")
    expected = rf"\$MEMBOOK_LAB_WORKERS must be an integer from 1 to {cores}.*'two'"
    with pytest.raises(LabConfigError, match=expected):
        workers.lab_workers()
    for bad in (0, cores + 1, 1.5, True):
        with pytest.raises(LabConfigError, match=rf"workers must be an integer from 1 to {cores}"):
            workers.lab_workers(bad)


def test_only_a_single_process_cpu_build_trains_side_by_side():
    assert workers.lab_workers(1, Placement()) == 1
    assert workers.lab_workers(1, Placement(device="cuda")) == 1
    assert workers.lab_workers(1, Placement(world_size=2, local_world_size=2)) == 1
    if default_threads() >= 2:
        assert workers.lab_workers(2, Placement()) == 2
        assert workers.lab_workers(2, Placement(device="cuda")) == 1
        assert workers.lab_workers(2, Placement(world_size=2, local_world_size=2)) == 1


@pytest.mark.slow
@pytest.mark.skipif(default_threads() < 2, reason="side by side needs two cores")
def test_runs_trained_side_by_side_equal_runs_trained_one_at_a_time(tmp_path, monkeypatch):
    # std-s2x is the standard twin range-q2 forks from (at the q2 window's first step), and
    # std-s1x is wide-16 under another name (one key): the side-by-side build trains three
    # runs, range-q2 after its twin, and every run's weights equal those of a one-at-a-time build
    names = ["std-s2x", "range-q2", "std-s1x", "wide-16"]
    built = {}
    for n in (1, 2):
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / f"workers-{n}"))
        built[n] = ladder.build_lab("smoke", progress=False, runs=names, workers=n)
    for name in names:
        one, two = built[1].results[name].path, built[2].results[name].path
        assert one.name == two.name
        assert (one / "model.safetensors").read_bytes() == (two / "model.safetensors").read_bytes(), name
    done = {name: json.loads((built[2].results[name].path / "DONE.json").read_text()) for name in names}
    assert done["range-q2"]["forked_from_step"] > 0
    assert done["range-q2"]["forked_from_step"] == json.loads(
        (built[1].results["range-q2"].path / "DONE.json").read_text())["forked_from_step"]
    assert {d["threads"] for n, d in done.items()} == {1}
    assert built[2].results["wide-16"].path == built[2].results["std-s1x"].path
    # each build trained the same three runs (wide-16 shares std-s1x's key and is loaded)
    for n in (1, 2):
        trained = built[n].runs_table().set_index("run")["trained now"]
        assert trained.to_dict() == {"std-s2x": True, "range-q2": True, "std-s1x": True, "wide-16": False}, n
