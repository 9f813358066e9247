"""The book's chapters: which package declares each one's parameters, and the checks
that need to know them all.

Each chapter's package declares its parameters in one
:class:`~analysis.params.Declaration` named ``PARAMS`` (the lab page's is
:data:`analysis.lab.profiles.PARAMS`), and may give a ``plan(params)`` for the cost
preview (:func:`analysis.book.plan.chapter_plan`). This module maps a chapter's name
to its package, imported here like any other import (so the layer contract in
``pyproject.toml`` sees these edges), and:

* ``scripts/execute_chapters.py`` checks every ``-p`` before any kernel starts
  (:func:`check_overrides`) and answers ``--list-params CHAPTER``
  (:func:`declaration`, then :meth:`~analysis.params.Declaration.describe`);
* the how-to page's parameter tables (``book/_ext/book_tables.py``) read
  :func:`declaration` too.

What a parameter is and how one is checked stays in :mod:`analysis.params`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from analysis import distributional, entropy, phrases, predicting, size
from analysis.lab import profiles as lab
from analysis.params import Declaration, ParameterError, check_profile, suggest

#: chapter name -> the package holding its ``PARAMS`` (and its ``plan``, when it has one)
CHAPTER_MODULES: dict[str, ModuleType] = {
    "phrases": phrases,
    "lab": lab,
    "size": size,
    "entropy": entropy,
    "predicting": predicting,
    "distributional": distributional,
}


def chapter_module(chapter: str) -> ModuleType:
    """The package of ``chapter``, or a :class:`ParameterError` naming the chapters."""
    if chapter not in CHAPTER_MODULES:
        raise ParameterError(
            f"unknown chapter {chapter!r}{suggest(chapter, list(CHAPTER_MODULES))}. "
            f"Chapters: {', '.join(CHAPTER_MODULES)}")
    return CHAPTER_MODULES[chapter]


def declaration(chapter: str) -> Declaration:
    """The declaration of ``chapter``, or a :class:`ParameterError` naming the chapters."""
    return chapter_module(chapter).PARAMS


def check_overrides(chapters: Sequence[str], profile: str, overrides: Mapping[str, Any]
                    ) -> dict[str, dict[str, Any]]:
    """Check ``-p`` overrides against the selected chapters before any kernel starts.

    Every override must be declared by at least one selected chapter (else an
    error with the nearest declared names); each chapter that declares it must
    accept its value. Returns, per chapter, the overrides it declares (the
    others are not passed to it).
    """
    check_profile(profile)
    decls = {c: declaration(c) for c in chapters}
    declared = sorted({n for d in decls.values() for n in d.names})
    for name in overrides:
        if name == "profile":
            raise ParameterError("set the profile with --profile, not -p profile=...")
        if name not in declared:
            raise ParameterError(
                f"unknown parameter {name!r}: no selected chapter ({', '.join(chapters)}) declares it"
                f"{suggest(name, declared)}. Declared: {', '.join(declared)}")
    per_chapter = {}
    for chapter, decl in decls.items():
        mine = {k: v for k, v in overrides.items() if k in decl.names}
        try:
            decl.resolve(profile, **mine)
        except ParameterError as err:
            raise ParameterError(f"chapter {chapter}: {err}") from None
        per_chapter[chapter] = mine
    return per_chapter
