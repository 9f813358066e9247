"""Evaluation: a checkpoint's mean token loss on any texts, the held-out counterpart
of the training loss, on the device its run trained on (:func:`eval_device`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from analysis.lab.config import LabConfigError
from analysis.lab.train.devices import DEVICE_ENV, cpu_threads, placement
from analysis.lab.train.model import quiet_transformers
from analysis.lab.train.order import tokenize_stream
from analysis.lab.train.runs import DONE


def eval_device(path: str | os.PathLike, device: str | None = None) -> str:
    """Where :func:`eval_loss` evaluates the checkpoint at ``path``: ``device``, else
    ``$MEMBOOK_LAB_DEVICE``, else the device its run trained on (its ``DONE.json``;
    ``cpu`` for a run without one), the GPU only when torch sees one. A run trained on
    the CPU (every run of the smoke and default labs) is evaluated there, as always."""
    import torch  # heavy: loaded only when a model is evaluated

    done = Path(path) / DONE
    trained_on = json.loads(done.read_text()).get("device", "cpu") if done.exists() else "cpu"
    if device is None and not os.environ.get(DEVICE_ENV, "").strip():
        device = trained_on if trained_on == "cpu" or torch.cuda.is_available() else "cpu"
    return placement(device).torch_device


def eval_loss(path: str | os.PathLike, texts: Sequence[str], batch_size: int = 16,
              threads: int | None = None, device: str | None = None) -> float:
    """Mean token negative log-likelihood (nats) of ``texts`` under the checkpoint at ``path``.

    The texts are tokenized as training texts are (``<|endoftext|>`` after each)
    and cut into rows of the model's context, the last one possibly shorter; the
    mean is over every token that has a predecessor in its row, so it is the
    held-out counterpart of the training loss. The model runs in fp32 on
    :func:`eval_device` (``device``: ``"cpu"`` or ``"cuda"``), the token ids go there
    once, and the sum of the losses stays there until the end.
    """
    import torch  # heavy: loaded only when a model is evaluated
    import torch.nn.functional as F  # heavy: loaded only when a model is evaluated
    from transformers import AutoModelForCausalLM, AutoTokenizer  # heavy: loaded to evaluate

    path = Path(path)
    dev = torch.device(eval_device(path, device))
    tok = AutoTokenizer.from_pretrained(str(path))
    with quiet_transformers():
        model = AutoModelForCausalLM.from_pretrained(
            str(path), dtype=torch.float32, attn_implementation="sdpa"
        )
    model.to(dev)
    model.eval()
    ctx = model.config.max_position_embeddings
    stream = tokenize_stream(texts, tok)
    if len(stream) < 2:
        raise LabConfigError("eval_loss needs at least two tokens of text")
    n_full = len(stream) // ctx
    full = torch.from_numpy(stream[: n_full * ctx].reshape(n_full, ctx).astype(np.int64)).to(dev)
    batches = list(torch.split(full, batch_size))
    tail = stream[n_full * ctx :]
    if len(tail) >= 2:
        batches.append(torch.from_numpy(tail.astype(np.int64))[None].to(dev))
    count = 0
    sums = []  # the batches' summed losses: read once, at the end (on the CPU at once, as always)
    with cpu_threads(threads), torch.inference_mode():
        for xb in batches:
            logits = model(input_ids=xb, use_cache=False).logits[:, :-1]
            flat = logits.reshape(-1, logits.shape[-1])
            sums.append(F.cross_entropy(flat, xb[:, 1:].reshape(-1), reduction="sum"))
            count += xb.shape[0] * (xb.shape[1] - 1)
    total = 0.0
    for value in torch.stack(sums).cpu().tolist():
        total += value  # added in float64 in the batches' order, as always
    return total / count
