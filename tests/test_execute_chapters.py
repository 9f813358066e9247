"""scripts/execute_chapters.py's own decisions: a run that measured nothing fails,
one output folder is written by one execution at a time, and a failed run never
replaces the committed results."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import execute_chapters as X  # noqa: E402


def usage(*models):
    keys = ("model", "queries", "calls", "hits", "errors", "last_error")
    return {"run_models": json.dumps([dict(zip(keys, m)) for m in models])}


def test_a_model_whose_every_query_failed_is_a_run_that_measured_nothing():
    values = usage(("api:x", 12, 3, 0, 12, "AuthenticationError: bad key"),
                   ("gemma3-270m", 10, 0, 10, 0, None))
    [line] = X.measured_nothing(values)
    assert line == "every one of its 12 queries to api:x failed (last error: AuthenticationError: bad key)"
    # one answer among the errors is a measurement, however poor; a model asked nothing is not a failure
    assert X.measured_nothing(usage(("api:x", 12, 12, 0, 11, "e"), ("lab:m", 0, 0, 0, 0, None))) == []
    assert X.measured_nothing({}) == []


def test_a_failed_chapter_keeps_its_committed_results(tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    results.mkdir()
    (results / "size.json").write_text('{"committed": true}\n')

    def fake_execute(name, params, out_dir):
        nb = {"cells": [{"cell_type": "code", "outputs": [
            {"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
             "data": {"text/plain": repr(v)}} for k, v in {**usage(("api:x", 4, 4, 0, 4, "e")),
                                                           "run_queries": "4", "run_calls": "4",
                                                           "run_hits": "0", "run_errors": "4"}.items()]}]}
        (out_dir / f"{name}.ipynb").write_text(json.dumps(nb))
        return 1.0

    monkeypatch.setattr(X, "execute", fake_execute)
    code = X.main(["--chapters", "size", "--out", str(tmp_path / "out"), "--results", str(results)])
    assert code == 1
    out, err = capsys.readouterr()
    assert "size     failed: measured nothing" in out or "size  failed: measured nothing" in out
    assert "every one of its 4 queries to api:x failed" in err
    assert json.loads((results / "size.json").read_text()) == {"committed": True}


def test_a_chapter_stopped_because_it_cannot_measure_is_one_that_measured_nothing(tmp_path, monkeypatch,
                                                                                  capsys):
    import papermill as pm

    from analysis.models.base import KEEP_GOING_ENV

    monkeypatch.delenv(KEEP_GOING_ENV, raising=False)
    seen = []
    stopped = ("measured nothing: every one of its 4 queries to api:x failed (last error: not sent: "
               "authentication failed (HTTP 401 ...)); nothing more is sent to it in this process, ...")

    def fake_execute(name, params, out_dir):
        seen.append(os.environ.get(KEEP_GOING_ENV))  # what the chapter's kernel would inherit
        raise pm.PapermillExecutionError(3, 3, "loaded = ...", "CannotMeasure", stopped, [])

    monkeypatch.setattr(X, "execute", fake_execute)
    results = tmp_path / "results"
    code = X.main(["--chapters", "phrases", "--profile", "smoke", "--out", str(tmp_path / "out"),
                   "--results", str(results)])
    assert code == 1 and seen == [None]
    out, err = capsys.readouterr()
    assert "phrases  failed: measured nothing" in out
    assert f"phrases: failed: {stopped}" in err and "CannotMeasure" not in err
    assert not results.exists()
    # --keep-going: the kernels see MEMBOOK_KEEP_GOING=1, and this process's environment is
    # left as it was
    assert X.main(["--keep-going", "--chapters", "phrases", "--profile", "smoke", "--out",
                   str(tmp_path / "out")]) == 1
    assert seen == [None, "1"] and KEEP_GOING_ENV not in os.environ
    assert "--keep-going" in X.__doc__ and KEEP_GOING_ENV in X.__doc__


HOLDER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from execute_chapters import hold_output
    with hold_output(Path(sys.argv[2])):
        print("held", flush=True)
        time.sleep(60)
    """
)


