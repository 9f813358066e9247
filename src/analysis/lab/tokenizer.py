"""The lab's tokenizer: a byte-level BPE trained on the lab corpus itself.

The lab's models are trained from scratch, so their vocabulary is fitted to the
corpus they see (as GPT-2's was to WebText) rather than borrowed from a real
model. Byte-level BPE never meets an unknown character, so every injected
sequence and every held-out text tokenizes losslessly. One special token,
``<|endoftext|>``, separates documents and serves as bos, eos and pad.

The trained tokenizer is an ordinary ``transformers`` fast tokenizer and is
saved next to every checkpoint, so a run folder loads with
``AutoTokenizer.from_pretrained`` (and with :class:`analysis.models.local.LocalModel`).
No special token is added when encoding: a training row starts with its first
text token, and so does a prompt.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from analysis.core.cache import artifact_path
from analysis.lab.config import LabConfigError

#: bumped when training or saving changes, so cached tokenizers are rebuilt
TOKENIZER_VERSION = 1
EOT = "<|endoftext|>"
_DONE = "TOKENIZER_DONE.json"


def train_tokenizer(texts: Sequence[str], vocab_size: int = 4096, seed: int = 0):
    """Train a byte-level BPE tokenizer on ``texts``.

    Parameters
    ----------
    texts
        The training documents (the corpus as it will be trained on).
    vocab_size
        Target vocabulary size, including the 256 byte tokens and ``<|endoftext|>``;
        a small corpus may stop with fewer merges.
    seed
        Recorded in the tokenizer's ``init_kwargs``; BPE training has no randomness
        (merge ties are broken by the pair itself), so the result depends on
        ``texts`` and ``vocab_size`` alone.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        With ``<|endoftext|>`` as bos, eos and pad token.
    """
    if not isinstance(vocab_size, int) or vocab_size < 258:
        raise LabConfigError(
            f"vocab_size must be an integer >= 258 (256 bytes + {EOT} + 1), got {vocab_size!r}"
        )
    if not texts:
        raise LabConfigError("train_tokenizer needs at least one text")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer, length=len(texts))
    return _wrap(tok, seed)


def _wrap(tok, seed: int):
    from transformers import PreTrainedTokenizerFast  # heavy: loaded only when a tokenizer is made

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, pad_token=EOT)
    fast.init_kwargs["lab_seed"] = seed
    return fast


def save_tokenizer(tokenizer, path: str | os.PathLike) -> Path:
    """Write ``tokenizer`` to the folder ``path`` with ``save_pretrained``; return it."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(path)
    return path


def load_tokenizer(path: str | os.PathLike):
    """Load a tokenizer saved by :func:`save_tokenizer` (or any run folder)."""
    from transformers import AutoTokenizer  # heavy: loaded only when a tokenizer is read

    return AutoTokenizer.from_pretrained(str(path))


def tokenizer_path(corpus_key: str, vocab_size: int = 4096) -> Path:
    """Artifact folder of the tokenizer trained on the corpus ``corpus_key``."""
    return artifact_path(
        "lab-tokenizers", {"corpus_key": corpus_key, "vocab_size": vocab_size, "code": TOKENIZER_VERSION}
    )


def get_tokenizer(texts: Sequence[str], corpus_key: str, vocab_size: int = 4096):
    """The tokenizer of the corpus ``corpus_key``, trained once and cached.

    ``texts`` are only read on a cache miss; ``corpus_key`` must identify them
    (it is the corpus fingerprint), since it alone keys the cached folder.
    """
    out = tokenizer_path(corpus_key, vocab_size)
    if (out / _DONE).exists():
        return load_tokenizer(out)
    tok = train_tokenizer(texts, vocab_size=vocab_size)
    # write under a temporary name, then rename: a killed build never looks finished
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    save_tokenizer(tok, tmp)
    (tmp / _DONE).write_text(
        json.dumps({"corpus_key": corpus_key, "vocab_size": vocab_size, "actual_vocab": len(tok)})
    )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return load_tokenizer(out)
