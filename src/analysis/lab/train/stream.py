"""What every process of a build reads rather than recomputes: the training stream of a
corpus, tokenized once (:func:`token_stream`), and any value kept in the artifact cache
under its inputs and the source of the code that computes it (:func:`cached_value`;
:func:`analysis.lab.ladder.profile_corpus` keeps the built corpus there).

Every run of a lab trains on the same stream, and under torchrun every process
needs it: tokenizing the GPU lab's corpus takes about 20 s, reading it back well
under a second. The stream is :func:`analysis.lab.train.order.tokenize_stream` of
the texts, cached under the hash of the texts themselves, the tokenizer's
fingerprint and the source of the tokenizing code, so a cached stream is the very
array tokenizing would give.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import platform
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.core.cache import artifact_path, stable_hash
from analysis.lab.train.order import tokenize_stream
from analysis.lab.train.runs import tokenizer_fingerprint


def source_fingerprint(modules: Iterable[str]) -> str:
    """Hash of the source files of ``modules`` (dotted names)."""
    blobs = []
    for name in modules:
        path = Path(importlib.import_module(name).__file__ or "")
        blobs.append([name, hashlib.sha256(path.read_bytes()).hexdigest()])
    return stable_hash(blobs)


def cached_value(kind: str, key: Mapping[str, Any], compute: Callable[[], Any],
                 code: Iterable[str] = ()) -> Any:
    """``compute()``'s value, computed once and then read from the artifact cache.

    Kept (pickled) under ``kind`` and the hash of ``key`` (every input of the
    computation), of the source of the modules ``code`` and of the versions of Python
    and NumPy: a change to any recomputes. Written under a temporary name and renamed,
    so a process reading it at the same time sees the whole file or none; a file that
    cannot be read is recomputed and replaced, with a warning.
    """
    full = {"key": dict(key), "code": source_fingerprint(code), "python": platform.python_version(),
            "numpy": np.__version__}
    path = artifact_path(kind, full).with_suffix(".pkl")
    if path.exists():
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except Exception as err:  # noqa: BLE001 - whatever broke the file, the value is recomputed
            warnings.warn(f"recomputing the unreadable {kind!r} value {path}: {err}", stacklevel=2)
    value = compute()
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    with open(tmp, "wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return value


def texts_fingerprint(texts: Sequence[str]) -> str:
    """Hash of ``texts``, in order (each text's length, then its UTF-8 bytes)."""
    digest = hashlib.sha256()
    for text in texts:
        blob = text.encode("utf-8")
        digest.update(len(blob).to_bytes(8, "little"))
        digest.update(blob)
    return digest.hexdigest()[:32]


def token_stream(texts: Sequence[str], tokenizer) -> np.ndarray:
    """:func:`tokenize_stream` of ``texts``, computed once per texts and tokenizer."""
    key = {"texts": texts_fingerprint(texts), "tokenizer": tokenizer_fingerprint(tokenizer)}
    return cached_value("lab-streams", key, lambda: tokenize_stream(texts, tokenizer),
                        code=("analysis.lab.train.order",))
