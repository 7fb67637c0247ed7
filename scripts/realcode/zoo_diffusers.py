"""diffusers models for the record run.

`SPECS` holds hand-made tiny constructors and inputs for the main families (UNets, VAEs,
DiT/PixArt/SD3/Flux transformers, controlnets); every other `ModelMixin` class exported by
`diffusers` gets a generic attempt: its constructor defaults shrunk by name, inputs made from
its forward signature. "sdpa" is the model as built (diffusers' default processors use
`F.scaled_dot_product_attention`), "eager" calls `set_default_attn_processor()` /
`set_attn_processor(AttnProcessor())` first where the model has it.
"""

import inspect

import torch

B = 2
MAX_PARAMS = 120_000_000


def _t(*shape, gen):
    return torch.randn(*shape, generator=gen)


def _ts():
    return torch.tensor([10.0, 500.0])


UNET2D_COND = dict(
    block_out_channels=(32, 64), layers_per_block=2, sample_size=16, in_channels=4, out_channels=4,
    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32,
)
FLUX = dict(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
            num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8])
SD3 = dict(sample_size=16, patch_size=1, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=4,
           caption_projection_dim=32, joint_attention_dim=32, pooled_projection_dim=64, out_channels=4,
           pos_embed_max_size=32)


def _unet_cond_inputs(gen):
    return dict(sample=_t(B, 4, 16, 16, gen=gen), timestep=_ts(), encoder_hidden_states=_t(B, 6, 32, gen=gen))


def _flux_inputs(gen, control=False):
    d = dict(hidden_states=_t(B, 16, 4, gen=gen), encoder_hidden_states=_t(B, 6, 32, gen=gen),
             pooled_projections=_t(B, 32, gen=gen), timestep=torch.tensor([0.1, 0.5]),
             img_ids=torch.randn(16, 3, generator=gen), txt_ids=torch.zeros(6, 3))
    if control:
        d["controlnet_cond"] = _t(B, 16, 4, gen=gen)
    return d


def _sd3_inputs(gen, control=False):
    d = dict(hidden_states=_t(B, 4, 16, 16, gen=gen), encoder_hidden_states=_t(B, 6, 32, gen=gen),
             pooled_projections=_t(B, 64, gen=gen), timestep=_ts())
    if control:
        d["controlnet_cond"] = _t(B, 4, 16, 16, gen=gen)
    return d


