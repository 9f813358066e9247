"""Memoized computations: a value computed once per inputs and code, then read from
the artifact cache (:func:`memo`, :func:`memoized`), keyed by the content of its
inputs (:func:`value_fingerprint`) and the source of the code that computes it
(:func:`code_fingerprint`). Imported, like the rest of the caches, from
:mod:`analysis.core.cache`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core.artifacts import artifact_path, own_tmp, stable_hash


class MemoWarning(UserWarning):
    """A memoized value's file could not be read; it is recomputed and replaced."""


#: the suffix of a memoized value's file (a pickle)
MEMO_SUFFIX = ".memo.pkl"
#: where memoized values live, when set (default: the artifact cache); tests that
#: share a trained lab keep their own memos apart with it
MEMO_CACHE_ENV = "MEMBOOK_MEMO_CACHE"


def code_fingerprint(*modules) -> str:
    """Hash of the source files of ``modules`` (module objects or dotted names): the
    code part of a memo key, so an edit to the code that computes a value recomputes it."""
    import importlib

    blobs = []
    for module in modules:
        mod = importlib.import_module(module) if isinstance(module, str) else module
        path = Path(getattr(mod, "__file__", None) or "")
        if not path.is_file():
            raise ValueError(f"modules must be modules with a source file, got {module!r}")
        blobs.append([mod.__name__, hashlib.sha256(path.read_bytes()).hexdigest()])
    return stable_hash(blobs)


def value_fingerprint(value: Any) -> str:
    """Hash of the content of ``value``: a data frame or series (its columns, dtypes,
    index, every cell and its ``attrs``), a NumPy array, or a str, number, None, or a
    dict, list or tuple of these (a dict's items in their order), or a dataclass of
    these (such as a document index). Equal contents of the same types give equal
    hashes (a list of NumPy integers is not a list of ints); use it in a memo key for
    an input held in memory. Lists and dicts of plain values (str, int, float, bool,
    None), and columns of them or of such lists, are hashed at once as JSON."""
    import numpy as np

    def column(col: pd.Series):
        if col.dtype == object:  # cell by cell: pandas would hash the str() of a list or an array
            cells = col.tolist()
            if _is_plain(cells):
                return ["plain", _plain_hash(cells)]
            for kind in (list, tuple):  # cells that are all lists (or tuples) of plain items: one hash
                if all(type(c) is kind and _is_plain(c) for c in cells):
                    return [f"plain {kind.__name__}s", _plain_hash(cells)]
            return ["objects", [digest(x) for x in cells]]
        cells = pd.util.hash_pandas_object(col, index=False).to_numpy()
        return [str(col.dtype), hashlib.sha256(cells.tobytes()).hexdigest()]

    def digest(v):
        if isinstance(v, pd.DataFrame | pd.Series):
            frame = v.to_frame() if isinstance(v, pd.Series) else v
            return ["frame", type(v).__name__, list(map(str, frame.columns)), list(map(str, v.index.names)),
                    column(v.index.to_series(index=range(len(v)))),
                    [column(frame.iloc[:, i]) for i in range(frame.shape[1])],
                    json.dumps(v.attrs, sort_keys=True, default=str)]
        if isinstance(v, np.ndarray):
            if v.dtype == object:
                return ["objects", list(v.shape), [digest(x) for x in v.ravel().tolist()]]
            blob = np.ascontiguousarray(v).tobytes()
            return ["array", str(v.dtype), list(v.shape), hashlib.sha256(blob).hexdigest()]
        if isinstance(v, Mapping):  # in order: a function's output may follow its input's order
            if _is_plain(v.keys()) and _is_plain(v.values()):  # such as a vocabulary
                return ["plain dict", _plain_hash([[k, x] for k, x in v.items()])]
            return ["dict", [[digest(k), digest(x)] for k, x in v.items()]]
        if isinstance(v, list | tuple):
            if _is_plain(v):  # one hash of the whole list: a fast path for long lists of words or ids
                return [f"plain {type(v).__name__}", _plain_hash(v)]
            return [type(v).__name__, [digest(x) for x in v]]
        if isinstance(v, np.generic):
            return digest(v.item())
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields = dataclasses.fields(v)
            return [type(v).__qualname__, [[f.name, digest(getattr(v, f.name))] for f in fields]]
        if v is None or isinstance(v, str | bool | int | float):
            return [type(v).__name__, repr(v)]
        raise TypeError(f"value_fingerprint cannot hash a value of type {type(v).__name__}; give it frames, "
                        "arrays, str, numbers, None, or dicts, lists, tuples and dataclasses of these")

    return stable_hash(digest(value), length=32)


