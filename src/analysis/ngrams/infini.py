"""∞-gram counts from a local infini-gram suffix-array index of a corpus.

The source's baseline is the ∞-gram LM of Liu et al. (2024), which needs
token-level counts of arbitrary length from a suffix array; the source used the
public infini-gram API over the Pile (:mod:`analysis.ngrams.infini_api`), the lab
indexes its own corpus in the lab tokenizer here.

**∞-gram denominators.** infini-gram counts a context wherever it occurs, also
at the end of a document (then followed by the separator); with an empty
context the denominator is the number of tokens plus documents.

:func:`build_index` writes an index folder (cached under
:func:`analysis.core.cache.artifact_path`) and runs the infini-gram indexer in
a subprocess; the rest only reads.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from analysis.core import jsonio
from analysis.core.cache import artifact_path, stable_hash
from analysis.ngrams.grams import NgramError

#: infini-gram's document separator for 2-byte token ids
DOC_SEP = b"\xff\xff"
#: files an infini-gram index (one shard) must hold
INDEX_FILES = ("tokenized.0", "offset.0", "table.0")
#: bumped when the index layout or its inputs change, so cached indexes are rebuilt
INDEX_VERSION = "ngrams-infini-1"
_DONE = "NGRAMS_INDEX.json"
#: largest token id a 2-byte index holds (65535 is the separator)
_MAX_TOKEN_ID = 0xFFFE
#: words the engine looks for anywhere in a file's *path* to tell an index's files
#: apart: a folder above the index whose name holds one of them (``tables``,
#: ``stable``, a test named ``test_..._table_...``) made the engine crash with a
#: segmentation fault when it opened the index (measured with infini-gram 2.6.0:
#: ``table``, ``tokenized`` and ``metadata`` crash; ``offset`` and ``unigram`` do
#: not). :func:`open_index` then opens the folder through a link whose path holds none.
ENGINE_PATH_WORDS = ("tokenized", "table", "offset", "metadata", "unigram")


@dataclass(frozen=True)
class InfiniIndex:
    """An opened infini-gram index: its folder and the engine over it."""

    folder: Path
    engine: Any
    meta: dict


class InfgramProb(NamedTuple):
    """One ∞-gram next-token probability: ``cont_cnt / prompt_cnt`` on the longest found context."""

    prob: float
    prompt_cnt: int
    cont_cnt: int
    suffix_len: int


def _tokenizer_key(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return stable_hash(backend.to_str())
    return stable_hash(sorted(tokenizer.get_vocab().items()))


def index_path(texts: Sequence[str], tokenizer) -> Path:
    """Artifact folder of the infini-gram index of ``texts`` in ``tokenizer``."""
    return artifact_path(
        "infini-gram",
        {"texts": stable_hash(list(texts)), "tokenizer": _tokenizer_key(tokenizer), "code": INDEX_VERSION},
    )


def write_tokenized(token_ids: Iterable[Sequence[int]], folder: str | os.PathLike) -> tuple[int, int]:
    """Write ``tokenized.0`` and ``offset.0`` of an infini-gram (v4, u16) index.

    ``tokenized.0`` holds every document as ``b'\\xff\\xff'`` followed by its token
    ids as little-endian uint16; ``offset.0`` holds each document's byte offset
    into it as a little-endian uint64 (the layout of ``infini_gram.indexing``).

    Returns
    -------
    (n_docs, n_tokens)
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pos = n_docs = n_tokens = 0
    with open(folder / "tokenized.0", "wb") as ds, open(folder / "offset.0", "wb") as od:
        for ids in token_ids:
            arr = np.asarray(ids, dtype=np.int64)
            if arr.size and (arr.min() < 0 or arr.max() > _MAX_TOKEN_ID):
                raise NgramError(f"token ids must be in 0..{_MAX_TOKEN_ID} for a u16 index, got {arr.max()}")
            blob = DOC_SEP + arr.astype("<u2").tobytes()
            od.write(np.array([pos], dtype="<u8").tobytes())
            ds.write(blob)
            pos += len(blob)
            n_docs += 1
            n_tokens += arr.size
    return n_docs, n_tokens


def _ulimit() -> int:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1_048_576 if hard == resource.RLIM_INFINITY else int(min(hard, 1_048_576))


