"""Teacher-forced scoring of token sequences for the local backend
(:class:`analysis.models.local.LocalModel`): batches sorted by length and
right-padded, log-probabilities of each sequence's tokens, with argmax flags or
with the moments of every next-token distribution (what Min-K%++ needs)."""

from __future__ import annotations


def padded_batches(sequences, batch_size: int, pad: int):
    """Batches of token sequences sorted by length, right-padded with ``pad``: each
    ``(indices, input_ids, attention_mask)``, the indices into ``sequences``."""
    import torch  # heavy: loaded only when a model is used

    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(sequences[i]) for i in idx)
        input_ids = torch.full((len(idx), width), pad, dtype=torch.long)
        attention = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            input_ids[row, : len(sequences[i])] = torch.tensor(sequences[i])
            attention[row, : len(sequences[i])] = 1
        yield idx, input_ids, attention


def score_batches(model, sequences, batch_size: int, pad: int, device):
    """Teacher-forced log-probabilities and argmax flags of each sequence's tokens
    1..n-1, batched with right padding (sorted by length)."""
    import torch  # heavy: loaded only when a model is used

    for idx, input_ids, attention in padded_batches(sequences, batch_size, pad):
        with torch.inference_mode():
            logits = model(input_ids=input_ids.to(device), attention_mask=attention.to(device)).logits.float()
        logp = torch.log_softmax(logits, dim=-1).cpu()
        top = logits.argmax(dim=-1).cpu()
        for row, i in enumerate(idx):
            n = len(sequences[i])
            target = input_ids[row, 1:n]
            lp = logp[row, : n - 1].gather(1, target[:, None])[:, 0]
            yield i, (lp.tolist(), (top[row, : n - 1] == target).tolist())


def score_stats_batches(model, sequences, batch_size: int, pad: int, device):
    """Teacher-forced log-probabilities of each sequence's tokens 1..n-1 with the mean
    and standard deviation of log p over the vocabulary under each next-token
    distribution (p-weighted), from the same forward pass; batched with right padding
    (sorted by length). The moments are taken one row at a time, so a large
    vocabulary never holds a whole batch of probabilities twice."""
    import torch  # heavy: loaded only when a model is used

    for idx, input_ids, attention in padded_batches(sequences, batch_size, pad):
        with torch.inference_mode():
            logits = model(input_ids=input_ids.to(device), attention_mask=attention.to(device)).logits
            for row, i in enumerate(idx):
                n = len(sequences[i])
                logp = torch.log_softmax(logits[row, : n - 1].float(), dim=-1)
                p = logp.exp()
                mu = (p * logp).sum(-1)
                sigma = (p * (logp - mu[:, None]) ** 2).sum(-1).clamp_min(0).sqrt()
                target = input_ids[row, 1:n].to(logp.device)
                lp = logp.gather(1, target[:, None])[:, 0]
                yield i, (lp.cpu().tolist(), mu.cpu().tolist(), sigma.cpu().tolist())
