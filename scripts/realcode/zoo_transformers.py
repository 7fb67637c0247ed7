"""transformers models for the record run: tiny configs built generically from the auto maps.

`jobs(mappings)` lists (model_type, class name) pairs from
`transformers.models.auto.modeling_auto.<MAPPING>_MAPPING_NAMES`. `run(job)` builds the
default config, shrinks its size attributes (`shrink`, three levels: tiny, then only depths /
vocabularies / images, then only depths), builds the model with random weights and the
requested attention implementation, makes inputs from the forward signature and runs it once.
"""

import inspect

import torch

TINY = 0  # hidden 32, heads 4 / kv 2, intermediate 64, 2 layers, vocab 512, images 32
SHALLOW = 1  # depths, vocabularies, images, experts and positions only
DEPTH = 2  # depths only
LEVELS = (TINY, SHALLOW, DEPTH)
MAX_PARAMS = 60_000_000
VOCAB = 512
SEQ = 8

HIDDEN = {
    "hidden_size", "d_model", "n_embd", "embed_dim", "dim", "hidden_dim", "model_dim", "d_embed",
    "emb_dim", "embedding_size", "word_embed_proj_dim", "projection_dim", "text_embed_dim",
    "vision_embed_dim", "encoder_hidden_size", "decoder_hidden_size", "n_embed", "embedding_dim",
    "proj_dim", "projection_size", "latent_dim", "d_latent", "encoder_embed_dim",
    "decoder_embed_dim", "decoder_hidden_size", "text_hidden_size", "vision_hidden_size",
    "audio_hidden_size", "output_hidden_size", "speaker_embedding_dim", "backbone_hidden_size",
    "mm_hidden_size", "fusion_hidden_size", "neck_hidden_size", "hidden_channels",
}
HEADS = {
    "num_attention_heads", "n_head", "num_heads", "n_heads", "encoder_attention_heads",
    "decoder_attention_heads", "num_attention_head", "attention_heads", "decoder_num_attention_heads",
    "encoder_num_attention_heads", "text_num_attention_heads", "vision_num_attention_heads",
}
KV_HEADS = {"num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num", "n_head_kv"}
HEAD_DIM = {
    "head_dim", "attention_head_dim", "kv_channels", "d_kv", "qk_nope_head_dim", "v_head_dim",
    "attention_head_size", "head_size", "global_head_dim", "local_head_dim",
}
ROPE_HEAD_DIM = {"qk_rope_head_dim"}
LAYERS = {
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_encoder_layers", "num_decoder_layers", "depth", "decoder_num_hidden_layers",
    "encoder_num_hidden_layers", "num_text_layers", "num_vision_layers", "text_layers",
    "vision_layers", "decoder_depth", "encoder_depth", "num_blocks", "num_stacks",
}
INTERMEDIATE = {
    "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "d_ff", "mlp_dim", "dim_feedforward",
    "ffn_hidden_size", "inner_dim", "d_inner", "encoder_ffn_dim", "decoder_intermediate_size",
    "mlp_hidden_dim", "hidden_dim_ffn",
}
MOE_INTERMEDIATE = {"moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size"}
EXPERTS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "n_experts"}
TOPK = {"num_experts_per_tok", "moe_topk", "num_selected_experts", "top_k_experts", "moe_k"}
POSITIONS = {
    "max_position_embeddings", "n_positions", "max_target_positions", "max_seq_len",
    "max_sequence_length", "n_ctx", "max_length_positions", "max_text_len",
}
IMAGE = {"image_size", "img_size", "input_size", "crop_size"}
PATCH = {"patch_size", "patch_sizes"}
LIST_WIDTHS = {"hidden_sizes", "embed_dims", "dims", "widths", "channels", "hidden_dims", "embed_dim", "neck_hidden_sizes"}
LIST_DEPTHS = {"depths", "num_layers", "num_hidden_layers", "layers", "block_depths", "stage_depths"}
LIST_HEADS = {"num_heads", "num_attention_heads", "heads", "num_attention_heads_per_stage"}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _scaled_list(v, first):
    """Scale a list of widths so its first element becomes `first`, keeping ratios."""
    if not v or not all(_is_int(x) and x > 0 for x in v) or v[0] <= first:
        return v
    k = v[0] / first
    return [max(1, int(round(x / k))) for x in v]


