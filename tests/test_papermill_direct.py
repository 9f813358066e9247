"""A chapter executed with papermill directly (as ``book/howto.md`` shows) rejects a
parameter it does not declare before any model loads: papermill itself only warns."""

from pathlib import Path

import jupytext
import papermill as pm
import pytest

from analysis.book.chapters import declaration
from analysis.params import ParameterError, injected_names

ROOT = Path(__file__).resolve().parents[1]


def test_injected_names_reads_papermills_parameters_cell_only():
    history = ["", 'profile = "default"\nthreshold = None\n',
               '# Parameters\nprofile = "smoke"\ntreshold = 0.2\nmodels = ["a", "b"]\n',
               "from analysis.book.preamble import *\nx = 1\n"]
    assert injected_names(history) == ["profile", "treshold", "models"]
    assert injected_names(None) == []
    assert injected_names(["# Parameters\nthis is not python("]) == []


def test_from_namespace_refuses_an_injected_name_the_chapter_does_not_declare():
    decl = declaration("phrases")
    namespace = {"profile": "smoke", "treshold": 0.2,
                 "In": ["", "profile = 'default'\nthreshold = None\n",
                        '# Parameters\nprofile = "smoke"\ntreshold = 0.2\n']}
    with pytest.raises(ParameterError, match=r"unknown parameter 'treshold'.*did you mean 'threshold'"):
        decl.from_namespace(namespace)
    # the same value under its declared name goes through
    namespace["In"][2] = '# Parameters\nprofile = "smoke"\nthreshold = 0.2\n'
    namespace["threshold"] = 0.2
    assert decl.from_namespace(namespace)["threshold"] == 0.2


def test_papermill_run_with_a_misspelt_parameter_fails_in_the_first_cell(tmp_path):
    source = tmp_path / "phrases.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / "phrases.md"), source)
    out = tmp_path / "out.ipynb"
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(source), str(out), parameters={"profile": "smoke", "treshold": 0.2},
                            kernel_name="python3", cwd=str(ROOT), progress_bar=False)
    assert err.value.ename == "ParameterError"
    assert "unknown parameter 'treshold'" in err.value.evalue
    assert "did you mean 'threshold'" in err.value.evalue
    # it stopped in the cell that checks the parameters: no later code cell ran
    cells = [c for c in jupytext.read(out)["cells"] if c["cell_type"] == "code"]
    ran = [i for i, c in enumerate(cells) if c.get("execution_count")]
    failed = next(i for i, c in enumerate(cells)
                  if any(o.get("output_type") == "error" for o in c["outputs"]))
    assert "from_namespace(globals())" in cells[failed]["source"]
    assert max(ran) <= failed
