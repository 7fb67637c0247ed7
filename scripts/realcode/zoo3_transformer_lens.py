"""transformer-lens 4.3.0: TransformerBridge over tiny transformers models built from their
configs (hidden 32, 4 heads, 2 layers, vocab 64; `boot_transformers(name, hf_model=…,
tokenizer=…)`, a word-level tokenizer made here so nothing is downloaded) and the native
TransformerLens model (`boot_native`). The bridge forces eager attention in the wrapped model
and runs its own attention components (joint QKV, rotary, ALiBi); the jobs run the forward,
`run_with_cache` and, in compatibility mode, the folded-weights forward. transformers' own
modules lie outside this tree: only transformer_lens' calls are sites. train = gradients
on."""

import torch

from zoo3 import B, Config

V, S = 64, 8


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<|endoftext|>": 0}
    vocab.update({"w%d" % i: i for i in range(1, V)})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    t = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                pad_token="<|endoftext|>", unk_token="<|endoftext|>", add_bos_token=True)
    t.init_kwargs["name_or_path"] = "zoo3-word-level"  # already adds BOS: never reloaded by name
    return t


def _hf(cls_name, cfg_name, kw):
    import transformers

    base = dict(vocab_size=V, hidden_size=32, num_attention_heads=4, num_hidden_layers=2, intermediate_size=64,
                max_position_embeddings=64)
    base.update(kw)
    cfg = getattr(transformers, cfg_name)(**base)
    cfg._attn_implementation = "eager"
    return getattr(transformers, cls_name)(cfg)


def _bridge(name, cls_name, cfg_name, kw=None, compat=False):
    def build(gen, fused):
        from transformer_lens.model_bridge import TransformerBridge

        torch.manual_seed(0)
        hf = _hf(cls_name, cfg_name, kw or {})
        br = TransformerBridge.boot_transformers(name, hf_model=hf, tokenizer=_tokenizer(), device="cpu")
        if compat:
            br.enable_compatibility_mode()
        tokens = torch.randint(1, V, (B, S), generator=gen)

        def run(m):
            m(tokens)
            _, cache = m.run_with_cache(tokens)
            return cache

        return br, run

    return build


def _native(gen, fused):
    from transformer_lens.model_bridge.sources.native import boot

    cfg = dict(d_model=32, n_heads=4, d_head=8, n_layers=2, d_mlp=64, d_vocab=V, n_ctx=32, act_fn="gelu",
               normalization_type="LN", positional_embedding_type="rotary", rotary_dim=8)
    br = boot(cfg)
    tokens = torch.randint(1, V, (B, S), generator=gen)
    return br, lambda m: (m(tokens), m.run_with_cache(tokens))


GPT2 = dict(n_embd=32, n_head=4, n_layer=2, n_positions=64, n_inner=64)


def configs():
    return {
        "GPT2-bridge": Config(_bridge("gpt2", "GPT2LMHeadModel", "GPT2Config", GPT2), train=True),
        "GPT2-bridge-compat": Config(_bridge("gpt2", "GPT2LMHeadModel", "GPT2Config", GPT2, compat=True)),
        "Llama-bridge": Config(_bridge("meta-llama/Llama-3.2-1B", "LlamaForCausalLM", "LlamaConfig",
                                       dict(num_key_value_heads=2)), train=True),
        "Llama-bridge-compat": Config(_bridge("meta-llama/Llama-3.2-1B", "LlamaForCausalLM", "LlamaConfig",
                                              dict(num_key_value_heads=2), compat=True)),
        "GPTNeoX-bridge": Config(_bridge("EleutherAI/pythia-70m", "GPTNeoXForCausalLM", "GPTNeoXConfig",
                                         dict(rotary_pct=0.5))),
        "Bloom-bridge": Config(_bridge("bigscience/bloom-560m", "BloomForCausalLM", "BloomConfig",
                                       dict(n_layer=2, n_head=4))),
        "GPTJ-bridge": Config(_bridge("EleutherAI/gpt-j-6B", "GPTJForCausalLM", "GPTJConfig",
                                      dict(n_embd=32, n_head=4, n_layer=2, n_positions=64, rotary_dim=4))),
        "GPTNeo-bridge": Config(_bridge("EleutherAI/gpt-neo-125M", "GPTNeoForCausalLM", "GPTNeoConfig",
                                        dict(num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
                                             window_size=4))),
        "OPT-bridge": Config(_bridge("facebook/opt-125m", "OPTForCausalLM", "OPTConfig",
                                     dict(ffn_dim=64, word_embed_proj_dim=32))),
        "Qwen2-bridge": Config(_bridge("Qwen/Qwen2-0.5B", "Qwen2ForCausalLM", "Qwen2Config",
                                       dict(num_key_value_heads=2))),
        "Gemma2-bridge": Config(_bridge("google/gemma-2-2b", "Gemma2ForCausalLM", "Gemma2Config",
                                        dict(num_key_value_heads=2, head_dim=8))),
        "Native": Config(_native, train=True),
    }