_PLAIN = (str, int, float, bool, type(None))


def _is_plain(items) -> bool:
    """Whether every item is exactly a str, int, float, bool or None (JSON keeps them apart)."""
    return all(type(x) in _PLAIN for x in items)


def _plain_hash(items) -> str:
    """Hash of a list of plain items (:func:`_is_plain`), or of lists of them, as JSON."""
    return hashlib.sha256(json.dumps(list(items), ensure_ascii=False).encode("utf-8")).hexdigest()


def memo_key(key: Mapping[str, Any], code: Iterable = ()) -> dict:
    """The whole key of a memoized value: ``key``, the fingerprint of ``code``
    (:func:`code_fingerprint`) and the versions of Python, NumPy and pandas (a value
    pickled by one pandas may not load in another)."""
    import platform

    import numpy as np

    code = list(code)
    return {"key": dict(key), "code": code_fingerprint(*code) if code else None,
            "python": platform.python_version(), "numpy": np.__version__, "pandas": pd.__version__}


def memo_path(kind: str, key: Mapping[str, Any], code: Iterable = ()) -> Path:
    """The file :func:`memo` keeps the value of ``kind``, ``key`` and ``code`` in: under
    ``$MEMBOOK_MEMO_CACHE`` when it is set, else in the artifact cache."""
    full = memo_key(key, code)
    root = os.environ.get(MEMO_CACHE_ENV)
    if not root:
        return artifact_path(kind, full).with_suffix(MEMO_SUFFIX)
    path = Path(root) / kind / f"{stable_hash(full)}{MEMO_SUFFIX}"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def memo(kind: str, key: Mapping[str, Any], compute, code: Iterable = ()) -> Any:
    """``compute()``'s value, computed once and then read from the artifact cache.

    The value (any picklable object: a data frame, a dict of them, a number) is
    kept in :func:`memo_path` of ``kind``, ``key`` and ``code``. ``key`` must hold
    every input of the computation (the fingerprint of the lab run or the corpus it
    reads, its parameters) and ``code`` the modules whose source computes it, so a
    change to any of them recomputes (:func:`memo_key`). The file is written under a
    temporary name and renamed, so a killed run never leaves half a value; a file
    that cannot be read (damaged, or written by an incompatible library) is
    recomputed and replaced, with a :class:`MemoWarning` naming it.
    """
    import warnings

    path = memo_path(kind, key, code)
    if path.exists():
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except Exception as exc:  # whatever broke the file, the value is recomputed
            warnings.warn(f"the memoized {kind!r} value in {path} could not be read ({type(exc).__name__}: "
                          f"{exc}); recomputing it and replacing the file", MemoWarning, stacklevel=2)
    value = compute()
    tmp = own_tmp(path)
    try:
        with open(tmp, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return value


def memoized(kind: str, code: Iterable = (), packages: Iterable[str] = ()):
    """Decorator: the function, computed once per arguments through :func:`memo`.

    The key is the function's name, the content of its arguments
    (:func:`value_fingerprint`: data frames, arrays, numbers, strings, and dicts,
    lists, tuples and dataclasses of them; a ``range`` counts as the list it holds)
    and the installed versions of ``packages`` (distribution names, such as
    ``"scikit-learn"``); the code is the function's own module and ``code``. For
    pure functions of in-memory tables, whose contents carry the lab runs and the
    corpus they come from. The function itself stays available as ``.compute``.
    """
    import functools
    from importlib.metadata import version

    modules, packages = list(code), list(packages)

    def wrap(function):
        @functools.wraps(function)
        def inner(*args, **kwargs):
            key = {"function": f"{function.__module__}.{function.__qualname__}",
                   "args": value_fingerprint([_as_listed(a) for a in args]),
                   "kwargs": value_fingerprint({k: _as_listed(v) for k, v in kwargs.items()}),
                   "packages": {p: version(p) for p in packages}}
            return memo(kind, key, lambda: function(*args, **kwargs), code=[function.__module__, *modules])

        inner.compute = function
        inner.__doc__ = (f"{function.__doc__ or ''}\n\n    Computed once per arguments, then read from the "
                         "artifact cache (:func:`analysis.core.cache.memoized`).")
        return inner

    return wrap


def _as_listed(value: Any) -> Any:
    """A ``range`` as the list it holds (for :func:`value_fingerprint`); anything else as it is."""
    return list(value) if isinstance(value, range) else value
