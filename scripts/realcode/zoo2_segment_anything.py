"""segment-anything 1.0: Sam assembled from its modeling classes at tiny sizes (64x64 images,
patch 8, embedding 32, windowed and global attention with relative positions), prompted with
points, boxes and masks; the image encoder alone with other settings; the prompt encoder and
the mask decoder come with Sam."""

from functools import partial

import torch

from zoo2 import Config, randn

IMG, PATCH, DIM = 64, 8, 32


def _encoder(**kw):
    from segment_anything.modeling import ImageEncoderViT

    base = dict(depth=2, embed_dim=DIM, img_size=IMG, mlp_ratio=2, norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
                num_heads=4, patch_size=PATCH, qkv_bias=True, use_rel_pos=True, global_attn_indexes=[1],
                window_size=3, out_chans=DIM)
    base.update(kw)
    return ImageEncoderViT(**base)


def _sam(**enc):
    from segment_anything.modeling import MaskDecoder, PromptEncoder, Sam, TwoWayTransformer

    emb = IMG // PATCH
    return Sam(image_encoder=_encoder(**enc),
               prompt_encoder=PromptEncoder(embed_dim=DIM, image_embedding_size=(emb, emb),
                                            input_image_size=(IMG, IMG), mask_in_chans=4),
               mask_decoder=MaskDecoder(num_multimask_outputs=3,
                                        transformer=TwoWayTransformer(depth=2, embedding_dim=DIM, mlp_dim=64,
                                                                      num_heads=4),
                                        transformer_dim=DIM, iou_head_depth=2, iou_head_hidden_dim=32),
               pixel_mean=[123.675, 116.28, 103.53], pixel_std=[58.395, 57.12, 57.375])


def _prompt(gen, kind):
    d = dict(image=randn(3, 56, IMG, gen=gen) * 50 + 120, original_size=(112, 128))
    if kind in ("points", "all"):
        d["point_coords"] = torch.rand(3, 2, 2, generator=gen) * 56
        d["point_labels"] = torch.tensor([[1, 0], [1, 1], [0, 1]])
    if kind in ("boxes", "all"):
        d["boxes"] = torch.tensor([[4.0, 4.0, 40.0, 30.0], [10.0, 8.0, 50.0, 50.0], [0.0, 0.0, 20.0, 20.0]])
    if kind in ("masks", "all"):
        d["mask_inputs"] = randn(3, 1, 4 * IMG // PATCH, 4 * IMG // PATCH, gen=gen)
    return d


def _sam_config(kind, multimask, **enc):
    def build(gen, fused):
        batch = [_prompt(gen, kind), _prompt(gen, kind)]
        return _sam(**enc), lambda m: m(batch, multimask_output=multimask)

    return build


def _encoder_config(**kw):
    return lambda gen, fused: (_encoder(**kw), randn(2, 3, IMG, IMG, gen=gen))


def configs():
    return {
        "Sam-points-multimask": Config(_sam_config("points", True)),
        "Sam-boxes": Config(_sam_config("boxes", False)),
        "Sam-all-prompts": Config(_sam_config("all", True)),
        "Sam-masks-noabs": Config(_sam_config("masks", False, use_abs_pos=False)),
        "ImageEncoderViT-global": Config(_encoder_config(window_size=0, global_attn_indexes=[])),
        "ImageEncoderViT-window-norel": Config(_encoder_config(use_rel_pos=False, window_size=4)),
        "ImageEncoderViT-window-padded": Config(_encoder_config(window_size=3, global_attn_indexes=[0])),
    }
