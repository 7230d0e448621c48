"""Writes a byte-level tokenizer that transformers' AutoTokenizer loads offline: one token per UTF-8 byte.

Run with the peer's venv (it needs the `tokenizers` package, which the project's venv lacks):

    /tmp/peer-venv/bin/python benchmarks/peer/byte_tokenizer.py DIRECTORY

A peer client builds its synthetic prompts by encoding generated English text and
decoding the first N ids back to text, so the tokenizer must round-trip any text:
a word-level vocabulary maps unknown words to a special [UNK] that decoding drops,
which left GuideLLM with empty prompts (and zero finished requests). Byte-level
BPE with no merges covers every input and needs no training data or Hub access.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers


def write_byte_tokenizer(directory: Path) -> None:
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={symbol: i for i, symbol in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1_000_000}
    (directory / "tokenizer_config.json").write_text(json.dumps(config))


if __name__ == "__main__":
    write_byte_tokenizer(Path(sys.argv[1]))
