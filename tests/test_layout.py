"""The package stays easy to find one's way in: small modules, short functions,
the layers of ``pyproject.toml`` kept, imports at the top.

* no module of ``src/analysis`` over :data:`MAX_MODULE_LINES` lines, no function over
  :data:`MAX_FUNCTION_LINES` (decorators and docstring included);
* ``lint-imports`` passes (the layer contract in ``pyproject.toml``);
* no function-local import of the package itself (``from analysis...``, ``import
  analysis...`` or a relative import inside a function), unless the import's line or
  the line above carries a comment saying why.

Each checker is tried first on a small package written here, broken on purpose.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "analysis"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@dataclass(frozen=True)
class Offender:
    path: Path
    line: int
    what: str
    lines: int = 0

    def show(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}: {self.what}"


def modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[Offender]:
    """Modules under ``root`` of more than ``limit`` lines."""
    out = []
    for path in modules(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(Offender(path, 1, f"module of {n} lines (limit {limit})", n))
    return out


def function_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """First line (the first decorator's, else the ``def``) and length of a function."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno - first + 1


def long_functions(root: Path, limit: int = MAX_FUNCTION_LINES) -> list[Offender]:
    """Functions and methods (nested ones too) of more than ``limit`` lines."""
    out = []
    for path in modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first, n = function_lines(node)
                if n > limit:
                    out.append(Offender(path, first, f"function {node.name} of {n} lines (limit {limit})", n))
    return sorted(out, key=lambda o: (str(o.path), o.line))


def _comment_lines(text: str) -> set[int]:
    """Line numbers that carry a comment (a whole-line or a trailing one)."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            lines.add(tok.start[0])
    return lines


def _internal(node: ast.Import | ast.ImportFrom, package: str) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or node.module == package or (node.module or "").startswith(package + ".")
    return any(a.name == package or a.name.startswith(package + ".") for a in node.names)


def local_imports(root: Path, package: str = "analysis") -> list[Offender]:
    """Imports of ``package`` (or relative ones) inside a function, without a comment
    on their lines or on the line above."""
    out = {}
    for path in modules(root):
        text = path.read_text(encoding="utf-8")
        comments = _comment_lines(text)
        for func in ast.walk(ast.parse(text, filename=str(path))):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if not isinstance(node, (ast.Import, ast.ImportFrom)) or not _internal(node, package):
                    continue
                if comments & set(range(node.lineno - 1, node.end_lineno + 1)):
                    continue
                what = ast.get_source_segment(text, node).splitlines()[0]
                out[(path, node.lineno)] = Offender(path, node.lineno, f"in {func.name}: {what}")
    return [out[k] for k in sorted(out, key=lambda k: (str(k[0]), k[1]))]


def report(offenders: list[Offender], root: Path) -> str:
    return "\n".join(o.show(root) for o in offenders)


# -- the checkers, on a small package broken on purpose -------------------------------------


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def broken(tmp_path) -> Path:
    """``pkg``: an 801-line module, an 800-line one, a function of 81 lines (with its
    decorator and docstring), one of 80, and function-local imports with and without
    a comment."""
    pkg = tmp_path / "pkg"
    _write(pkg, "__init__.py", "")
    _write(pkg, "big.py", "x = 1\n" * 801)
    _write(pkg, "fits.py", "x = 1\n" * 800)
    body = "".join(f"    a{i} = {i}\n" for i in range(77))
    doc = '    """Docstring."""\n'
    _write(pkg, "funcs.py", "import functools\n\n\n@functools.cache\ndef long():\n" + doc + body
           + "    return 0\n\n\ndef fits():\n" + doc + body + "    return 0\n")
    _write(pkg, "sub/__init__.py", "")
    _write(pkg, "sub/local.py", """\
        import json


        def bare():
            from pkg.funcs import fits
            return fits


        def relative():
            from .. import funcs
            return funcs


        def explained():
            # the model layer loads the index lazily
            from pkg.funcs import fits
            import torch  # noqa: F401  (a heavy optional dependency, not the package)
            return fits


        def trailing():
            import pkg.big  # noqa: F401  (only when asked)
            return json


        class Holder:
            def method(self):
                import pkg.fits as f
                return f
        """)
    return pkg


def test_the_size_checks_find_the_long_module_and_function(broken):
    assert [(o.path.name, o.lines) for o in long_modules(broken)] == [("big.py", 801)]
    [func] = long_functions(broken)
    assert (func.path.name, func.line, func.lines) == ("funcs.py", 4, 81)  # from the decorator on line 4
    assert report([func], broken.parent) == "pkg/funcs.py:4: function long of 81 lines (limit 80)"


def test_the_import_check_finds_uncommented_local_imports_of_the_package(broken):
    found = local_imports(broken, "pkg")
    assert [(o.path.name, o.line) for o in found] == [("local.py", 5), ("local.py", 10), ("local.py", 28)]
    assert found[0].show(broken.parent) == "pkg/sub/local.py:5: in bare: from pkg.funcs import fits"
    assert found[2].what == "in method: import pkg.fits as f"


# -- the package ------------------------------------------------------------------------------


def test_no_module_over_800_lines():
    if found := long_modules(PACKAGE):
        pytest.fail(f"split these {len(found)} modules:\n{report(found, ROOT)}", pytrace=False)


def test_no_function_over_80_lines():
    if found := long_functions(PACKAGE):
        pytest.fail(f"split these {len(found)} functions:\n{report(found, ROOT)}", pytrace=False)


def test_no_function_local_import_of_the_package():
    if found := local_imports(PACKAGE):
        pytest.fail(f"import these {len(found)} at the top of their module (or say why in a comment on "
                    f"the line above):\n{report(found, ROOT)}", pytrace=False)


# -- the layers -------------------------------------------------------------------------------


def lint_imports(cwd: Path, *args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


needs_import_linter = pytest.mark.skipif(
    not LINT_IMPORTS.exists(),
    reason=f"import-linter is not installed (no {LINT_IMPORTS}): pip install import-linter")


@needs_import_linter
def test_lint_imports_fails_on_an_upward_import(tmp_path):
    """The runner sees a broken contract: a lower layer that imports a higher one."""
    _write(tmp_path, "layered/__init__.py", "")
    _write(tmp_path, "layered/low.py", "from layered import high  # noqa: F401\n")
    _write(tmp_path, "layered/high.py", "")
    _write(tmp_path, ".importlinter", """\
        [importlinter]
        root_package = layered

        [importlinter:contract:layers]
        name = high above low
        type = layers
        containers = layered
        layers =
            high
            low
        """)
    proc = lint_imports(tmp_path, pythonpath=tmp_path)
    assert proc.returncode != 0 and "layered.low -> layered.high" in proc.stdout, proc.stdout + proc.stderr
    (tmp_path / "layered" / "low.py").write_text("")
    proc = lint_imports(tmp_path, pythonpath=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_import_linter
def test_lint_imports_passes():
    proc = lint_imports(ROOT)
    if proc.returncode != 0:
        pytest.fail(f"lint-imports (the contract in pyproject.toml):\n{proc.stdout}{proc.stderr}",
                    pytrace=False)