# name -> (class name, constructor kwargs, inputs(gen))
SPECS = {
    "UNet2DModel": ("UNet2DModel", dict(
        sample_size=16, in_channels=3, out_channels=3, block_out_channels=(32, 64), layers_per_block=2,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=8, norm_num_groups=32),
        lambda g: dict(sample=_t(B, 3, 16, 16, gen=g), timestep=_ts())),
    "UNet2DConditionModel": ("UNet2DConditionModel", UNET2D_COND, _unet_cond_inputs),
    "UNet2DConditionModel-linear": ("UNet2DConditionModel", dict(
        UNET2D_COND, use_linear_projection=True, attention_head_dim=(2, 4)), _unet_cond_inputs),
    "UNet1DModel": ("UNet1DModel", dict(
        block_out_channels=(32, 32, 64), extra_in_channels=16, in_channels=14, out_channels=14,
        time_embedding_type="positional", use_timestep_embedding=True, flip_sin_to_cos=False, freq_shift=1.0,
        out_block_type="OutConv1DBlock", mid_block_type="MidResTemporalBlock1D",
        down_block_types=("DownResnetBlock1D", "DownResnetBlock1D", "DownResnetBlock1D"),
        up_block_types=("UpResnetBlock1D", "UpResnetBlock1D"), act_fn="swish"),
        lambda g: dict(sample=_t(B, 14, 16, gen=g), timestep=_ts())),
    "UNet3DConditionModel": ("UNet3DConditionModel", dict(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
        down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"), up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32),
        lambda g: dict(sample=_t(B, 4, 2, 16, 16, gen=g), timestep=_ts(), encoder_hidden_states=_t(B, 6, 32, gen=g))),
    "AutoencoderKL": ("AutoencoderKL", dict(
        block_out_channels=[32, 64], in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D"] * 2,
        up_block_types=["UpDecoderBlock2D"] * 2, latent_channels=4, norm_num_groups=32),
        lambda g: dict(sample=_t(B, 3, 32, 32, gen=g))),
    "AsymmetricAutoencoderKL": ("AsymmetricAutoencoderKL", dict(
        in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D"] * 2,
        down_block_out_channels=[32, 64], layers_per_down_block=1, up_block_types=["UpDecoderBlock2D"] * 2,
        up_block_out_channels=[32, 64], layers_per_up_block=1, latent_channels=4, norm_num_groups=32),
        lambda g: dict(sample=_t(B, 3, 32, 32, gen=g))),
    "VQModel": ("VQModel", dict(
        block_out_channels=[32, 64], in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D"] * 2,
        up_block_types=["UpDecoderBlock2D"] * 2, latent_channels=3, norm_num_groups=32, num_vq_embeddings=32),
        lambda g: dict(sample=_t(B, 3, 32, 32, gen=g))),
    "AutoencoderTiny": ("AutoencoderTiny", dict(
        encoder_block_out_channels=(32, 32), decoder_block_out_channels=(32, 32), num_encoder_blocks=(1, 1),
        num_decoder_blocks=(1, 1)), lambda g: dict(sample=_t(B, 3, 32, 32, gen=g))),
    "AutoencoderDC": ("AutoencoderDC", dict(
        in_channels=3, latent_channels=4, attention_head_dim=8, encoder_block_types=("ResBlock", "EfficientViTBlock"),
        decoder_block_types=("ResBlock", "EfficientViTBlock"), encoder_block_out_channels=(16, 32),
        decoder_block_out_channels=(16, 32), encoder_qkv_multiscales=((), (5,)), decoder_qkv_multiscales=((), (5,)),
        encoder_layers_per_block=(1, 1), decoder_layers_per_block=(1, 1), upsample_block_type="interpolate",
        downsample_block_type="Conv", decoder_norm_types="rms_norm", decoder_act_fns="silu", scaling_factor=0.41407),
        lambda g: dict(sample=_t(B, 3, 32, 32, gen=g))),
    "DiTTransformer2DModel": ("DiTTransformer2DModel", dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=2, sample_size=8,
        patch_size=2, num_embeds_ada_norm=1000, norm_type="ada_norm_zero"),
        lambda g: dict(hidden_states=_t(B, 4, 8, 8, gen=g), timestep=torch.tensor([1, 2]),
                       class_labels=torch.tensor([1, 3]))),
    "Transformer2DModel-continuous": ("Transformer2DModel", dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=32, num_layers=1, cross_attention_dim=32,
        norm_num_groups=32), lambda g: dict(hidden_states=_t(B, 32, 8, 8, gen=g),
                                            encoder_hidden_states=_t(B, 6, 32, gen=g))),
    "Transformer2DModel-linear": ("Transformer2DModel", dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=32, num_layers=1, cross_attention_dim=32,
        norm_num_groups=32, use_linear_projection=True), lambda g: dict(hidden_states=_t(B, 32, 8, 8, gen=g),
                                                                         encoder_hidden_states=_t(B, 6, 32, gen=g))),
    "PixArtTransformer2DModel": ("PixArtTransformer2DModel", dict(
        sample_size=8, num_layers=2, patch_size=2, attention_head_dim=8, num_attention_heads=3, caption_channels=32,
        in_channels=4, cross_attention_dim=24, out_channels=8),
        lambda g: dict(hidden_states=_t(B, 4, 8, 8, gen=g), encoder_hidden_states=_t(B, 6, 32, gen=g),
                       timestep=_ts(), added_cond_kwargs={"aspect_ratio": None, "resolution": None})),
    "SD3Transformer2DModel": ("SD3Transformer2DModel", SD3, _sd3_inputs),
    "SD3Transformer2DModel-dual": ("SD3Transformer2DModel", dict(SD3, dual_attention_layers=(0,), qk_norm="rms_norm"),
                                   _sd3_inputs),
    "FluxTransformer2DModel": ("FluxTransformer2DModel", FLUX, _flux_inputs),
    "FluxTransformer2DModel-guidance": ("FluxTransformer2DModel", dict(FLUX, guidance_embeds=True),
                                        lambda g: dict(_flux_inputs(g), guidance=torch.tensor([3.5, 3.5]))),
    "ControlNetModel": ("ControlNetModel", dict(
        block_out_channels=(32, 64), layers_per_block=2, in_channels=4, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        cross_attention_dim=32, conditioning_embedding_out_channels=(16, 32), attention_head_dim=8, norm_num_groups=32),
        lambda g: dict(_unet_cond_inputs(g), controlnet_cond=_t(B, 3, 32, 32, gen=g))),
    "SD3ControlNetModel": ("SD3ControlNetModel", dict(
        sample_size=16, patch_size=1, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=4,
        joint_attention_dim=32, caption_projection_dim=32, pooled_projection_dim=64, out_channels=4, pos_embed_max_size=32),
        lambda g: _sd3_inputs(g, control=True)),
    "FluxControlNetModel": ("FluxControlNetModel", FLUX, lambda g: _flux_inputs(g, control=True)),
    "PriorTransformer": ("PriorTransformer", dict(
        num_attention_heads=2, attention_head_dim=4, num_layers=2, embedding_dim=8, num_embeddings=7,
        additional_embeddings=4), lambda g: dict(hidden_states=_t(B, 8, gen=g), timestep=2,
                                                   proj_embedding=_t(B, 8, gen=g),
                                                   encoder_hidden_states=_t(B, 7, 8, gen=g))),
    "HunyuanDiT2DModel": ("HunyuanDiT2DModel", dict(
        sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        cross_attention_dim=8, cross_attention_dim_t5=8, pooled_projection_dim=4, hidden_size=16,
        text_len=3, text_len_t5=3, activation_fn="gelu-approximate"), None),
}

