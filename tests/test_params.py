"""Chapter parameters declared once (analysis.params; the chapters in analysis.book.chapters) and
checked before any kernel starts (scripts/execute_chapters.py): unknown names with suggestions,
types, ranges, models, files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import params as P
from analysis.book import chapters as CH
from analysis.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "execute_chapters.py"


@pytest.fixture(autouse=True)
def no_api_key(monkeypatch):
    for var in ("MEMBOOK_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def cli_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """:func:`cli` in this process (``main(argv)``, the function the script's entry point
    calls): the same exit code and output, without starting an interpreter per case."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    from execute_chapters import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def test_every_chapter_declares_every_profile_and_resolves_it():
    for chapter in CH.CHAPTER_MODULES:
        decl = CH.declaration(chapter)
        assert decl.chapter == chapter
        for profile in P.PROFILE_NAMES:
            settings = decl.resolve(profile)
            assert settings["profile"] == profile
            assert set(decl.names) <= set(settings)


def test_override_replaces_the_profile_default_and_none_keeps_it():
    size = CH.declaration("size")
    assert size.resolve("smoke")["n_per_text"] == 3
    assert size.resolve("smoke", n_per_text=7)["n_per_text"] == 7
    assert size.resolve("default", n_per_text=None)["n_per_text"] == 24


def test_a_typo_suggests_the_declared_name():
    with pytest.raises(ParameterError) as err:
        CH.check_overrides(["phrases"], "smoke", {"modles": "smollm2-135m-instruct"})
    assert "unknown parameter 'modles'" in str(err.value)
    assert "did you mean 'models'?" in str(err.value)


def test_a_name_no_selected_chapter_declares_is_an_error():
    # n_seeds is the predicting chapter's; phrases does not declare it
    with pytest.raises(ParameterError, match="no selected chapter \\(phrases\\) declares it"):
        CH.check_overrides(["phrases"], "smoke", {"n_seeds": 3})
    assert CH.check_overrides(["phrases", "predicting"], "smoke", {"n_seeds": 3}) == {
        "phrases": {}, "predicting": {"n_seeds": 3}}


@pytest.mark.parametrize("chapter, name, value, needle", [
    ("size", "n_per_text", "abc", "n_per_text must be an integer in [1, inf], got 'abc'"),
    ("size", "n_per_text", 0, "n_per_text must be an integer in [1, inf], got 0"),
    ("size", "n_per_text", True, "n_per_text must be an integer"),
    ("size", "mode", "chatty", "mode must be one of 'auto', 'completion', 'chat', got 'chatty'"),
    ("entropy", "temperature", -1, "temperature must be a number in [0, 2], got -1"),
    ("entropy", "lcs_filter", "all", "lcs_filter must be one of 'written', 'described', 'none'"),
    ("predicting", "step_bin_frac", 2, "step_bin_frac must be a number in [1e-06, 1], got 2"),
    ("phrases", "models", "gpt5", "models: unknown model 'gpt5'"),
])
def test_bad_values_name_the_parameter_and_the_allowed_values(chapter, name, value, needle):
    with pytest.raises(ParameterError) as err:
        CH.check_overrides([chapter], "smoke", {name: value})
    assert needle in str(err.value)
    assert str(err.value).startswith(f"chapter {chapter}: ")


def test_lab_run_names_are_checked_against_the_lab_profile():
    with pytest.raises(ParameterError, match="targets must name runs of the 'smoke' lab with an exposure"):
        CH.declaration("predicting").resolve("smoke", targets="wide-32")
    with pytest.raises(ParameterError, match="lab_models must name at least 2 runs"):
        CH.declaration("distributional").resolve("smoke", lab_models="wide-32")
    with pytest.raises(ParameterError, match="lab_model must name runs of the 'default' lab"):
        CH.declaration("entropy").resolve("default", lab_model="pert-l9x")
    assert CH.declaration("predicting").resolve("smoke", targets="pert-l2x, range-q4")["targets"] == [
        "pert-l2x", "range-q4"]


def test_an_api_model_needs_a_key_and_a_chapter_may_refuse_it(monkeypatch):
    with pytest.raises(ParameterError, match="'api:some/model' needs an API key: set one of MEMBOOK_API_KEY"):
        CH.declaration("phrases").resolve("smoke", models="api:some/model")
    monkeypatch.setenv("MEMBOOK_API_KEY", "sk-test")
    assert CH.declaration("phrases").resolve("smoke", models="api:some/model")["models"] == ["api:some/model"]
    assert CH.declaration("size").resolve("smoke", models="api:a,api:b")["models"] == ["api:a", "api:b"]
    # the token-level chapter takes a served model: its server is probed in the chapter's first cell
    assert CH.declaration("entropy").resolve("smoke", models="api:some/model")["models"] == ["api:some/model"]
    # a parameter declared without API models refuses one by name
    with pytest.raises(ParameterError, match="is an API model, but this chapter needs token-level"):
        P.Param("models", "local models only", kind="models", api=False).validate("api:some/model")


