"""The package's shape in numbers: its largest module, its longest function and
its internal function-local imports (the limits ``tests/test_layout.py`` enforces),
then, per chapter, the code a reader sees against the code hidden from them.

    python scripts/package_metrics.py [SRC]     # default: src/analysis

Per chapter (``notebooks/<chapter>.md`` and its package ``src/analysis/<chapter>``):
code lines in visible cells and in hidden ones (``remove-cell`` or ``remove-input``;
blank and comment lines not counted), the names the package exports (those its
``__init__`` binds by a top-level import, :func:`exported`), and the lines of
English-producing code (its ``text*.py`` modules, blank lines not counted).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.S | re.M)
HIDDEN_TAGS = ("remove-cell", "remove-input")


def function_lengths(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            yield node.name, start, node.end_lineno - start + 1


def local_imports(tree: ast.AST, package: str = "analysis"):
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            top = (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else ""
            if isinstance(node, ast.ImportFrom) and (node.level or top == package):
                yield node.lineno
            elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == package for a in node.names):
                yield node.lineno


def cell_lines(md: str) -> tuple[int, int]:
    """Code lines (not blank, not a comment) in a MyST notebook's visible cells and
    in its hidden ones (tagged ``remove-cell`` or ``remove-input``)."""
    visible = hidden = 0
    for body in CELL.findall(md):
        lines = body.splitlines()
        meta = [x for x in lines if x.startswith(":")]
        code = [x for x in lines if x.strip() and not x.startswith(":") and not x.lstrip().startswith("#")]
        if any(tag in m for m in meta for tag in HIDDEN_TAGS):
            hidden += len(code)
        else:
            visible += len(code)
    return visible, hidden


def exported(package: Path) -> list[str]:
    """The names ``package/__init__.py`` binds by its top-level imports (``from ... import``
    and ``import`` statements, under their aliases): what the package exports."""
    tree = ast.parse((package / "__init__.py").read_text())
    names = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names += [a.asname or a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.asname or a.name.split(".")[0] for a in node.names]
    return names


def exported_names(package: Path) -> int:
    """How many names ``package/__init__.py`` exports (:func:`exported`)."""
    return len(exported(package))


def english_lines(package: Path) -> int:
    """Non-blank lines of the package's English-producing modules (``text*.py``)."""
    return sum(1 for p in package.glob("text*.py") for line in p.read_text().splitlines() if line.strip())


def chapter_metrics(root: Path) -> list[dict]:
    """One row per chapter notebook whose package exists under ``root``."""
    notebooks = root.parents[1] / "notebooks"
    rows = []
    for md in sorted(notebooks.glob("*.md")):
        package = root / md.stem
        if not package.is_dir():
            continue
        visible, hidden = cell_lines(md.read_text())
        rows.append({"chapter": md.stem, "visible": visible, "hidden": hidden,
                     "exported": exported_names(package), "english": english_lines(package)})
    return rows


def main(root: Path) -> None:
    modules, functions, imports = [], [], 0
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        tree = ast.parse(text)
        rel = path.relative_to(root.parent)
        modules.append((len(text.splitlines()), str(rel)))
        functions += [(n, f"{rel}:{line} {name}") for name, line, n in function_lengths(tree)]
        imports += len(set(local_imports(tree)))
    modules.sort(reverse=True)
    functions.sort(reverse=True)
    print(f"modules: {len(modules)}, lines: {sum(n for n, _ in modules)}")
    print("largest modules:", "; ".join(f"{p} {n}" for n, p in modules[:3]))
    print("longest functions:", "; ".join(f"{p} {n}" for n, p in functions[:3]))
    print(f"modules over 800 lines: {sum(n > 800 for n, _ in modules)}; "
          f"functions over 80 lines: {sum(n > 80 for n, _ in functions)}")
    print(f"internal function-local imports: {imports}")
    rows = chapter_metrics(root)
    print(f"{'chapter':16}{'visible':>9}{'hidden':>8}{'exported':>10}{'English':>9}")
    for r in rows:
        print(f"{r['chapter']:16}{r['visible']:9}{r['hidden']:8}{r['exported']:10}{r['english']:9}")
    print(f"{'all':16}{sum(r['visible'] for r in rows):9}{sum(r['hidden'] for r in rows):8}"
          f"{sum(r['exported'] for r in rows):10}{sum(r['english'] for r in rows):9}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "src/analysis"))