# generic shrinking of constructor defaults, by argument name
_INT = {
    "num_layers": 2, "num_single_layers": 1, "num_refiner_layers": 1, "num_encoder_layers": 1,
    "num_decoder_layers": 1, "layers_per_block": 1, "num_blocks": 1, "depth": 2, "num_hidden_layers": 2,
    "attention_head_dim": 8, "num_attention_heads": 4, "num_kv_heads": 2, "num_key_value_heads": 2,
    "joint_attention_dim": 32, "cross_attention_dim": 32, "caption_projection_dim": 32,
    "pooled_projection_dim": 32, "caption_channels": 32, "text_dim": 32, "text_embed_dim": 32,
    "encoder_hid_dim": 32, "hidden_size": 32, "hidden_dim": 32, "inner_dim": 32, "dim": 32,
    "ffn_dim": 64, "intermediate_size": 64, "ff_inner_dim": 64, "cap_feat_dim": 32, "text_hidden_dim": 32,
    "time_embed_dim": 32, "sample_size": 8, "sample_width": 8, "sample_height": 8, "num_frames": 2,
    "sample_frames": 2, "max_text_seq_length": 8, "text_embed_dim_t5": 32, "norm_num_groups": 8,
    "num_vq_embeddings": 32, "vocab_size": 64, "max_seq_len": 64, "image_embed_dim": 32,
}


def generic_kwargs(cls):
    sig = inspect.signature(cls.__init__)
    kw = {}
    for name, p in sig.parameters.items():
        d = p.default
        if name in _INT and isinstance(d, int) and not isinstance(d, bool) and d > _INT[name]:
            kw[name] = _INT[name]
        elif isinstance(d, (tuple, list)) and d and all(isinstance(x, int) and not isinstance(x, bool) for x in d):
            if "channels" in name and d[0] > 32:
                kw[name] = type(d)(min(x, 64) if i else 32 for i, x in enumerate(d))
            elif name == "axes_dims_rope":
                kw[name] = type(d)([2, 2, 4][: len(d)] if len(d) <= 3 else [2] * len(d))
    if "axes_dims_rope" in kw and "attention_head_dim" in kw:
        kw["attention_head_dim"] = sum(kw["axes_dims_rope"])
    return kw


