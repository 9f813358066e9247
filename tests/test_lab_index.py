"""``lab:`` model names: the lab registers its index of trained runs with the model
layer when it is imported, and the model layer never imports the lab."""

from __future__ import annotations

import subprocess
import sys

import pytest

import analysis.lab  # noqa: F401  (registers the lab's resolver, as every chapter's import does)
from analysis.models import ModelError, check_model_name, load_model, register_resolver


def test_a_lab_name_resolves_through_the_labs_index():
    assert check_model_name("lab:wide-16") == "lab"
    with pytest.raises(ModelError, match=r"no trained lab run 'no-such-run-x7'; trained runs: "):
        load_model("lab:no-such-run-x7")


def test_only_the_lab_backend_takes_a_resolver():
    with pytest.raises(ModelError, match="only the 'lab' backend takes a resolver, got 'api'"):
        register_resolver("api", lambda name: name)


def test_before_the_lab_is_imported_a_lab_name_fails_naming_the_fix():
    # a fresh process that imports the model layer alone: nothing has registered the lab
    code = ("import sys\n"
            "from analysis.models import ModelError, check_model_name, load_model\n"
            "assert check_model_name('lab:wide-16') == 'lab'\n"
            "try:\n"
            "    load_model('lab:wide-16')\n"
            "except ModelError as err:\n"
            "    print(err)\n"
            "print('analysis.lab' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    message, imported = proc.stdout.strip().splitlines()
    assert message.startswith("no resolver for 'lab:' model names is registered, so 'lab:wide-16' cannot "
                              "be loaded: import analysis.lab")
    assert imported == "False"
