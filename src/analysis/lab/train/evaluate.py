"""Evaluation: a checkpoint's mean token loss on any texts, the held-out counterpart
of the training loss."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from analysis.lab.config import LabConfigError
from analysis.lab.train.devices import cpu_threads
from analysis.lab.train.model import quiet_transformers
from analysis.lab.train.order import tokenize_stream


def eval_loss(path: str | os.PathLike, texts: Sequence[str], batch_size: int = 16,
              threads: int | None = None) -> float:
    """Mean token negative log-likelihood (nats) of ``texts`` under the checkpoint at ``path``.

    The texts are tokenized as training texts are (``<|endoftext|>`` after each)
    and cut into rows of the model's context, the last one possibly shorter; the
    mean is over every token that has a predecessor in its row, so it is the
    held-out counterpart of the training loss.
    """
    import torch  # heavy: loaded only when a model is evaluated
    import torch.nn.functional as F  # heavy: loaded only when a model is evaluated
    from transformers import AutoModelForCausalLM, AutoTokenizer  # heavy: loaded to evaluate

    path = Path(path)
    tok = AutoTokenizer.from_pretrained(str(path))
    with quiet_transformers():
        model = AutoModelForCausalLM.from_pretrained(
            str(path), dtype=torch.float32, attn_implementation="sdpa"
        )
    model.eval()
    ctx = model.config.max_position_embeddings
    stream = tokenize_stream(texts, tok)
    if len(stream) < 2:
        raise LabConfigError("eval_loss needs at least two tokens of text")
    n_full = len(stream) // ctx
    full = torch.from_numpy(stream[: n_full * ctx].reshape(n_full, ctx).astype(np.int64))
    batches = list(torch.split(full, batch_size))
    tail = stream[n_full * ctx :]
    if len(tail) >= 2:
        batches.append(torch.from_numpy(tail.astype(np.int64))[None])
    total, count = 0.0, 0
    with cpu_threads(threads), torch.inference_mode():
        for xb in batches:
            logits = model(input_ids=xb, use_cache=False).logits[:, :-1]
            flat = logits.reshape(-1, logits.shape[-1])
            total += float(F.cross_entropy(flat, xb[:, 1:].reshape(-1), reduction="sum"))
            count += xb.shape[0] * (xb.shape[1] - 1)
    return total / count