def _cfg(model, *names, default=None):
    c = model.config
    for n in names:
        v = c.get(n) if hasattr(c, "get") else getattr(c, n, None)
        if isinstance(v, (list, tuple)) and v:
            v = v[0]
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return default


def generic_inputs(model, gen):
    params = inspect.signature(model.forward).parameters
    name = type(model).__name__
    video = "3D" in name or "Video" in name or "Wan" in name or "Mochi" in name
    cin = _cfg(model, "in_channels", "latent_channels", "num_channels", default=4)
    size = 8
    d = {}
    main = next((p for p in ("hidden_states", "sample", "x", "latents", "z") if p in params), None)
    if main is None:
        raise ValueError("no known main input")
    if "img_ids" in params:
        d[main] = _t(B, 16, cin, gen=gen)
        d["img_ids"] = torch.randn(16, 3, generator=gen)
        if "txt_ids" in params:
            d["txt_ids"] = torch.zeros(6, 3)
    elif video:
        d[main] = _t(B, cin, 2, size, size, gen=gen)
    else:
        d[main] = _t(B, cin, size, size, gen=gen)
    if "timestep" in params:
        d["timestep"] = _ts()
    elif "timesteps" in params:
        d["timesteps"] = _ts()
    if "encoder_hidden_states" in params:
        ed = _cfg(model, "joint_attention_dim", "cross_attention_dim", "caption_channels", "text_dim",
                  "text_embed_dim", "encoder_hid_dim", "cap_feat_dim", "text_hidden_dim", default=32)
        d["encoder_hidden_states"] = _t(B, 6, ed, gen=gen)
    if "pooled_projections" in params:
        d["pooled_projections"] = _t(B, _cfg(model, "pooled_projection_dim", default=32), gen=gen)
    if "guidance" in params and model.config.get("guidance_embeds"):
        d["guidance"] = torch.tensor([3.5, 3.5])
    return d


def jobs():
    import diffusers
    from diffusers import ModelMixin

    out = list(SPECS)
    covered = {v[0] for v in SPECS.values()}
    for n in sorted(dir(diffusers)):
        if n.startswith("_") or n in covered or "Multi" in n:
            continue
        try:
            o = getattr(diffusers, n)
        except Exception:
            continue
        if inspect.isclass(o) and issubclass(o, ModelMixin) and o is not ModelMixin:
            out.append(n)
    return out


def build(name, gen):
    import diffusers

    if name in SPECS and SPECS[name][2] is not None:
        cls_name, kw, inputs = SPECS[name]
        cls = getattr(diffusers, cls_name)
    else:
        cls_name = SPECS[name][0] if name in SPECS else name
        cls = getattr(diffusers, cls_name)
        kw = SPECS[name][1] if name in SPECS else generic_kwargs(cls)
        inputs = None
    with torch.device("meta"):
        m = cls(**kw)
    n = sum(p.numel() for p in m.parameters())
    if n > MAX_PARAMS:
        raise ValueError("too large: %d parameters" % n)
    del m
    model = cls(**kw).eval()
    x = inputs(gen) if inputs is not None else generic_inputs(model, gen)
    return model, x


def set_eager(model):
    """Switch SDPA processors to the classic `AttnProcessor` (explicit softmax(QK^T)V).

    Only where every attention processor is `AttnProcessor2_0` (the classic `Attention` module);
    models with their own attention classes (Flux, Wan, ...) or joint/added-KV processors have no
    eager path of the same shape: False."""
    from diffusers.models.attention_processor import AttnProcessor

    try:
        procs = model.attn_processors
    except Exception:
        return False
    if not procs or any(type(p).__name__ != "AttnProcessor2_0" for p in procs.values()):
        return False
    model.set_attn_processor(AttnProcessor())
    return True
