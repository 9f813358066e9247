"""Chapter parameters, declared once.

Each chapter module declares its parameters in one :class:`Declaration` (name,
kind, allowed values or range, per-profile default, one-line help), named
``PARAMS`` in the module (``analysis.lab.profiles.PARAMS`` for the lab page). From
that one declaration:

* ``scripts/execute_chapters.py`` checks every ``-p`` before any kernel starts
  (:func:`analysis.book.chapters.check_overrides`, which knows the chapters) and
  answers ``--list-params CHAPTER`` (:meth:`Declaration.describe`);
* the chapter's first cell validates again (:meth:`Declaration.resolve`), for a
  reader running papermill directly;
* the chapter's Setup table is rendered from it (:meth:`Declaration.table`).

Every check raises :class:`ParameterError` naming the parameter and the allowed
values, and loads nothing.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.models import ModelError, check_model_name, describe_model_names
from analysis.models.api import api_key_problem, endpoint_problem
from analysis.models.hub import hub_model_problem

PROFILE_NAMES = ("smoke", "default", "paper")

KINDS = ("int", "float", "str", "choice", "models", "names", "file")


class ParameterError(ValueError):
    """A chapter parameter outside its allowed values."""


@dataclass(frozen=True)
class Param:
    """One chapter parameter.

    ``kind`` is one of :data:`KINDS`: ``int``/``float`` (with an inclusive
    ``lo``/``hi`` range), ``str``, ``choice`` (one of ``choices``), ``models``
    (model names, a list or a comma-separated string), ``names`` (a list of
    names, each one of ``choices`` when given) and ``file`` (a path that must exist
    and that ``parse`` reads without error). ``default`` is used when the
    chapter's profiles do not set the parameter; ``api`` says whether API
    models are accepted (chapters that need token-level access refuse them).
    ``check`` is an extra validation ``check(value, settings)`` that raises
    :class:`ParameterError` (for values whose allowed set depends on other
    settings, such as lab run names).
    """

    name: str
    help: str
    kind: str = "str"
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    default: Any = None
    nullable: bool = False
    api: bool = True
    parse: Callable[[str], Any] | None = None
    check: Callable[[Any, Mapping], None] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def allowed(self) -> str:
        """The allowed values, in words (for errors and ``--list-params``)."""
        if self.kind in ("int", "float"):
            lo = "-inf" if self.lo is None else f"{self.lo:g}"
            hi = "inf" if self.hi is None else f"{self.hi:g}"
            text = f"{'an integer' if self.kind == 'int' else 'a number'} in [{lo}, {hi}]"
        elif self.kind == "choice":
            text = "one of " + ", ".join(map(repr, self.choices))
        elif self.kind == "models":
            text = "comma-separated model names: " + describe_model_names(api=self.api)
        elif self.kind == "names":
            text = "a list or comma-separated string" + (
                f" of {', '.join(map(str, self.choices))}" if self.choices else " of names")
        elif self.kind == "file":
            text = "the path of an existing file"
        else:
            text = "a string"
        return text + (" (or None)" if self.nullable else "")

    def validate(self, value: Any, settings: Mapping | None = None) -> Any:
        """``value`` checked and normalized, or a :class:`ParameterError`."""
        if value is None:
            if self.nullable:
                return None
            raise ParameterError(f"{self.name} must be {self.allowed()}, got None")
        value = self._coerce(value)
        if self.check is not None:
            self.check(value, settings or {})
        return value

    def _bad(self, value: Any) -> ParameterError:
        return ParameterError(f"{self.name} must be {self.allowed()}, got {value!r}")

    def _coerce(self, value: Any) -> Any:
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._bad(value)
            self._range(value)
            return value
        if self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self._bad(value)
            self._range(value)
            return float(value)
        if self.kind == "choice":
            if value not in self.choices:
                raise self._bad(value)
            return value
        if self.kind in ("models", "names"):
            items = _as_list(value)
            if items is None or not items:
                raise self._bad(value)
            if self.kind == "models":
                for name in items:
                    check_model(name, param=self.name, api=self.api)
            elif self.choices:
                bad = [v for v in items if v not in self.choices]
                if bad:
                    raise ParameterError(f"{self.name}: unknown {bad}; allowed: {list(self.choices)}")
            return items
        if self.kind == "file":
            if not isinstance(value, (str, os.PathLike)) or not os.path.isfile(value):
                raise ParameterError(f"{self.name}: no such file {str(value)!r}")
            if self.parse is not None:
                try:
                    self.parse(value)
                except ParameterError:
                    raise
                except (ValueError, TypeError, KeyError, OSError) as err:
                    raise ParameterError(f"{self.name}: cannot read {value}: {err}") from None
            return str(value)
        if not isinstance(value, str):
            raise self._bad(value)
        return value

    def _range(self, value: float) -> None:
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise self._bad(value)


def _as_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


# False inside ``without_api_keys()``: a plan sends nothing, so it needs no key
_KEYS_NEEDED: contextvars.ContextVar[bool] = contextvars.ContextVar("keys_needed", default=True)


@contextlib.contextmanager
def without_api_keys():
    """Check parameters without requiring an API key in the environment (for
    ``execute_chapters.py --plan``, which sends nothing)."""
    token = _KEYS_NEEDED.set(False)
    try:
        yield
    finally:
        _KEYS_NEEDED.reset(token)


def check_model(name: str, *, param: str = "models", api: bool = True) -> str:
    """The backend of model ``name``, or a :class:`ParameterError` naming ``param``:
    an unknown name; an API model where the chapter needs token-level access, with
    no key in the environment (unless inside :func:`without_api_keys`), or with bad
    endpoint settings; a Hugging Face id that cannot be found (with a hint when
    ``api:`` was probably meant). Loads nothing."""
    try:
        backend = check_model_name(name)
    except ModelError as err:
        raise ParameterError(f"{param}: {err}") from None
    if backend == "api":
        if not api:
            raise ParameterError(
                f"{param}: {name!r} is an API model, but this chapter needs token-level access "
                "(log-probabilities or token ids of the model's own tokenizer); use a local model, "
                "a Hugging Face id or a lab run (lab:<run>)")
        problem = endpoint_problem()
        if problem:
            raise ParameterError(f"{param}: {name!r} cannot be reached as configured: {problem}")
        problem = api_key_problem() if _KEYS_NEEDED.get() else None
        if problem:
            raise ParameterError(f"{param}: {name!r} needs an API key: {problem}")
    elif backend == "local":
        problem = hub_model_problem(name)
        if problem:
            raise ParameterError(f"{param}: {problem}")
    return backend


def suggest(name: str, names: Sequence[str]) -> str:
    """``" (did you mean 'x'?)"`` for the nearest declared names, or ``""``."""
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


@dataclass(frozen=True)
class Declaration:
    """Every parameter of one chapter, and its per-profile settings.

    ``profiles`` maps each of :data:`PROFILE_NAMES` to the chapter's settings on
    that profile: the declared parameters' defaults and the internal settings a
    reader does not override (sample templates, seeds lists ...).
    """

    chapter: str
    profiles: Mapping[str, Mapping[str, Any]]
    params: tuple[Param, ...]
    profile_help: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        missing = [p for p in PROFILE_NAMES if p not in self.profiles]
        if missing:
            raise ParameterError(f"{self.chapter}: profiles {missing} are not declared")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names) or "profile" in names:
            raise ParameterError(f"{self.chapter}: parameter names must be unique and not 'profile'")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(
            f"unknown parameter {name!r} for chapter {self.chapter!r}{suggest(name, self.names)}. "
            f"Declared: {', '.join(('profile',) + self.names)}")

    def default(self, name: str, profile: str) -> Any:
        p = self.param(name)
        return self.profiles[profile].get(name, p.default)

    def resolve(self, profile: str = "default", **overrides: Any) -> dict[str, Any]:
        """The profile's settings with every non-None override applied, each checked.

        An unknown override name is an error with the nearest declared names.
        Returns a dict of all settings (declared and internal), with ``profile``.
        """
        check_profile(profile)
        for name in overrides:
            self.param(name)
        settings = dict(self.profiles[profile])
        for p in self.params:
            settings.setdefault(p.name, p.default)
        for name, value in overrides.items():
            if value is not None:
                settings[name] = value
        for p in self.params:
            settings[p.name] = p.validate(settings[p.name], settings)
        settings["profile"] = profile
        return settings

    def from_namespace(self, namespace: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`resolve` with ``profile`` and each declared name read from a
        namespace: a chapter's first cell calls ``PARAMS.from_namespace(globals())``.

        In a kernel, the names papermill injected (its ``# Parameters`` cell, found
        in the kernel's input history ``In``) are checked first: a name the chapter
        does not declare is an error with the nearest declared names, so
        ``papermill ... -p treshold 0.2`` stops here instead of running on the
        default threshold."""
        for name in injected_names(namespace.get("In")):
            if name != "profile":
                self.param(name)
        return self.resolve(namespace.get("profile", "default"),
                            **{n: namespace.get(n) for n in self.names})

    def table(self, settings: Mapping[str, Any], source: Mapping[str, str] | None = None) -> pd.DataFrame:
        """The Setup table: every declared parameter, its value in this run and its
        help (and the source study's setting, when given)."""
        rows = [{"parameter": "profile", "this run": settings["profile"],
                 "meaning": self.profile_help.get(settings["profile"], "the profile of this run")}]
        for p in self.params:
            rows.append({"parameter": p.name, "this run": _show(settings.get(p.name)), "meaning": p.help})
        out = pd.DataFrame(rows)
        if source is not None:
            out["source"] = [source.get(n, "") for n in out["parameter"]]
        return out

    def reference(self) -> pd.DataFrame:
        """The declaration as a table for the how-to page: one row per parameter
        (``profile`` first) with ``meaning``, ``allowed`` and its default on each
        profile (one column per profile)."""
        rows = [{"parameter": "profile", "meaning": "the preset the other parameters override",
                 "allowed": ", ".join(PROFILE_NAMES),
                 **{prof: self.profile_help.get(prof, "") for prof in PROFILE_NAMES}}]
        for p in self.params:
            rows.append({"parameter": p.name, "meaning": p.help, "allowed": p.allowed(),
                         **{prof: _show(self.default(p.name, prof)) for prof in PROFILE_NAMES}})
        return pd.DataFrame(rows, columns=["parameter", "meaning", "allowed", *PROFILE_NAMES])

    def describe(self) -> str:
        """Plain-text listing for ``execute_chapters.py --list-params``."""
        lines = [f"{self.chapter}: parameters (override with -p NAME=VALUE)", "",
                 f"  profile: one of {', '.join(PROFILE_NAMES)}"]
        for prof, text in self.profile_help.items():
            lines.append(f"      {prof}: {text}")
        for p in self.params:
            lines.append(f"  {p.name}: {p.help}")
            lines.append(f"      allowed: {p.allowed()}")
            defaults = {prof: _show(self.default(p.name, prof)) for prof in PROFILE_NAMES}
            if len(set(defaults.values())) == 1:
                lines.append(f"      default: {defaults['default']}")
            else:
                lines.append("      default: " + "; ".join(f"{k} {v}" for k, v in defaults.items()))
        return "\n".join(lines)


#: the first line of the cell papermill injects after a notebook's ``parameters`` cell
PAPERMILL_HEADER = "# Parameters"


def injected_names(history: Sequence[str] | None) -> list[str]:
    """The names assigned in papermill's injected-parameters cells, read from a
    kernel's input history (IPython's ``In``); ``[]`` outside a kernel or when
    papermill injected nothing. A cell whose source cannot be parsed is skipped."""
    names: list[str] = []
    for source in history or ():
        if not isinstance(source, str) or not source.lstrip().startswith(PAPERMILL_HEADER):
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def check_profile(profile: Any) -> str:
    """``profile`` if it is one of :data:`PROFILE_NAMES`, else a :class:`ParameterError`."""
    if profile not in PROFILE_NAMES:
        raise ParameterError(
            f"profile must be one of {list(PROFILE_NAMES)}, got {profile!r}"
            f"{suggest(str(profile), PROFILE_NAMES)}")
    return profile

