"""Hugging Face hub ids: their revision suffix, and whether one can be loaded here.

Light on purpose (no torch, no transformers): the chapters' parameter check
(:mod:`analysis.params`) asks :func:`hub_model_problem` before any kernel starts,
so that ``models=openai/gpt-4o`` (an API model written without its ``api:``
prefix) fails at once, with the hint, rather than in the middle of a chapter.
"""

from __future__ import annotations

import os
from pathlib import Path

OFFLINE_ENV = "HF_HUB_OFFLINE"
#: seconds the parameter check waits for the hub to say whether a model exists
HUB_TIMEOUT = 10.0


def split_revision(name: str) -> tuple[str, str | None]:
    """``"org/model@rev"`` → ``("org/model", "rev")``; no ``@`` → ``(name, None)``."""
    base, sep, rev = name.rpartition("@")
    return (base, rev) if sep and base and rev else (name, None)


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` forbids the hub (only the local hub cache is read)."""
    return os.environ.get(OFFLINE_ENV, "").lower() in ("1", "true", "yes")


def hub_model_problem(name: str) -> str | None:
    """Why the Hugging Face id ``name`` (``org/model[@revision]``) cannot be loaded
    here, or None when it can (it is in the local hub cache, or the hub knows it).
    Built-in names and local folders are never a problem. The message ends with
    the ``api:`` hint, since an id such as ``openai/gpt-4o`` is most often an API
    model written without its prefix."""
    if "/" not in name or Path(name).expanduser().is_dir():
        return None
    from huggingface_hub import HfApi, try_to_load_from_cache  # installed with transformers
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    repo_id, revision = split_revision(name)
    cached = try_to_load_from_cache(repo_id, "config.json", cache_dir=os.environ.get("HF_HUB_CACHE"),
                                    revision=revision)
    if isinstance(cached, str):
        return None
    hint = (f" If you meant a model behind an OpenAI-compatible API, write 'api:{name}'; a local "
            "checkpoint is given by its folder.")
    if offline():
        return (f"{name!r} is not in the local Hugging Face cache, and {OFFLINE_ENV} is set, so it "
                f"cannot be downloaded.{hint}")
    try:
        HfApi().model_info(repo_id, revision=revision, timeout=HUB_TIMEOUT)
    except (RepositoryNotFoundError, RevisionNotFoundError):
        at = f" at revision {revision!r}" if revision else ""
        return f"the Hugging Face hub has no model {repo_id!r}{at}.{hint}"
    except Exception as err:  # noqa: BLE001 (any failure to reach the hub means it cannot be fetched)
        return (f"{name!r} is not in the local Hugging Face cache, and the hub cannot be reached to fetch "
                f"it ({type(err).__name__}).{hint}")
    return None
