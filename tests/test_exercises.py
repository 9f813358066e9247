"""Every chapter ends with at least three exercises; each re-runs the chapter with
a command whose parameters that chapter declares and accepts; at least one per
chapter uses the lab."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from analysis.book.chapters import CHAPTER_MODULES, check_overrides, declaration
from analysis.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_chapters import _value  # noqa: E402

EXERCISE = re.compile(r"^:::\{exercise\}(?P<title>.*?)\n(?P<body>.*?)^:::\s*$", re.S | re.M)
SOLUTION = re.compile(r"^:::\{solution\} (?P<label>[\w-]+)\n", re.M)
LABEL = re.compile(r"^:label: (?P<label>[\w-]+)$", re.M)
# the chapters whose every model is a lab model
LAB_CHAPTERS = {"lab", "predicting", "distributional"}


def exercises(text: str) -> list[dict]:
    """The exercises of a chapter's MyST source: title, label, body and the
    ``execute_chapters.py`` commands in the body, each parsed into its profile,
    chapters and ``-p`` overrides (values read as the script reads them)."""
    out = []
    for m in EXERCISE.finditer(text):
        body = m["body"]
        label = LABEL.search(body)
        commands = []
        for line in body.splitlines():
            if "execute_chapters.py" not in line:
                continue
            argv = shlex.split(line)
            start = next(i for i, a in enumerate(argv) if a.endswith("execute_chapters.py")) + 1
            commands.append(parse_command(argv[start:]))
        out.append({"title": m["title"].strip(), "label": label["label"] if label else None,
                    "body": body, "commands": commands})
    return out


def parse_command(argv: list[str]) -> dict:
    profile, chapters, overrides = "default", [], {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--profile":
            profile, i = argv[i + 1], i + 2
        elif arg == "--chapters":
            i += 1
            while i < len(argv) and not argv[i].startswith("-"):
                chapters.append(argv[i])
                i += 1
        elif arg in ("-p", "--param"):
            name, _, value = argv[i + 1].partition("=")
            overrides[name] = _value(value)
            i += 2
        else:
            raise ValueError(f"unexpected argument {arg!r} in an exercise's command")
    return {"profile": profile, "chapters": chapters, "overrides": overrides}


def uses_lab(chapter: str, ex: dict) -> bool:
    """Whether an exercise runs a lab model: in a chapter whose models are all the
    lab's, or through a ``lab_*`` parameter, or a ``lab:`` model name."""
    if chapter in LAB_CHAPTERS:
        return True
    for cmd in ex["commands"]:
        for name, value in cmd["overrides"].items():
            if name.startswith("lab_") or "lab:" in str(value):
                return True
    return False


@pytest.mark.parametrize("chapter", sorted(CHAPTER_MODULES))
def test_chapter_exercises_rerun_it_with_declared_parameters(chapter):
    text = (ROOT / "notebooks" / f"{chapter}.md").read_text()
    found = exercises(text)
    assert len(found) >= 3, f"{chapter}: {len(found)} exercises"
    assert text.rindex("## Exercises") > text.rindex("## Summary"), "exercises end the chapter"
    solutions = set(SOLUTION.findall(text))
    declared = set(declaration(chapter).names)
    for ex in found:
        assert ex["label"] and ex["label"] in solutions, f"{ex['title']}: no solution"
        assert ex["commands"], f"{ex['title']}: no command to re-run the chapter"
        for cmd in ex["commands"]:
            assert cmd["chapters"] == [chapter], f"{ex['title']}: runs {cmd['chapters']}"
            assert set(cmd["overrides"]) <= declared, f"{ex['title']}: {set(cmd['overrides']) - declared}"
            check_overrides([chapter], cmd["profile"], cmd["overrides"])  # raises on a bad value
    assert any(uses_lab(chapter, ex) for ex in found), f"{chapter}: no exercise uses the lab"


FIXTURE = """
## Summary

## Exercises

:::{exercise} One
:label: ex-one

```bash
python scripts/execute_chapters.py --profile default --chapters size -p block_kind=all -p n_lab_per_text=24
```
:::

:::{solution} ex-one
:class: dropdown

Why.
:::
"""


def test_exercise_parser_reads_commands_and_the_check_rejects_an_undeclared_name():
    [ex] = exercises(FIXTURE)
    assert ex["label"] == "ex-one" and ex["title"] == "One"
    assert ex["commands"] == [{"profile": "default", "chapters": ["size"],
                               "overrides": {"block_kind": "all", "n_lab_per_text": 24}}]
    assert not uses_lab("size", ex) and uses_lab("size", exercises(FIXTURE.replace(
        "n_lab_per_text=24", "models=lab:wide-32"))[0])
    bad = exercises(FIXTURE.replace("block_kind=all", "block_kinds=all"))[0]["commands"][0]
    with pytest.raises(ParameterError, match="block_kinds"):
        check_overrides(["size"], bad["profile"], bad["overrides"])
    wrong_value = exercises(FIXTURE.replace("block_kind=all", "block_kind=both"))[0]["commands"][0]
    with pytest.raises(ParameterError, match="block_kind"):
        check_overrides(["size"], wrong_value["profile"], wrong_value["overrides"])
