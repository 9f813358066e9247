"""Strict JSON: what the project writes is JSON any reader parses.

Python's :mod:`json` writes ``NaN`` and ``Infinity`` by default, which are not
JSON: a reader in another language (``JSON.parse``, ``jq``, serde) fails on them.
Every JSON the project writes (``results/*.json``, glued values, bench records,
the executed notebooks' metadata, the query cache's journal) goes through
:func:`dumps` or :func:`write`: a missing or non-finite number is written as
``null``, and ``allow_nan=False`` makes any that slipped through an error instead
of invalid output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def finite(obj: Any) -> Any:
    """``obj`` with every NaN, infinity or missing value (``pd.NA``, ``NaT``) as None;
    NumPy scalars become Python numbers, tuples and sets become lists. Dicts, lists
    and other values are copied or returned as they are."""
    if obj is None or isinstance(obj, str | bool | int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [finite(v) for v in obj]
    item = getattr(obj, "item", None)  # a NumPy scalar
    if callable(item) and getattr(obj, "shape", None) == ():
        return finite(item())
    if type(obj).__name__ in ("NAType", "NaTType"):
        return None
    return obj


def dumps(obj: Any, **kwargs) -> str:
    """``json.dumps`` of :func:`finite` of ``obj`` with ``allow_nan=False`` (other
    keyword arguments as for ``json.dumps``)."""
    return json.dumps(finite(obj), allow_nan=False, **kwargs)


def write(path: str | Path, obj: Any, *, indent: int | None = 1, newline: bool = True, **kwargs) -> Path:
    """Write ``obj`` to ``path`` as strict JSON (:func:`dumps`), indented by ``indent``,
    with a final newline; return the path."""
    path = Path(path)
    path.write_text(dumps(obj, indent=indent, **kwargs) + ("\n" if newline else ""))
    return path


def loads(text: str) -> Any:
    """Parse strict JSON: ``NaN``, ``Infinity`` and ``-Infinity`` are errors, as in
    every other language's parser."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)
