"""The memory a run needs to train, counted from the model's code, and the micro-batches
that keep it under a limit.

A training step holds, at its peak (the start of the backward pass):

* **state**, 16 bytes a parameter: the fp32 weights (4), their gradients (4) and
  AdamW's two moments (8); under DistributedDataParallel, gradient buckets of
  another 4; under bf16 autocast, a bf16 copy of every weight matrix (2 a weight,
  embedding included: autocast keeps the copies its matrix products save);
* **saved activations**: what the forward pass of ``LlamaForCausalLM`` keeps for the
  backward pass, per token of a micro-batch. Per layer, each RMSNorm keeps its input
  and its normalised input (fp32, ``4d`` each) and its root mean square; the
  attention keeps the query, key and value after the rotary embedding, its output
  (``d`` each) and its log-sum-exp (fp32, one per head); the gated MLP keeps the gate,
  its SiLU, the up projection and their product (``d_ff`` each). In fp32 the matrix
  products also keep their input, each norm's output (shared by q, k, v and by gate,
  up); under bf16 autocast each product keeps a bf16 copy of its input instead, one
  per product (3 for q, k, v; 2 for gate, up), and the activations are bf16. After
  the layers, the final norm (as above), the lm head's input, the log-probabilities
  of the whole vocabulary (fp32, ``4V``), the token ids and targets (int64), and the
  rotary cosines and sines (one per position);
* **the loss's transients**: the gradient of the log-probabilities and of the logits
  (fp32, ``8V`` per token) while the saved log-probabilities are still alive.

:func:`train_memory` counts these in bytes; :func:`saved_bytes` counts what a real
forward pass saves (``torch.autograd.graph.saved_tensors_hooks``), and the lab's
tests check that the two agree to the byte on the CPU, in fp32 and under CPU bf16
autocast. CUDA's caching allocator adds fragmentation and the CUDA context a few
hundred MB, which this count leaves out: :data:`USABLE_FRACTION` of a GPU's memory
is what :func:`micro_batches_for` plans with. The GPU smoke check
(``scripts/gpu_smoke.py``) prints the measured peak beside this count.
"""

from __future__ import annotations

from analysis.lab.config import LabConfigError, ModelConfig, RunConfig
from analysis.lab.train.model import param_count

#: bytes of a value: fp32 and bf16 activations, int64 token ids
FP32, BF16, INT64 = 4, 2, 8
#: the share of a GPU's memory a run is planned to fill: the rest is left to the
#: allocator's fragmentation, the CUDA context and the kernels' workspaces
USABLE_FRACTION = 0.85
GiB = 2**30
#: the loss's own saved scalar (the weight total of its mean)
LOSS_SCALARS = FP32


def matrix_params(model: ModelConfig, vocab_size: int) -> int:
    """Weights in matrices (the embedding and every projection), which bf16 autocast copies."""
    d, ff = model.d_model, model.d_ff
    return vocab_size * d + model.n_layer * (4 * d * d + 3 * d * ff)


def layer_bytes_per_token(model: ModelConfig, precision: str) -> int:
    """Bytes one decoder layer saves for the backward pass, per token (see the module)."""
    d, ff, heads = model.d_model, model.d_ff, model.n_head
    norms = 2 * (2 * FP32 * d + FP32)  # two RMSNorms: input, normalised input, root mean square
    lse = FP32 * heads
    if precision == "fp32":
        # each norm's output (its weight applied), the products' input; q, k, v, attention
        # output; the MLP's four
        return norms + 2 * FP32 * d + FP32 * (4 * d + 4 * ff) + lse
    # bf16: one bf16 copy of a norm's output per product (3 for q, k, v; 2 for gate, up);
    # q, k, v, attention output; the MLP's four
    return norms + BF16 * (3 + 2) * d + BF16 * (4 * d + 4 * ff) + lse


def head_bytes_per_token(model: ModelConfig, vocab_size: int, precision: str) -> int:
    """Bytes saved after the layers, per token: the final norm, the lm head's input, the
    fp32 log-probabilities, the token ids and targets."""
    d = model.d_model
    head_input = (FP32 if precision == "fp32" else BF16) * d  # the norm's output, or its bf16 copy
    return 2 * FP32 * d + FP32 + head_input + FP32 * vocab_size + 2 * INT64


