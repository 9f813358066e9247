"""The cells a reader sees run on their own.

Taken in order after the parameters cell and the chapter's setup (the hidden
setup cell's ``import`` lines, ``from analysis.book.preamble import *`` read as the
preamble's public names, and the line that validates the parameters,
``params = <chapter>.PARAMS.from_namespace(globals())``, the parameters' other
half), the visible code cells of a chapter (those without a
``remove-cell`` or ``remove-input`` tag) must define every name they read: a reader
who copies them gets the method, not a ``NameError``. Checked statically with
``ast``: a name read (not a builtin, not a local of a comprehension, lambda or
function, not an attribute) must have been assigned or imported by the parameters
cell, the setup, an earlier visible cell or earlier in the same cell. Every other
name the setup cell assigns must be assigned again, or instead, in a visible cell.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))
#: tags that hide a cell's source from the page
HIDDEN = {"remove-cell", "remove-input"}
PREAMBLE = "analysis.book.preamble"
#: names a kernel provides without an import
KNOWN = set(dir(builtins)) | {"get_ipython", "display"}
MAGIC = re.compile(r"^\s*[%!]")
#: the setup cell's statements that count besides its imports: ``x = <...>.from_namespace(...)``
PARAMETER_CALL = "from_namespace"


def star_names(module: str) -> set[str]:
    """What ``from module import *`` binds: ``__all__``, else every public name."""
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    return set(names) if names is not None else {n for n in vars(mod) if not n.startswith("_")}


def parse(source: str) -> ast.Module:
    """A cell's code, its IPython magics and shell lines left out."""
    return ast.parse("\n".join("" if MAGIC.match(line) else line for line in source.splitlines()))


class Names(ast.NodeVisitor):
    """Walks code in execution order: binds what it assigns or imports into
    ``defined`` and records, in order, each name read before anything bound it."""

    def __init__(self, defined: set[str]):
        self.defined = defined
        self.scopes: list[tuple[str, set[str]]] = []  # (kind, names) of the enclosing local scopes
        self.missing: list[str] = []

    def read(self, name: str) -> None:
        known = name in self.defined or name in KNOWN or any(name in s for _, s in self.scopes)
        if not known and name not in self.missing:
            self.missing.append(name)

    def bind(self, name: str, walrus: bool = False) -> None:
        scopes = [s for kind, s in self.scopes if not (walrus and kind == "comprehension")]
        (scopes[-1] if scopes else self.defined).add(name)

    def local_scope(self, kind: str, names=()):
        self.scopes.append((kind, set(names)))

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.bind(node.id)
        else:  # Load, and Del (a name must exist to be deleted)
            self.read(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.read(node.target.id)
        self.visit(node.target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bind(node.target.id, walrus=True)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bind(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                for name in star_names(node.module):
                    self.bind(name)
            else:
                self.bind(alias.asname or alias.name)

    def _arguments(self, args: ast.arguments) -> list[str]:
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
        return [a.arg for a in every]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        params = self._arguments(node.args)
        self.bind(node.name)
        # every name the body assigns is local to the function, wherever it is assigned
        local = {n.id for stmt in node.body for n in ast.walk(stmt)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.local_scope("function", [*params, *local])
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.local_scope("function", self._arguments(node.args))
        self.visit(node.body)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr)
        self.bind(node.name)
        self.local_scope("class")
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def _comprehension(self, node, *results: ast.expr) -> None:
        # the first iterable is evaluated outside the comprehension's scope
        self.visit(node.generators[0].iter)
        self.local_scope("comprehension")
        for i, gen in enumerate(node.generators):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        for result in results:
            self.visit(result)
        self.scopes.pop()

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, node.elt)

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, node.key, node.value)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self.bind(node.rest)


@dataclass(frozen=True)
class Missing:
    """A visible cell that reads names nothing before it defined."""

    cell: int  # the cell's index in the notebook
    head: str  # its first line
    names: tuple[str, ...]

    def __str__(self) -> str:
        return f"cell {self.cell} ({self.head!r}) reads {', '.join(self.names)}"


def _tags(cell) -> set[str]:
    return set(cell.metadata.get("tags", []))


def _imports_preamble(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.ImportFrom) and s.module == PREAMBLE for s in tree.body)