def test_a_second_execution_into_the_same_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT / "scripts"), str(out)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = rf"another execution \(pid {holder.pid}\) is writing to {out}"
        with pytest.raises(X.OutputBusy, match=busy):
            with X.hold_output(out):
                pass
        assert X.main(["--chapters", "lab", "--profile", "smoke", "--out", str(out)]) == 2
        assert "--out" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    with X.hold_output(out):  # the lock goes with the process that held it
        pass


def glued_notebook(out_dir: Path, name: str) -> None:
    nb = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
         "data": {"text/plain": repr(v)}} for k, v in {"run_queries": "2", "run_calls": "0",
                                                       "run_hits": "2", "run_errors": "0",
                                                       "threads": os.environ.get("OMP_NUM_THREADS", "-"),
                                                       "pid": str(os.getpid())}.items()]}]}
    (out_dir / f"{name}.ipynb").write_text(json.dumps(nb))


def test_jobs_run_the_lab_alone_first_then_the_rest_in_parallel_workers(tmp_path, monkeypatch):
    """--jobs 2: the lab page in this process before any other chapter starts; the others
    in worker processes, each kernel told to use cores / 2 threads; every chapter's results
    written by this process, in the same form as a serial run's."""
    log = tmp_path / "order.log"

    def fake_execute(name, params, out_dir):
        with open(log, "a") as f:
            f.write(f"start {name}\n")
        glued_notebook(out_dir, name)
        with open(log, "a") as f:
            f.write(f"end {name}\n")
        return 1.0

    monkeypatch.setattr(X, "execute", fake_execute)
    monkeypatch.setattr(X, "available_cores", lambda: 2)
    out, results = tmp_path / "out", tmp_path / "results"
    code = X.main(["--chapters", "lab,predicting,phrases", "--jobs", "2", "--out", str(out),
                   "--results", str(results)])
    assert code == 0
    lines = log.read_text().split("\n")
    assert lines[:2] == ["start lab", "end lab"]
    assert sorted(lines[2:-1]) == ["end phrases", "end predicting", "start phrases", "start predicting"]
    values = {n: json.loads((results / f"{n}.json").read_text())["values"]
              for n in ("lab", "predicting", "phrases")}
    assert values["lab"]["pid"] == str(os.getpid()) and values["lab"]["threads"] == os.environ.get(
        "OMP_NUM_THREADS", "-")
    for name in ("predicting", "phrases"):
        assert values[name]["pid"] != str(os.getpid()) and values[name]["threads"] == "1"
    timings = json.loads((out / "_timings.json").read_text())
    assert [timings[n].get("jobs") for n in ("lab", "predicting", "phrases")] == [2, 2, 2]


def test_jobs_outside_the_cores_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(X, "execute", lambda *a: pytest.fail("nothing may run"))
    monkeypatch.setattr(X, "available_cores", lambda: 2)
    for jobs in ("0", "3"):
        assert X.main(["--chapters", "lab", "--jobs", jobs, "--out", str(tmp_path)]) == 2
        assert f"--jobs takes a whole number from 1 to 2 (the cores this process may use), got {jobs}" \
            in capsys.readouterr().err


def test_a_kernel_is_shut_down_without_an_interrupt():
    """jupyter_client interrupts (SIGINT) a kernel before asking it to shut down, and a
    kernel caught inside a message handler then logs "KeyboardInterrupt caught in
    kernel" after a run that succeeded: the chapters' kernels are shut down without it."""
    import asyncio
    import signal

    manager = X._quiet_kernel_manager()(kernel_name="python3")
    sent = []

    async def run():
        await manager.start_kernel()
        signal_kernel = manager._async_signal_kernel

        async def record(signum):
            sent.append(signum)
            await signal_kernel(signum)

        manager._async_signal_kernel = record
        await manager.shutdown_kernel()

    asyncio.run(run())
    assert signal.SIGINT not in sent and not asyncio.run(manager.is_alive())