def rotary_bytes(model: ModelConfig) -> int:
    """The rotary embedding's cosines and sines (fp32, one row per position, shared by the rows)."""
    return 2 * FP32 * model.context * (model.d_model // model.n_head)


def saved_activation_bytes(model: ModelConfig, vocab_size: int, rows: int, precision: str) -> int:
    """Bytes the forward pass of ``rows`` rows saves for the backward pass, weight copies excluded."""
    per_token = model.n_layer * layer_bytes_per_token(model, precision)
    per_token += head_bytes_per_token(model, vocab_size, precision)
    return rows * model.context * per_token + rotary_bytes(model) + LOSS_SCALARS


def train_memory(model: ModelConfig, vocab_size: int, rows: int, precision: str = "bf16",
                 world_size: int = 1) -> dict[str, int]:
    """Peak bytes of a training step of ``model`` on ``rows`` rows (one micro-batch of one
    process), by part: ``state``, ``weight_copies``, ``activations``, ``loss``, ``total``.

    ``precision`` is ``fp32`` or ``bf16`` (autocast); ``world_size`` > 1 adds
    DistributedDataParallel's gradient buckets. See the module for what each part holds.
    """
    if precision not in ("fp32", "bf16"):
        raise LabConfigError(f"precision must be one of fp32, bf16; got {precision!r}")
    if rows < 1 or world_size < 1:
        raise LabConfigError(f"rows and world_size must be positive integers, got {rows!r}, {world_size!r}")
    n = param_count(model, vocab_size)
    parts = {
        "state": 16 * n + (FP32 * n if world_size > 1 else 0),
        "weight_copies": BF16 * matrix_params(model, vocab_size) if precision == "bf16" else 0,
        "activations": saved_activation_bytes(model, vocab_size, rows, precision),
        "loss": 2 * FP32 * vocab_size * rows * model.context,
    }
    parts["total"] = sum(parts.values())
    return parts


def vocabulary_bytes(vocab_size: int, rows: int, context: int) -> int:
    """Of :func:`train_memory`, the bytes that grow with the vocabulary: the saved
    log-probabilities and the loss's transients, ``12V`` bytes per token."""
    return 3 * FP32 * vocab_size * rows * context


def micro_batches_for(run: RunConfig, vocab_size: int, memory_bytes: float, precision: str = "bf16",
                      world_size: int = 1) -> int:
    """The fewest micro-batches (a divisor of each process's rows) whose step fits in
    ``memory_bytes`` × :data:`USABLE_FRACTION` (:func:`train_memory`).

    Raises
    ------
    LabConfigError
        Not even one row at a time fits.
    """
    rows = run.batch_size // world_size
    limit = memory_bytes * USABLE_FRACTION
    for m in (m for m in range(1, rows + 1) if rows % m == 0):
        if train_memory(run.model, vocab_size, rows // m, precision, world_size)["total"] <= limit:
            return m
    need = train_memory(run.model, vocab_size, 1, precision, world_size)["total"]
    raise LabConfigError(f"run {run.name!r} needs {need / GiB:.1f} GiB to train even one row at a time; "
                         f"{limit / GiB:.1f} GiB of {memory_bytes / GiB:.1f} GiB can be used")


def saved_bytes(model, input_ids, targets, loss_fn, autocast_device: str | None = None) -> dict[str, int]:
    """Bytes a forward pass of ``model`` saves for its backward pass, counted tensor by tensor
    (each storage once): ``parameters`` (the weights themselves, 0), ``weight_copies``
    (autocast's copies of the weights, recognised by shape) and ``activations``.

    The check of :func:`train_memory` against the model's own code; ``autocast_device``
    (``"cpu"`` or ``"cuda"``) runs the forward pass under its bf16 autocast.
    """
    import torch  # heavy: loaded only when memory is counted

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, tuple[int, str]] = {}

    def pack(t):
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        kind = "parameters" if ptr in params else "weight_copies" if _weight_copy(t) else "activations"
        seen.setdefault(ptr, (storage.nbytes(), kind))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if autocast_device is None:
            loss_fn(model, input_ids, targets)
        else:
            with torch.autocast(autocast_device, dtype=torch.bfloat16):
                loss_fn(model, input_ids, targets)
    out = {"parameters": 0, "weight_copies": 0, "activations": 0}
    for nbytes, kind in seen.values():
        out[kind] += 0 if kind == "parameters" else nbytes
    return out


def _weight_copy(t) -> bool:
    """Whether ``t`` (or the tensor it views) is autocast's cast of a weight: a copy whose
    backward leads straight to a leaf's gradient."""
    fn = (t._base if t._base is not None else t).grad_fn
    return (fn is not None and type(fn).__name__ == "ToCopyBackward0"
            and any(type(f).__name__ == "AccumulateGrad" for f, _ in fn.next_functions if f is not None))