def _setup(stmt: ast.stmt) -> bool:
    """Whether a statement of the setup cell counts: an import, or the validation of
    the parameters."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    call = stmt.value if isinstance(stmt, ast.Assign) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == PARAMETER_CALL)


def undefined_names(notebook) -> list[Missing]:
    """The visible cells of a notebook (jupytext) that read a name that neither the
    parameters cell, the setup cell's imports and parameter validation, nor an
    earlier visible cell (or an earlier line of the same cell) defined."""
    code = [(i, c) for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    trees = {i: parse(c.source) for i, c in code}
    parameters = [i for i, c in code if "parameters" in _tags(c)]
    preamble = [i for i, _ in code if _imports_preamble(trees[i])]
    if len(parameters) != 1 or len(preamble) != 1:
        raise ValueError(f"expected one parameters cell and one preamble cell, found {len(parameters)} "
                         f"and {len(preamble)}")
    defined: set[str] = set()
    Names(defined).visit(trees[parameters[0]])
    setup = [s for s in trees[preamble[0]].body if _setup(s)]
    Names(defined).visit(ast.Module(body=setup, type_ignores=[]))
    out = []
    for i, cell in code:
        if _tags(cell) & HIDDEN:
            continue
        names = Names(defined)
        names.visit(trees[i])
        if names.missing:
            head = next((line for line in cell.source.splitlines() if line.strip()), "")
            out.append(Missing(i, head, tuple(names.missing)))
    return out


# -- the checker on small notebooks -----------------------------------------------------------

SYNTHETIC = textwrap.dedent('''\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---

    # A chapter

    ```{code-cell} ipython3
    :tags: [parameters, remove-cell]

    profile = "default"
    n = None
    ```

    ```{code-cell} ipython3
    :tags: [remove-cell]

    from analysis.book.preamble import *
    import json as js
    from analysis.core import claims

    params = claims.PARAMS.from_namespace(globals())
    secret = 3
    ```

    Some prose.

    ```{code-cell} ipython3
    %matplotlib inline
    rows = [i * k for i in range(n or 3) for k in range(i)]
    square = lambda x: x * x
    total = sum(square(r) for r in rows if r) + len(profile) + len(params)
    frame = pd.DataFrame({"r": rows}).assign(s=lambda f: f.r * 2)
    ```

    ```{code-cell} ipython3
    :tags: [remove-input]

    hidden = secret + undefined_anywhere
    ```

    ```{code-cell} ipython3
    :tags: [hide-input]

    total += 1
    report.glue_text(total=total, status=claims.REPRODUCED, text=js.dumps(frame.shape))
    if (best := max(rows)) > 2:
        display(Markdown(f"{best:.1f}"))
    ```
''')


def _notebook(text: str):
    return jupytext.reads(text, fmt="md:myst")


def test_a_notebook_whose_visible_cells_run_on_their_own_passes():
    assert undefined_names(_notebook(SYNTHETIC)) == []


def test_the_check_names_the_cell_and_the_names_a_hidden_cell_or_later_one_sets():
    text = SYNTHETIC.replace("total += 1", "total += secret + later + frame.secret_attribute") + (
        "\n```{code-cell} ipython3\nlater = [x for x in rows]\nx + hidden\n```\n")
    found = undefined_names(_notebook(text))
    assert [(m.cell, m.names) for m in found] == [(6, ("secret", "later")), (7, ("x", "hidden"))]
    assert str(found[0]) == "cell 6 ('total += secret + later + frame.secret_attribute') reads secret, later"


def test_a_name_read_before_its_assignment_in_the_same_cell_is_missing():
    text = SYNTHETIC.replace("square = lambda x: x * x", "rows = rows + extra\nextra = 1\n"
                             "square = lambda x: x * x")
    [missing] = undefined_names(_notebook(text))
    assert missing.names == ("extra",)


def test_the_parameters_and_the_imports_and_validation_of_the_setup_cell_are_the_only_hidden_names():
    # the setup cell's other assignments do not count: a reader who copies the visible cells lacks them
    text = SYNTHETIC.replace("len(profile)", "len(profile) + secret")
    [missing] = undefined_names(_notebook(text))
    assert missing.names == ("secret",)
    assert "glue_figure" in star_names(PREAMBLE) and "plt" in star_names(PREAMBLE)


# -- the chapters -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_visible_cells_define_every_name_they_read(path):
    found = undefined_names(jupytext.read(path))
    if found:
        pytest.fail(f"{path.stem}: visible cells read names that only a hidden cell (or none) sets; "
                    f"assign them in a visible cell:\n" + "\n".join(map(str, found)), pytrace=False)