def test_a_completions_file_must_exist_and_parse(tmp_path):
    phrases = CH.declaration("phrases")
    with pytest.raises(ParameterError, match="completions_file: no such file"):
        phrases.resolve("smoke", completions_file=str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('[\n {"phrase_id": "a", "model": "m"},\n {"phrase_id": \n')
    with pytest.raises(ParameterError) as err:
        phrases.resolve("smoke", completions_file=str(bad))
    assert "not valid JSON at line 4" in str(err.value) and str(bad) in str(err.value)
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"phrase_id": "a", "model": "m", "type": "propaganda", "completion": "x",
                                 "timestamp": "paper"}]))
    assert phrases.resolve("smoke", completions_file=str(good))["completions_file"] == str(good)


def test_unknown_chapter_suggests_the_nearest():
    with pytest.raises(ParameterError, match="unknown chapter 'phrase' \\(did you mean 'phrases'\\?\\)"):
        CH.declaration("phrase")


def test_setup_table_lists_every_declared_parameter_with_its_value():
    size = CH.declaration("size")
    table = size.table(size.resolve("smoke", n_per_text=5), source={"n_per_text": "100"})
    assert list(table["parameter"]) == ["profile", *size.names]
    row = table.set_index("parameter").loc["n_per_text"]
    assert (row["this run"], row["source"]) == ("5", "100")


# -- the command line, as a reader meets it ------------------------------------------------


def test_cli_typo_fails_before_any_kernel_with_a_suggestion():
    proc = cli("--chapters", "phrases", "--profile", "smoke", "-p", "modles=smollm2-135m-instruct")
    assert proc.returncode == 2
    assert "unknown parameter 'modles'" in proc.stderr and "did you mean 'models'?" in proc.stderr
    assert "phrases:" not in proc.stderr  # no chapter ran


@pytest.mark.parametrize("args, needle", [
    (["--chapters", "size", "-p", "n_per_text=abc"], "n_per_text must be an integer in [1, inf], got 'abc'"),
    (["--chapters", "size", "-p", "n_per_text=-3"], "n_per_text must be an integer in [1, inf], got -3"),
    (["--chapters", "phrases", "-p", "models=gpt5"], "unknown model 'gpt5'"),
    (["--chapters", "sizes"], "unknown chapter 'sizes' (did you mean 'size'?)"),
    (["--chapters", "phrases", "-p", "models=api:openai/gpt-4o"], "needs an API key"),
    (["--chapters", "phrases", "-p", "completions_file=/no/such.json"], "no such file '/no/such.json'"),
    # a served model passes the check of names (its server is probed in the chapter's first cell)
    (["--chapters", "entropy", "-p", "models=api:x"], "needs an API key"),
    # commas separate chapters as they separate models: both are checked
    (["--chapters", "lab,size", "-p", "n_per_text=0"], "chapter size: n_per_text must be an integer"),
    # an API model written without its prefix fails before any kernel, with the hint
    (["--chapters", "size", "-p", "models=openai/gpt-4o"], "write 'api:openai/gpt-4o'"),
])
def test_cli_bad_input_is_an_error_naming_the_parameter(capsys, args, needle):
    proc = cli_here(capsys, "--profile", "smoke", *args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr


def test_cli_lists_a_chapters_parameters():
    proc = cli("--list-params", "size")
    assert proc.returncode == 0
    assert "block_kind" in proc.stdout and "default: smoke 3; default 24; paper 100" in proc.stdout


def test_reference_table_lists_every_parameter_with_its_profile_defaults():
    from analysis.book.chapters import declaration

    ref = declaration("entropy").reference()
    assert list(ref["parameter"]) == ["profile", *declaration("entropy").names]
    row = ref.set_index("parameter").loc["lab_popular_sets"]
    assert (row["smoke"], row["default"], row["paper"]) == ("1", "3", "3")
    assert row["allowed"] == "an integer in [1, inf]"
    assert ref.set_index("parameter").loc["temperature", "paper"] == "0.8"


@pytest.mark.parametrize("var, value, needle", [
    ("MEMBOOK_API_CONCURRENCY", "abc", "MEMBOOK_API_CONCURRENCY must be a whole number from 1 to 256"),
    ("MEMBOOK_API_BASE_URL", "localhost:8000/v1", "MEMBOOK_API_BASE_URL must be an http(s) URL"),
    ("MEMBOOK_API_TIMEOUT", "soon", "MEMBOOK_API_TIMEOUT must be a number"),
])
def test_cli_bad_endpoint_settings_fail_before_any_kernel(monkeypatch, capsys, var, value, needle):
    monkeypatch.setenv("MEMBOOK_API_KEY", "sk-test")
    monkeypatch.setenv(var, value)
    proc = cli_here(capsys, "--profile", "smoke", "--chapters", "phrases", "-p", "models=api:some/model")
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "\nphrases:" not in proc.stderr  # no chapter ran