def _changes(cfg, level):
    """The constructor overrides that shrink `cfg` at `level` (not recursing)."""
    d = {}
    try:
        items = cfg.to_dict()
    except Exception:
        items = dict(vars(cfg))
    old_layers = []
    for k, v in items.items():
        if k.startswith("_"):
            continue
        new = None
        if _is_int(v):
            if k in LAYERS and v > 2 and not (k == "num_layers" and isinstance(items.get("depths"), list)):
                new = 2
                old_layers.append(v)
            elif k.endswith("vocab_size") and v > VOCAB and level <= SHALLOW:
                new = VOCAB
            elif k in EXPERTS and v > 4 and level <= SHALLOW:
                new = 4
            elif k in TOPK and v > 2 and level <= SHALLOW:
                new = 2
            elif k in POSITIONS and v > 256 and level <= SHALLOW:
                new = 256
            elif k in IMAGE and v > 64 and level <= SHALLOW:
                new = 64 if level == SHALLOW else 32
            elif level == TINY:
                if k in HIDDEN and v > 32:
                    new = 32
                elif k in HEADS and v > 4:
                    new = 4
                elif k in KV_HEADS and v > 2:
                    new = 2
                elif k in HEAD_DIM and v > 8:
                    new = 8
                elif k in ROPE_HEAD_DIM and v > 4:
                    new = 4
                elif (k in INTERMEDIATE or k.endswith("intermediate_size")) and k not in MOE_INTERMEDIATE and v > 64:
                    new = 64
                elif k in MOE_INTERMEDIATE and v > 32:
                    new = 32
                elif k == "kv_lora_rank" and v > 16:
                    new = 16
                elif k == "q_lora_rank" and v > 16:
                    new = 16
                elif k in PATCH and v > 4:
                    new = 4
                elif k == "window_size" and v > 4:
                    new = 4
                elif k in ("rotary_dim", "rotary_emb_dim", "rope_dim") and v > 4:
                    new = 4
                elif k == "max_source_positions" and v > 32:
                    new = 32
        elif isinstance(v, list) and v and all(_is_int(x) for x in v):
            if k in LIST_DEPTHS:
                new = [min(x, 2) for x in v]
            elif level == TINY and k in LIST_WIDTHS:
                new = _scaled_list(v, 16)
            elif level == TINY and k in LIST_HEADS:
                new = _scaled_list(v, 1)
            elif level <= SHALLOW and k in IMAGE and len(v) == 2 and v[0] > 64:
                new = [32, 32] if level == TINY else [64, 64]
            elif level == TINY and k in PATCH and len(v) == 2 and v[0] > 4:
                new = [4, 4]
        if new is not None and new != v:
            d[k] = new
    # lists with one entry per layer follow the new depth
    for k, v in items.items():
        if k in d or k.startswith("_") or not isinstance(v, list):
            continue
        if old_layers and len(v) in old_layers and len(v) > 2 and "layer" in k:
            # keep one of each of the first two kinds (hybrids need an attention layer)
            other = next((x for x in v if x != v[0]), None)
            d[k] = [v[0], other] if other is not None else v[:2]
        elif old_layers and ("layer_indices" in k or "layers_idx" in k or "layer_ids" in k) and v and all(
                _is_int(x) for x in v):
            d[k] = [1]
    # multimodal rope sections must add up to half the head dim
    hd = d.get("head_dim")
    if hd is None and level == TINY and ("hidden_size" in d and "num_attention_heads" in d):
        hd = d["hidden_size"] // d["num_attention_heads"]
    for rk in ("rope_parameters", "rope_scaling"):
        rp = items.get(rk)
        if hd and isinstance(rp, dict) and isinstance(rp.get("mrope_section"), list) and rp["mrope_section"]:
            n = len(rp["mrope_section"])
            half = hd // 2
            base = max(half // n, 1)
            d[rk] = dict(rp, mrope_section=[half - base * (n - 1)] + [base] * (n - 1))
    if level == TINY:
        for k in ("expand", "mamba_expand"):
            if _is_int(items.get(k)) and items[k] > 1:
                d[k] = 1
        for k in ("n_groups", "mamba_n_groups"):
            if _is_int(items.get(k)) and items[k] > 1:
                d[k] = 1
        for k in ("mamba_n_heads",):
            if _is_int(items.get(k)) and items[k] > 4:
                d[k] = 4
        for k in ("mamba_d_head",):
            if _is_int(items.get(k)) and items[k] > 8:
                d[k] = 8
        # windowed vision models: the last stage is one window, as at full size
        ws, ps, dp = d.get("window_size", items.get("window_size")), d.get("patch_size", items.get("patch_size")), \
            items.get("depths")
        if _is_int(ws) and _is_int(ps) and isinstance(dp, list) and "image_size" in items:
            d["image_size"] = ps * ws * 2 ** (len(dp) - 1)
    if old_layers and "attn_layer_indices" in items and items["attn_layer_indices"] is None:
        d["attn_layer_indices"] = [1]
    if items.get("use_timm_backbone"):
        d["use_timm_backbone"] = False
        d["backbone_config"] = None
        d["backbone"] = None
    if "vocab_size" in d:
        vocab = d["vocab_size"]
        taken = 0
        for k, v in items.items():
            if (k.endswith("_token_id") or k.endswith("_token_index")) and _is_int(v) and v >= vocab:
                taken += 1
                d[k] = vocab - taken
            elif k.endswith("_token_id") and isinstance(v, list) and v and all(_is_int(x) for x in v):
                if any(x >= vocab for x in v):
                    d[k] = [vocab - 1 - i - 10 for i in range(len(v))]
    return d


_NOT_KW = {"model_type", "transformers_version", "architectures", "_name_or_path", "id2label", "label2id",
           "dtype", "torch_dtype", "_attn_implementation_autoset"}


def build_config(config_class, level, cfg=None, multimodal=False):
    """A shrunk instance of `config_class` (sub-configs shrunk recursively; a sub-config keeps
    the values its parent's default gave it)."""
    sub = cfg is not None
    if cfg is None:
        cfg = config_class()
    kw = _changes(cfg, level)
    if multimodal and level == TINY:
        rp = getattr(cfg, "rope_parameters", None)
        hd = kw.get("head_dim") or (kw.get("hidden_size", 0) // max(kw.get("num_attention_heads", 1), 1))
        if isinstance(rp, dict) and "mrope_section" not in rp and hd:
            half = int(hd * (rp.get("partial_rotary_factor") or getattr(cfg, "partial_rotary_factor", 1) or 1)) // 2
            if half >= 3:
                base = half // 3
                kw["rope_parameters"] = dict(rp, mrope_section=[half - 2 * base, base, base])
    if sub:
        try:
            full = {k: v for k, v in cfg.to_dict().items() if k not in _NOT_KW and not hasattr(v, "to_dict")}
            inner = _build(config_class, level, cfg, dict(full, **kw))
            if inner is not None:
                return inner
        except Exception:
            pass
    return _build(config_class, level, cfg, kw, strict=True)


def _build(config_class, level, cfg, kw, strict=False):
    kw = dict(kw)
    subs = getattr(config_class, "sub_configs", None) or {}
    mm = "vision_config" in subs
    for name, sub_cls in subs.items():
        sub = getattr(cfg, name, None)
        if sub is None or not hasattr(sub, "to_dict"):
            continue
        try:
            kw[name] = build_config(type(sub), level, sub, multimodal=mm)
        except Exception:
            pass
    try:
        return config_class(**kw)
    except Exception:
        if not strict:
            return None
        # some configs reject overrides of derived fields: set them afterwards
        c = config_class(**{k: v for k, v in kw.items() if k in subs})
        for k, v in kw.items():
            if k not in subs:
                setattr(c, k, v)
        return c


def _get(cfg, *names, default=None):
    for n in names:
        for c in (cfg, getattr(cfg, "text_config", None), getattr(cfg, "vision_config", None),
                  getattr(cfg, "audio_config", None), getattr(cfg, "encoder_config", None),
                  getattr(cfg, "encoder", None)):
            if c is None:
                continue
            v = getattr(c, n, None)
            if v is not None:
                return v
    return default


def _vocab(cfg):
    v = getattr(cfg, "vocab_size", None)
    if not _is_int(v):
        tc = getattr(cfg, "text_config", None) or getattr(cfg, "decoder", None)
        v = getattr(tc, "vocab_size", None) if tc is not None else None
    return v if _is_int(v) and v > 0 else VOCAB


def _image(cfg):
    vc = getattr(cfg, "vision_config", None) or cfg
    size = getattr(vc, "image_size", None) or getattr(cfg, "image_size", None) or 32
    if isinstance(size, (list, tuple)):
        h, w = size[0], size[-1]
    elif isinstance(size, dict):
        h, w = size.get("height", 32), size.get("width", 32)
    else:
        h = w = size
    ch = getattr(vc, "num_channels", None) or getattr(cfg, "num_channels", None) or 3
    return int(ch), int(h), int(w)


def make_inputs(model, cfg, gen):
    sig = inspect.signature(model.forward)
    params = sig.parameters
    main = getattr(model, "main_input_name", "input_ids")
    if main not in params:
        main = next((n for n in ("input_ids", "pixel_values", "input_values", "input_features") if n in params), main)
    inputs = {}
    vocab = _vocab(cfg)
    hi = max(vocab - 20, 6)
    if "input_ids" in params and main in ("input_ids", "pixel_values", "input_features", "input_values") and (
        main == "input_ids" or "pixel_values" not in params
    ):
        inputs["input_ids"] = torch.randint(4, hi, (2, SEQ), generator=gen)
    elif main == "input_ids" and "input_ids" in params:
        inputs["input_ids"] = torch.randint(4, hi, (2, SEQ), generator=gen)
    # dual encoders (CLIP-like) need both; image-text-to-text models (image tokens) get text only
    image_tokens = any(("image_token" in k or "image_token_index" in k) for k in cfg.to_dict())
    dual = "input_ids" in inputs and "pixel_values" in params and not image_tokens
    if main == "pixel_values" or ("pixel_values" in params and "input_ids" not in inputs) or dual:
        ch, h, w = _image(cfg)
        inputs["pixel_values"] = torch.randn(2, ch, h, w, generator=gen)
    if main == "input_values" or ("input_values" in params and not inputs):
        mel = _get(cfg, "num_mel_bins", default=None)
        if mel is not None and _get(cfg, "max_length", default=None):
            inputs["input_values"] = torch.randn(2, _get(cfg, "max_length"), mel, generator=gen)
        else:
            inputs["input_values"] = torch.randn(2, 2000, generator=gen)
    if main == "input_features" or ("input_features" in params and not inputs):
        mel = _get(cfg, "num_mel_bins", default=None)
        if mel is not None:
            src = _get(cfg, "max_source_positions", default=32)
            inputs["input_features"] = torch.randn(2, mel, 2 * src, generator=gen)
        else:
            feat = _get(cfg, "feature_size", "input_feat_per_channel", "num_mel_bins", default=80)
            chans = _get(cfg, "input_channels", default=1)
            inputs["input_features"] = torch.randn(2, 40, feat * chans, generator=gen)
    if "bbox" in params and "input_ids" in inputs:
        a = torch.randint(0, 500, (2, SEQ, 2), generator=gen)
        inputs["bbox"] = torch.cat([a, a + 10], dim=-1)
    if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        dv = _vocab(getattr(cfg, "decoder", cfg)) if hasattr(cfg, "decoder") else vocab
        inputs["decoder_input_ids"] = torch.randint(4, max(dv - 20, 6), (2, SEQ - 2), generator=gen)
    if not inputs:
        raise ValueError("no known main input (%s)" % main)
    return inputs


def jobs(mappings):
    from transformers.models.auto import configuration_auto, modeling_auto

    out = {}
    for m in mappings:
        names = getattr(modeling_auto, m + "_MAPPING_NAMES")
        for mtype, cls in names.items():
            if isinstance(cls, (list, tuple)):
                cls = cls[0]
            conf = configuration_auto.CONFIG_MAPPING_NAMES.get(mtype)
            if conf is None:
                continue
            own = cls.startswith(conf[: -len("Config")])
            if cls not in out or (own and not out[cls][1]):
                out[cls] = (mtype, own)
    return [(mtype, cls) for cls, (mtype, _) in out.items()]


def load(mtype, cls_name):
    import transformers
    from transformers.models.auto import configuration_auto

    cls = getattr(transformers, cls_name)
    config_class = configuration_auto.CONFIG_MAPPING[mtype]
    return cls, config_class


def build(cls, config_class, level, impl):
    cfg = build_config(config_class, level)
    with torch.device("meta"):
        m = cls._from_config(cfg, attn_implementation=impl)
    n = sum(p.numel() for p in m.parameters())
    if n > MAX_PARAMS:
        raise ValueError("too large at this level: %d parameters" % n)
    del m
    model = cls._from_config(cfg, attn_implementation=impl)
    model.eval()
    return model, cfg


def supports(cls, impl):
    if impl == "eager":
        return True
    return bool(getattr(cls, "_supports_sdpa", False))
