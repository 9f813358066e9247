"""A toy served model for the fake server: a byte tokenizer and a bigram distribution,
answered in vLLM's and llama-cpp-python's response shapes.

The shapes follow those projects' servers:

* **vLLM**: ``/tokenize`` (``{"model", "prompt", "add_special_tokens"}`` to
  ``{"tokens", "count", "max_model_len"}``) and ``/detokenize`` (``{"model",
  "tokens"}`` to ``{"prompt"}``); completions take a text or a token-id prompt;
  ``echo`` with ``logprobs`` gives ``logprobs.token_logprobs`` and
  ``logprobs.top_logprobs`` for the prompt (first None) and the generated tokens;
  ``prompt_logprobs`` gives, per prompt token, None (the first) or ``{token id:
  {"logprob", "rank", "decoded_token"}}``; more than ``max_logprobs`` top tokens
  is a 400.
* **llama.cpp** (``llama_cpp.server``): ``/extras/tokenize`` (``{"input"}`` to
  ``{"tokens"}``, the beginning-of-sequence token first) and
  ``/extras/detokenize`` (``{"tokens"}`` to ``{"text"}``); no ``/tokenize``; a
  completions prompt must be text (a token-id list is a 422 here, a 500 from
  llama-cpp-python 0.3.36); the echo leaves the leading beginning-of-sequence token
  out and gives the first echoed token no score; for a model without that token it
  scores each echoed token from the next position's distribution and is one entry
  short (as llama-cpp-python 0.3.36 does); ``prompt_logprobs`` is ignored; top
  log-probabilities are keyed by token text.

vLLM's ``return_tokens_as_token_ids`` names each token ``"token_id:<id>"``. The toy
never produces its end-of-text token, so ``ignore_eos`` changes nothing here.

The model: token ids are the UTF-8 bytes plus :data:`OFFSET`; the next-token
distribution depends on the previous token only (:meth:`ToyServed.logprobs_after`),
so a test can compute every score by hand and compare.
"""

from __future__ import annotations

import numpy as np

#: ids 0..OFFSET-1 are special: 0 padding, 1 the beginning-of-sequence token, 2 end of text
OFFSET = 3
BOS = 1
VOCAB = 256 + OFFSET


