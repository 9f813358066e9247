"""Content-addressed artifact cache, the persistent query cache and memoized
computations: the names every layer imports, from the modules that hold them.

Two caches make re-runs cheap and interrupted runs resumable:

* the **artifact cache** (:mod:`analysis.core.artifacts`), a folder (``cache_dir()``)
  holding derived files such as converted model checkpoints and downloaded data, each
  under a key made of its inputs, so a stale artifact is never reused;
* the **query cache** (:mod:`analysis.core.query_cache`), one sqlite file shared by
  every model backend, keyed by backend, model, request kind, prompt and generation
  settings, and written as each answer arrives.

**Memoized computations** (:mod:`analysis.core.memo`) keep a value computed once per
inputs and code in the artifact cache.

Used by every chapter through :mod:`analysis.models` and :mod:`analysis.core.data`.
The query cache's tunables (``CLAIM_LEASE``, ``CLAIM_POLL``, ``BACKUP_EVERY``) are
read where they are used, in :mod:`analysis.core.query_cache`: set them there.
"""

from __future__ import annotations

from analysis.core.artifacts import (
    CACHE_ENV,
    MODEL_CACHE_ENV,
    MODEL_KINDS,
    artifact_path,
    cache_dir,
    cached_frame,
    stable_hash,
)
from analysis.core.memo import (
    MEMO_CACHE_ENV,
    MEMO_SUFFIX,
    MemoWarning,
    code_fingerprint,
    memo,
    memo_key,
    memo_path,
    memoized,
    value_fingerprint,
)
from analysis.core.query_cache import (
    QUERY_CACHE_ENV,
    RECOVER,
    CachedAnswer,
    CacheError,
    QueryCache,
    backup_path,
    check_file,
    close_connections,
    open_connections,
)

__all__ = [
    "CACHE_ENV", "MEMO_CACHE_ENV", "MEMO_SUFFIX", "MODEL_CACHE_ENV", "MODEL_KINDS", "QUERY_CACHE_ENV",
    "RECOVER", "CacheError", "CachedAnswer", "MemoWarning", "QueryCache", "artifact_path", "backup_path",
    "cache_dir", "cached_frame", "check_file", "close_connections", "code_fingerprint", "memo", "memo_key",
    "memo_path", "memoized", "open_connections", "stable_hash", "value_fingerprint",
]
