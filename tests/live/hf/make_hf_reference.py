#!/usr/bin/env python3
"""Makes tests/data/hf: tiny random checkpoints of the three architectures the
live backend loads (Qwen3ForCausalLM, Qwen2ForCausalLM, LlamaForCausalLM) and
byte-level BPE tokenizers, with reference outputs computed by Hugging Face's
own code (transformers' modelling files, the tokenizers library).

It runs where transformers and tokenizers are installed (not on a Debian
machine: they are not packaged there), once; the tests only read its output,
so april is checked against Hugging Face's implementation rather than against
a reading of it. Every number is from a fixed seed.

usage: make_hf_reference.py OUT_DIR
"""
import copy
import json
import math
import os
import random
import sys

import torch
import transformers
import tokenizers
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from safetensors.torch import save_file

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
log = open(os.path.join(OUT, "provenance.txt"), "w")


def note(*a):
    print(*a)
    print(*a, file=log)


note(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}, torch {torch.__version__}")

# The pre-tokenizer split patterns, as Qwen2/Qwen2.5/Qwen3 and Llama 3 ship
# them in tokenizer.json (they differ in how digits group: one at a time for
# Qwen, up to three for Llama 3).
QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LLAMA3_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

rng = random.Random(7)
words = ("the answer is a number find value of x if sum product prime integer how many ways can we choose "
         "let be real numbers such that compute remainder when divided by triangle area circle radius").split()
corpus = []
for i in range(400):
    a, b = rng.randint(0, 999), rng.randint(1, 99)
    w = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
    corpus.append(f"Problem {i}: {w.capitalize()}? If x = {a} and y = {b}, then x + y = {a + b}.")
    corpus.append(f"So the answer is $\\boxed{{{a * b}}}$. We're done; it's {a / b:.3f} and I'll check.\n\n")
    corpus.append(f"def f(n):\n    return n * {b}  # {w}\n")
corpus += ["Zürich, café, naïve, résumé — déjà vu.", "数学题：求和 1+2+3 的结果。答案是 6。", "Emoji: 🙂🚀 and tabs\tand  double  spaces."] * 20


def make_tokenizer(split, specials, nfc):
    tok = Tokenizer(models.BPE())
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(split), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


probe_texts = [
    "", "Hello world", "Hello  world", " leading space", "trailing space ", "tabs\tand\nnewlines\n\n\nend",
    "The answer is \\boxed{12345}.", "x = 3.14159, y = -2/3", "I'm sure they're right, we'll see; it's 'quoted'",
    "DON'T SHOUT", "Zürich café naïve", "数学题：求和", "🙂🚀 ok", "a\r\nb", "   \n  x", "1234567 12 1", "a...b!!!c??",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n", "text<|endoftext|>more",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>", "e\u0301 (e and a combining accent)",
]

tok_specs = {
    "qwen2": (QWEN2_SPLIT, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], True),
    "llama3": (LLAMA3_SPLIT, ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], False),
}
tok_dir = os.path.join(OUT, "tokenizers")
os.makedirs(tok_dir, exist_ok=True)
toks = {}
for name, (split, specials, nfc) in tok_specs.items():
    tok = make_tokenizer(split, specials, nfc)
    toks[name] = tok
    tok.save(os.path.join(tok_dir, f"{name}.json"))
    cases = []
    for t in probe_texts:
        enc = tok.encode(t, add_special_tokens=False)
        cases.append({"text": t, "ids": enc.ids, "tokens": enc.tokens, "decoded": tok.decode(enc.ids, skip_special_tokens=False)})
    with open(os.path.join(tok_dir, f"{name}.encodings.json"), "w") as f:
        json.dump({"tokenizer": f"{name}.json", "made_by": f"tokenizers {tokenizers.__version__}", "cases": cases}, f, ensure_ascii=False,
                  indent=1)
    note(f"tokenizer {name}: vocab {tok.get_vocab_size()} (with added tokens)")

common = dict(vocab_size=448, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              max_position_embeddings=256, rms_norm_eps=1e-6)
archs = {
    # Qwen3-0.6B's layout: explicit head_dim larger than hidden / heads, q/k RMSNorm, tied embeddings.
    "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM,
              dict(head_dim=32, tie_word_embeddings=True, rope_theta=1000000.0, attention_bias=False), "qwen2"),
    # Qwen2.5 / R1-distill layout: q/k/v biases, untied.
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM, dict(tie_word_embeddings=False, rope_theta=10000.0), "qwen2"),
    # Llama 3.1 layout: llama3 rope scaling (original 64 positions, so that one frequency is in the smooth band).
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM,
              dict(tie_word_embeddings=False, rope_theta=500000.0, mlp_bias=False, attention_bias=False,
                   rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                 "original_max_position_embeddings": 64}), "llama3"),
}

PROMPT_TOK, NEW_TOK = 64, 16
for name, (cfg_cls, model_cls, extra, tok_name) in archs.items():
    torch.manual_seed(11)
    cfg = cfg_cls(**common, **extra)
    try:
        cfg._attn_implementation = "eager"
    except Exception as e:  # noqa: BLE001 - the default attention is a reference too
        note(f"{name}: eager attention not set ({e})")
    model = model_cls(cfg).eval().to(torch.float32)
    # Random init: std 0.02 leaves logits near zero; a wider spread makes
    # greedy choices decided and exercises the norms' weights.
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif "bias" in pname:
                p.copy_(0.2 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    d = os.path.join(OUT, name)
    model.save_pretrained(d, safe_serialization=True)
    toks[tok_name].save(os.path.join(d, "tokenizer.json"))
    bd = os.path.join(OUT, name + "-bf16-sharded")
    copy.deepcopy(model).to(torch.bfloat16).save_pretrained(bd, safe_serialization=True, max_shard_size="100KB")
    # the bf16 checkpoint's weights, widened back: what april computes in float32 from it
    model_bf16w = model_cls(cfg).eval()
    model_bf16w.load_state_dict({k: v.to(torch.bfloat16).to(torch.float32) for k, v in model.state_dict().items()})
    note(f"{name}: {sum(p.numel() for p in model.parameters())} parameters; config:", json.dumps(cfg.to_dict(), sort_keys=True))
    rot = model.model.rotary_emb
    note(f"{name}: inv_freq {rot.inv_freq.tolist()} attention_scaling {getattr(rot, 'attention_scaling', None)}")

    g = torch.Generator().manual_seed(5)
    ids = torch.randint(0, toks[tok_name].get_vocab_size(), (1, PROMPT_TOK), generator=g)
    out = {"input_ids": ids[0].clone()}
    with torch.no_grad():
        out["logits"] = model(ids).logits[0].float().contiguous()
        out["logits_bf16_weights"] = model_bf16w(ids).logits[0].float().contiguous()
        seq, lps, margins = ids.clone(), [], []
        for _ in range(NEW_TOK):
            last = model(seq).logits[0, -1].double()
            top2 = torch.topk(last, 2).values
            margins.append(float(top2[0] - top2[1]))
            nxt = int(torch.argmax(last))
            lps.append(float(torch.log_softmax(last, -1)[nxt]))
            seq = torch.cat([seq, torch.tensor([[nxt]])], 1)
        out["greedy_ids"] = seq[0, PROMPT_TOK:].clone()
        out["greedy_logprobs"] = torch.tensor(lps, dtype=torch.float32)
    save_file(out, os.path.join(d, "reference.safetensors"), metadata={"made_by": f"transformers {transformers.__version__}"})
    note(f"{name}: greedy {out['greedy_ids'].tolist()}; smallest top-2 margin {min(margins):.4f}")
log.close()
