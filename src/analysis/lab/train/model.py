"""The lab's model, optimizer, schedule and training step.

A Llama-style decoder (``LlamaForCausalLM``, tied embeddings, no biases) trained
with AdamW under a warmup-then-cosine learning rate, its gradient norm clipped.
torch and transformers are imported inside the functions that need them: they
are heavy, and the corpus, data order and run keys do without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import numpy as np

from analysis.lab.config import ModelConfig, RunConfig

#: betas of AdamW, and the floor of the cosine decay as a fraction of the peak lr
BETAS = (0.9, 0.95)
MIN_LR_FRAC = 0.1
GRAD_CLIP = 1.0
#: marks the target of a row's last position, which has no next token
IGNORE = -100


def param_count(model_config: ModelConfig, vocab_size: int) -> int:
    """Parameters of the lab's ``LlamaForCausalLM`` (tied embeddings, no biases).

    Embeddings ``V·d``; per layer the q, k, v, o projections (``4·d²``, as many
    key/value heads as heads), the gated MLP (``3·d·d_ff``) and two RMSNorm
    weights (``2·d``); a final RMSNorm (``d``). The output layer is the embedding.
    """
    d, ff, n = model_config.d_model, model_config.d_ff, model_config.n_layer
    return vocab_size * d + n * (4 * d * d + 3 * d * ff + 2 * d) + d


def flops_per_token(run: RunConfig, vocab_size: int) -> float:
    """Training FLOPs per token of ``run``'s model: ``6·N + 12·n_layer·context·d_model``, the
    usual count of a decoder's forward and backward pass (six per parameter per token, plus
    attention over the context; Kaplan et al. 2020, Hoffmann et al. 2022)."""
    m = run.model
    return 6.0 * param_count(m, vocab_size) + 12.0 * m.n_layer * m.context * m.d_model


def llama_config(model_config: ModelConfig, vocab_size: int, eos_token_id: int):
    """The ``LlamaConfig`` of ``model_config``; ``<|endoftext|>`` is bos, eos and pad."""
    from transformers import LlamaConfig  # heavy: loaded only when a model is built or trained

    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=model_config.d_model,
        intermediate_size=model_config.d_ff,
        num_hidden_layers=model_config.n_layer,
        num_attention_heads=model_config.n_head,
        num_key_value_heads=model_config.n_head,
        max_position_embeddings=model_config.context,
        tie_word_embeddings=True,
        bos_token_id=eos_token_id, eos_token_id=eos_token_id, pad_token_id=eos_token_id,
        attn_implementation="sdpa",
    )


def build_model(model_config: ModelConfig, vocab_size: int, eos_token_id: int, seed: int = 0):
    """A freshly initialised fp32 ``LlamaForCausalLM``; ``torch.manual_seed(seed)`` first."""
    import torch  # heavy: loaded only when a model is built or trained
    from transformers import LlamaForCausalLM  # heavy: loaded only when a model is built or trained

    torch.manual_seed(seed)
    return LlamaForCausalLM(llama_config(model_config, vocab_size, eos_token_id)).float()


def make_optimizer(model, run: RunConfig):
    """AdamW (betas 0.9/0.95) with ``run.weight_decay`` on matrices and none on norm weights."""
    import torch  # heavy: loaded only when a model is built or trained

    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": run.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    # the fused kernel runs the whole update in one C++ call per group, not a Python loop per tensor
    return torch.optim.AdamW(groups, lr=run.lr, betas=BETAS, eps=1e-8, fused=True)


def lr_schedule(run: RunConfig) -> np.ndarray:
    """Learning rate at each step: linear warmup over ``warmup_frac`` of the steps, then
    cosine decay from ``run.lr`` to ``MIN_LR_FRAC · run.lr`` at the last step."""
    T = run.steps
    warm = int(round(run.warmup_frac * T))
    s = np.arange(T, dtype=np.float64)
    progress = np.clip((s - warm) / max(1, T - warm - 1), 0.0, 1.0)
    lr = run.lr * (MIN_LR_FRAC + (1 - MIN_LR_FRAC) * 0.5 * (1 + np.cos(np.pi * progress)))
    if warm:
        lr[:warm] = run.lr * (s[:warm] + 1) / warm
    return lr


def lm_loss(model, input_ids, targets):
    """Mean next-token cross-entropy of a batch.

    ``targets`` is ``input_ids`` shifted left by one, with ``-100`` at the last
    position: the loss is on every token that has a next token in its row.
    """
    import torch.nn.functional as F  # heavy: loaded only when a model is built or trained

    logits = model(input_ids=input_ids, use_cache=False).logits
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=IGNORE)


def train_step(model, optimizer, input_ids, targets, lr: float, loss_fn=lm_loss, micro_batches: int = 1):
    """One optimizer step on a batch; returns its mean token loss (a detached tensor).

    Sets the learning rate, takes :func:`lm_loss` (or ``loss_fn``, e.g. its
    ``torch.compile``), clips the gradient norm to ``GRAD_CLIP`` and steps AdamW.

    With ``micro_batches`` M > 1 the batch's rows are cut into M equal micro-batches
    and the gradient accumulated over them (:func:`accumulate`): the memory of one
    micro-batch's activations, the same step up to float rounding (every row has as
    many targets, so the mean of the micro-batches' mean losses is the batch's). M = 1
    is the one-batch step, operation for operation.
    """
    import torch  # heavy: loaded only when a model is built or trained

    for group in optimizer.param_groups:
        group["lr"] = lr
    if micro_batches == 1:
        loss = loss_fn(model, input_ids, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    else:
        optimizer.zero_grad(set_to_none=True)
        loss = accumulate(model, input_ids, targets, loss_fn, micro_batches)
    torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
    optimizer.step()
    return loss.detach()


def accumulate(model, input_ids, targets, loss_fn, micro_batches: int):
    """Backpropagate the batch's mean loss one micro-batch at a time; return that loss.

    Each of the ``micro_batches`` equal slices of rows adds the gradient of its mean
    loss over ``micro_batches``. Under DistributedDataParallel every micro-step but the
    last runs under ``no_sync``: the gradients accumulate in each process and are
    averaged over the processes once, in the last micro-step's backward pass.
    """
    rows = input_ids.shape[0]
    if micro_batches < 1 or rows % micro_batches:
        raise ValueError(f"micro_batches must be a positive divisor of the {rows} rows, "
                         f"got {micro_batches!r}")
    total = None
    xs, ys = input_ids.chunk(micro_batches), targets.chunk(micro_batches)
    for m, (x, y) in enumerate(zip(xs, ys)):
        last = m == micro_batches - 1
        with nullcontext() if last or not hasattr(model, "no_sync") else model.no_sync():
            part = loss_fn(model, x, y) / micro_batches
            part.backward()
        total = part.detach() if total is None else total + part.detach()
    return total


@contextmanager
def deterministic_algorithms(enabled: bool = True) -> Iterator[None]:
    """Within the block, ``torch.use_deterministic_algorithms(enabled)``; restored after.

    Eager CPU training is deterministic as it is; compiled kernels are not
    (scatter-adds in the embedding backward) unless this is on.
    """
    import torch  # heavy: loaded only when a model is built or trained

    was = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(enabled)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)



@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' own progress bars (one tick per save or load of a tiny model)."""
    from transformers.utils import logging as hf_logging  # heavy: loaded only when a model is saved or read

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()