def build_index(
    texts: Sequence[str],
    tokenizer,
    folder: str | os.PathLike | None = None,
    *,
    cpus: int | None = None,
    mem_gib: int = 4,
) -> Path:
    """Build (once) the infini-gram index of ``texts`` tokenized by ``tokenizer``.

    The documents are encoded without special tokens, written by
    :func:`write_tokenized`, and the suffix array (``table.0``) is built by the
    package's own indexer (``python -m infini_gram.indexing``, which skips its
    hub-bound tokenizing step when both files exist), with ``--ulimit`` set to
    the machine's hard limit on open files (at most 2^20).

    Parameters
    ----------
    texts : sequence of str
        The documents (for the lab: ``corpus.training_texts()``, the stream).
    tokenizer
        A ``transformers`` tokenizer whose ids fit in 0..65534.
    folder : path, optional
        Where the index goes; default :func:`index_path` (the artifact cache).
        An existing complete index there is reused.
    cpus : int, optional
        Indexer processes; default 1 below 64 MiB of tokens (its concat step
        failed on a 34-byte input split over 2 jobs; the lab corpus, 1.6 MB,
        builds in about 1 s either way), else up to 8.
    mem_gib : int
        Memory the indexer may plan for.

    Returns
    -------
    pathlib.Path
        The index folder (``tokenized.0``, ``offset.0``, ``table.0`` and a
        ``NGRAMS_INDEX.json`` with sizes and build time).
    """
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if len(tokenizer) > _MAX_TOKEN_ID:
        raise NgramError(
            f"tokenizer vocabulary ({len(tokenizer)}) must be at most {_MAX_TOKEN_ID} for a u16 index"
        )
    folder = Path(folder) if folder is not None else index_path(texts, tokenizer)
    if (folder / _DONE).exists() and all((folder / f).exists() for f in INDEX_FILES):
        return folder
    start = time.perf_counter()
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    n_docs, n_tokens = write_tokenized(ids, tmp)
    ds_size = (tmp / "tokenized.0").stat().st_size
    if cpus is None:
        cpus = 1 if ds_size < 64 * 2**20 else max(1, min(8, os.cpu_count() or 1))
    _run_indexer(tmp, ds_size, cpus, mem_gib)
    eos = tokenizer.eos_token_id
    meta = {
        "n_docs": n_docs, "n_tokens": n_tokens, "bytes": ds_size, "cpus": cpus,
        "eos_token_id": int(eos) if eos is not None else 0, "vocab_size": len(tokenizer),
        "build_seconds": round(time.perf_counter() - start, 3), "code": INDEX_VERSION,
    }
    (tmp / _DONE).write_text(jsonio.dumps(meta))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def _run_indexer(folder: Path, ds_size: int, cpus: int, mem_gib: int) -> None:
    """Build ``table.0`` (the suffix array) next to ``tokenized.0`` in ``folder``
    with ``python -m infini_gram.indexing``; a failed run removes the folder and
    raises with the indexer's output."""
    cmd = [
        sys.executable, "-m", "infini_gram.indexing", "--data_dir", str(folder), "--save_dir", str(folder),
        "--version", "4", "--token_dtype", "u16", "--cpus", str(cpus), "--mem", str(mem_gib),
        "--ulimit", str(_ulimit()),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True)
    ratio = int(np.ceil(np.log2(ds_size) / 8))
    table = folder / "table.0"
    expected = ds_size // 2 * ratio
    if run.returncode != 0 or not table.exists() or table.stat().st_size != expected:
        tail = (run.stdout + run.stderr)[-2000:]
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(
            f"infini-gram indexer failed (rc={run.returncode}, table.0 expected {expected} bytes): {tail}"
        )


def open_index(folder: str | os.PathLike, **engine_kwargs) -> InfiniIndex:
    """Open the infini-gram index in ``folder``.

    ``engine_kwargs`` go to :class:`infini_gram.engine.InfiniGramEngine`. Its
    prefetch depths default to 0 here: prefetching pays off for indexes on disk
    far larger than the lab's, and made queries 2-3x slower on the lab corpus
    (measured: 3.5k vs 12k counts/s, 1.5k vs 3.9k ``infgram_prob``/s on 2 cores).

    Raises
    ------
    NgramError
        If the folder or one of :data:`INDEX_FILES` is missing (build it with
        :func:`build_index`).
    """
    folder = Path(folder)
    missing = [f for f in INDEX_FILES if not (folder / f).exists()]
    if not folder.is_dir() or missing:
        raise NgramError(
            f"no infini-gram index in folder {str(folder)!r} "
            f"(missing: {missing if folder.is_dir() else 'the folder'}); "
            "build it with build_index(texts, tokenizer, folder)"
        )
    from infini_gram.engine import InfiniGramEngine  # optional (Linux x86-64 only), loads a C++ engine

    meta = json.loads((folder / _DONE).read_text()) if (folder / _DONE).exists() else {}
    options = dict(ds_prefetch_depth=0, sa_prefetch_depth=0, od_prefetch_depth=0) | engine_kwargs
    eos = int(meta.get("eos_token_id", 0))
    engine = InfiniGramEngine(index_dir=str(engine_folder(folder)), eos_token_id=eos, **options)
    return InfiniIndex(folder, engine, meta)


