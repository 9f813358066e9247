"""A tiny random Llama checkpoint with a byte-level BPE tokenizer, built in about a
second: for tests that need a real local model folder without loading a real model."""

from __future__ import annotations

from pathlib import Path


def make_tiny_checkpoint(folder: Path, texts: list[str], vocab_size: int = 300, hidden: int = 32,
                         layers: int = 2, seed: int = 0, bos: bool = False) -> Path:
    """Train the tokenizer on ``texts``, initialize the model with ``seed`` and save
    both into ``folder``. With ``bos`` the tokenizer starts every text with ``<s>``
    (as Gemma 3's starts it with ``<bos>``)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts * 20, vocab_size=vocab_size,
                            special_tokens=["<|endoftext|>"] + (["<s>"] if bos else []))
    extra = {}
    if bos:
        from tokenizers.processors import TemplateProcessing

        bpe.post_processor = TemplateProcessing(single="<s> $A",
                                                special_tokens=[("<s>", bpe.token_to_id("<s>"))])
        extra = {"bos_token": "<s>"}
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                  **extra)
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=64, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