class ToyServed:
    """A byte-level bigram model served in ``dialect`` (``"vllm"`` or ``"llamacpp"``);
    ``bos`` says whether its tokenizer puts :data:`BOS` before every text."""

    def __init__(self, dialect: str = "vllm", bos: bool = False, max_logprobs: int = 20):
        if dialect not in ("vllm", "llamacpp"):
            raise ValueError(f"dialect must be 'vllm' or 'llamacpp', got {dialect!r}")
        self.dialect, self.bos, self.max_logprobs = dialect, bos, max_logprobs
        self.routes = ({"/v1/completions", "/tokenize", "/detokenize"} if dialect == "vllm"
                       else {"/v1/completions", "/extras/tokenize", "/extras/detokenize"})

    # -- the model ---------------------------------------------------------------
    def encode(self, text: str, special: bool = True) -> list[int]:
        ids = [b + OFFSET for b in text.encode("utf-8")]
        return ([BOS] if self.bos and special else []) + ids

    def decode(self, ids) -> str:
        return bytes(int(t) - OFFSET for t in ids if int(t) >= OFFSET).decode("utf-8", errors="replace")

    @staticmethod
    def logprobs_after(prev: int) -> np.ndarray:
        """log p(next | prev) over the vocabulary: a bump around ``(7 prev) mod 256``."""
        centre = (7 * int(prev)) % 256 + OFFSET
        logits = -((np.arange(VOCAB) - centre) ** 2) / 400.0
        return logits - np.logaddexp.reduce(logits)

    def scores(self, ids) -> list[float]:
        """log p of tokens 1..n-1 of ``ids``, each given the one before."""
        return [float(self.logprobs_after(a)[b]) for a, b in zip(ids, ids[1:])]

    def moments(self, ids) -> list[tuple[float, float]]:
        """The exact mean and standard deviation of log p at each position 1..n-1."""
        out = []
        for prev in ids[:-1]:
            lp = self.logprobs_after(prev)
            p = np.exp(lp)
            mu = float((p * lp).sum())
            out.append((mu, float(np.sqrt((p * (lp - mu) ** 2).sum()))))
        return out

    # -- the routes --------------------------------------------------------------
    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        if path.endswith("tokenize") and not path.endswith("detokenize"):
            text = body.get("prompt" if self.dialect == "vllm" else "input")
            if not isinstance(text, str):
                return 422, {"detail": "the text to tokenize is missing"}
            special = bool(body.get("add_special_tokens", True)) if self.dialect == "vllm" else True
            ids = self.encode(text, special)
            if self.dialect == "vllm":
                return 200, {"tokens": ids, "count": len(ids), "max_model_len": 2048}
            return 200, {"tokens": ids}
        if path.endswith("detokenize"):
            text = self.decode(body.get("tokens") or [])
            return 200, {"prompt": text} if self.dialect == "vllm" else {"text": text}
        return self._completion(body)

    def _completion(self, body: dict) -> tuple[int, dict]:
        prompt = body.get("prompt")
        k = body.get("logprobs")
        if isinstance(prompt, list):
            if self.dialect == "llamacpp":
                return 422, {"detail": [{"type": "string_type", "loc": ["body", "prompt"],
                                         "msg": "Input should be a valid string"}]}
            ids = [int(t) for t in prompt]
        elif isinstance(prompt, str):
            ids = self.encode(prompt)
        else:
            return 400, {"error": {"message": "prompt must be text or token ids"}}
        if self.dialect == "vllm" and k is not None and int(k) > self.max_logprobs:
            return 400, {"error": {"message": f"Requested sample logprobs of {k}, which is greater than "
                                              f"max allowed: {self.max_logprobs}", "code": 400}}
        n_new = int(body.get("max_tokens") or 16)
        seq = list(ids)
        for _ in range(n_new):
            seq.append(int(np.argmax(self.logprobs_after(seq[-1]))))
        new = seq[len(ids):]
        choice: dict = {"index": 0, "text": (self.decode(ids) if body.get("echo") else "") + self.decode(new),
                        "finish_reason": "length"}
        if k is not None:
            k = int(k)
            echoed = seq if body.get("echo") else new
            start = 0 if body.get("echo") else len(ids)
            # llama-cpp-python pairs echoed token j with the scores after token j of what it
            # evaluated (the BOS included): right after a leading BOS; without one, each token
            # gets the next position's scores, and the last generated token none (one short)
            shifted = self.dialect == "llamacpp" and body.get("echo") and not (seq and seq[0] == BOS)
            if self.dialect == "llamacpp" and body.get("echo") and seq and seq[0] == BOS:
                echoed, start = seq[1:], 1
            elif shifted:
                echoed = seq[:-1]
            tokens, token_lp, top_lp = [], [], []
            for j, tok in enumerate(echoed):
                pos = start + j
                as_ids = self.dialect == "vllm" and body.get("return_tokens_as_token_ids")
                tokens.append(f"token_id:{tok}" if as_ids else self.decode([tok]))
                if pos == 0 or (self.dialect == "llamacpp" and body.get("echo") and j == 0):
                    token_lp.append(None), top_lp.append(None)
                    continue
                lp = self.logprobs_after(seq[pos] if shifted else seq[pos - 1])
                top = np.argsort(-lp)[:k]
                entry = {self.decode([int(t)]): float(lp[t]) for t in top}
                entry[self.decode([tok])] = float(lp[tok])
                token_lp.append(float(lp[tok])), top_lp.append(entry)
            choice["logprobs"] = {"tokens": tokens, "token_logprobs": token_lp, "top_logprobs": top_lp,
                                  "text_offset": list(range(len(tokens)))}
        if self.dialect == "vllm" and body.get("prompt_logprobs") is not None:
            kp = int(body["prompt_logprobs"])
            plp: list = [None]
            for pos in range(1, len(ids)):
                lp = self.logprobs_after(ids[pos - 1])
                order = np.argsort(-lp)
                rank = {int(t): r + 1 for r, t in enumerate(order)}
                keep = [int(t) for t in order[:kp]]
                if ids[pos] not in keep:
                    keep.append(ids[pos])
                plp.append({str(t): {"logprob": float(lp[t]), "rank": rank[t],
                                     "decoded_token": self.decode([t])} for t in keep})
            choice["prompt_logprobs"] = plp
        return 200, {"id": "cmpl-fake", "object": "text_completion", "model": body.get("model"),
                     "choices": [choice],
                     "usage": {"prompt_tokens": len(ids), "completion_tokens": len(new),
                               "total_tokens": len(seq)}}