def engine_folder(folder: str | os.PathLike) -> Path:
    """``folder`` as the engine may be given it: itself when no folder on its path
    holds one of :data:`ENGINE_PATH_WORDS`, else a link to it in a fresh temporary
    folder (removed when the process exits), whose path holds none.

    Raises
    ------
    NgramError
        When the temporary folder's own path holds one of the words (set ``TMPDIR``).
    """
    import atexit
    import tempfile

    folder = Path(folder).absolute()
    if not _holds_engine_word(folder):
        return folder
    tmp = Path(tempfile.mkdtemp(prefix="membook-index-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    link = tmp / "index"
    if _holds_engine_word(link):
        raise NgramError(f"the infini-gram engine cannot open an index whose path holds one of "
                         f"{list(ENGINE_PATH_WORDS)}: {str(folder)!r}, and the temporary folder {str(tmp)!r} "
                         "holds one too; set TMPDIR to a folder whose path holds none")
    link.symlink_to(folder, target_is_directory=True)
    return link


def _holds_engine_word(folder: Path) -> bool:
    return any(word in str(folder) for word in ENGINE_PATH_WORDS)


def _ids(seq: Sequence[int], name: str) -> list[int]:
    out = [int(t) for t in seq]
    if any(t < 0 or t > _MAX_TOKEN_ID for t in out):
        raise NgramError(f"{name} must hold token ids in 0..{_MAX_TOKEN_ID}")
    return out


def token_count(index: InfiniIndex, ids: Sequence[int]) -> int:
    """Number of occurrences of the token sequence ``ids`` in the indexed documents (never across two)."""
    res = index.engine.count(_ids(ids, "ids"))
    if "error" in res:
        raise NgramError(res["error"])
    return int(res["count"])


def token_counts(index: InfiniIndex, seqs: Iterable[Sequence[int]]) -> np.ndarray:
    """:func:`token_count` of each sequence."""
    return np.array([token_count(index, s) for s in seqs], dtype=np.int64)


def infgram_prob(index: InfiniIndex, context: Sequence[int], token: int) -> InfgramProb:
    """The ∞-gram probability of ``token`` after ``context`` (infini-gram's ``infgram_prob``).

    The longest suffix of ``context`` found in the corpus (``suffix_len`` tokens,
    possibly 0) is the context; ``prob = cont_cnt / prompt_cnt`` with
    ``cont_cnt`` the occurrences of that suffix followed by ``token``.
    """
    res = index.engine.infgram_prob(_ids(context, "context"), int(_ids([token], "token")[0]))
    if "error" in res:
        raise NgramError(res["error"])
    return InfgramProb(
        float(res["prob"]), int(res["prompt_cnt"]), int(res["cont_cnt"]), int(res["suffix_len"])
    )


def infgram_logprob(index: InfiniIndex, context: Sequence[int], target: Sequence[int]) -> float:
    """Natural-log ∞-gram probability of ``target`` after ``context`` by the chain rule.

    Following the source, a token whose probability is 0 counts as probability
    1 (it is left out of the product); so the result is 0.0 when no token of
    ``target`` is ever seen after its longest found context.
    """
    return _chain_logprob(lambda ctx, t: infgram_prob(index, ctx, t), context, target)


def _chain_logprob(prob: Callable[[list[int], int], InfgramProb], context: Sequence[int],
                   target: Sequence[int]) -> float:
    """Sum of ``log prob(context + target[:i], target[i])``, zero probabilities counted as 1."""
    ctx = _ids(context, "context")
    total = 0.0
    for t in _ids(target, "target"):
        p = prob(ctx, t).prob
        if p > 0:
            total += float(np.log(p))
        ctx.append(t)
    return total
