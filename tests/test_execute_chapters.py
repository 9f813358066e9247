"""scripts/execute_chapters.py's own decisions: a run that measured nothing fails,
one output folder is written by one execution at a time, and a failed run never
replaces the committed results."""

import json
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
