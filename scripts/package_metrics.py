"""The package's shape in numbers: its largest module, its longest function and
its internal function-local imports (the limits ``tests/test_layout.py`` enforces).

    python scripts/package_metrics.py [SRC]     # default: src/analysis
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


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


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "src/analysis"))
