"""sam2 1.1.0: SAM 2 assembled from its own modules the way configs/sam2.1/sam2.1_hiera_t.yaml
does (Hiera trunk, FPN neck, RoPE memory attention, memory encoder, SAM heads), shrunk: 128×128
images (8×8 features), Hiera embed 8 with 1-2-3-1 blocks and its default window sizes (the
last two stages pad their windows), d_model 32, memory dim 16. Video tracking runs
`track_step` over three frames of two objects (point prompt on the first, memory after); the
image predictor and the automatic mask generator run on one random image. sam2 has no
attention switch (always `F.scaled_dot_product_attention`); train = dropout on, gradients on."""

import numpy as np
import torch

from zoo3 import B, Config, randn

IMG, D, MEM = 128, 32, 16
FEAT_SIZES = [(IMG // 4, IMG // 4), (IMG // 8, IMG // 8), (IMG // 16, IMG // 16)]  # the predictor's, for 1024


def _trunk(**kw):
    from sam2.modeling.backbones.hieradet import Hiera

    args = dict(embed_dim=8, num_heads=1, stages=(1, 2, 3, 1), global_att_blocks=(4,),
                window_pos_embed_bkg_spatial_size=(4, 4))
    args.update(kw)
    return Hiera(**args)


def _image_encoder(**kw):
    from sam2.modeling.backbones.image_encoder import FpnNeck, ImageEncoder
    from sam2.modeling.position_encoding import PositionEmbeddingSine

    trunk = _trunk(**kw)
    chans = [8 * 2 ** i for i in range(4)][::-1]
    neck = FpnNeck(position_encoding=PositionEmbeddingSine(num_pos_feats=D, normalize=True, temperature=10000),
                   d_model=D, backbone_channel_list=chans, fpn_top_down_levels=[2, 3], fpn_interp_model="nearest")
    return ImageEncoder(trunk=trunk, neck=neck, scalp=1)


def _memory_attention(heads=1, layers=2):
    from sam2.modeling.memory_attention import MemoryAttention, MemoryAttentionLayer
    from sam2.modeling.sam.transformer import RoPEAttention

    f = IMG // 16
    layer = MemoryAttentionLayer(
        activation="relu", dim_feedforward=64, dropout=0.1, pos_enc_at_attn=False, d_model=D,
        self_attention=RoPEAttention(rope_theta=10000.0, feat_sizes=[f, f], embedding_dim=D, num_heads=heads,
                                     downsample_rate=1, dropout=0.1),
        pos_enc_at_cross_attn_keys=True, pos_enc_at_cross_attn_queries=False,
        cross_attention=RoPEAttention(rope_theta=10000.0, feat_sizes=[f, f], rope_k_repeat=True, embedding_dim=D,
                                      num_heads=heads, downsample_rate=1, dropout=0.1, kv_in_dim=MEM))
    return MemoryAttention(d_model=D, pos_enc_at_input=True, layer=layer, num_layers=layers)


def _memory_encoder():
    from sam2.modeling.memory_encoder import CXBlock, Fuser, MaskDownSampler, MemoryEncoder
    from sam2.modeling.position_encoding import PositionEmbeddingSine

    return MemoryEncoder(
        out_dim=MEM, in_dim=D,
        position_encoding=PositionEmbeddingSine(num_pos_feats=MEM, normalize=True, temperature=10000),
        mask_downsampler=MaskDownSampler(embed_dim=D, kernel_size=3, stride=2, padding=1),
        fuser=Fuser(layer=CXBlock(dim=D, kernel_size=7, padding=3, layer_scale_init_value=1e-6, use_dwconv=True),
                    num_layers=2))


TINY_T = dict(  # the switches of sam2.1_hiera_t.yaml
    num_maskmem=3, sigmoid_scale_for_mem_enc=20.0, sigmoid_bias_for_mem_enc=-10.0,
    use_mask_input_as_output_without_sam=True, directly_add_no_mem_embed=True, no_obj_embed_spatial=True,
    use_high_res_features_in_sam=True, multimask_output_in_sam=True, iou_prediction_use_sigmoid=True,
    use_obj_ptrs_in_encoder=True, add_tpos_enc_to_obj_ptrs=True, proj_tpos_enc_in_obj_ptrs=True,
    use_signed_tpos_enc_to_obj_ptrs=True, only_obj_ptrs_in_the_past_for_eval=True, pred_obj_scores=True,
    pred_obj_scores_mlp=True, fixed_no_obj_ptr=True, multimask_output_for_tracking=True,
    use_multimask_token_for_obj_ptr=True, multimask_min_pt_num=0, multimask_max_pt_num=1,
    use_mlp_for_obj_ptr_proj=True)

PLAIN = dict(num_maskmem=3, directly_add_no_mem_embed=True)  # else defaults: no high-res features, no pointers


def _sam2(heads=1, trunk=None, **kw):
    from sam2.modeling.sam2_base import SAM2Base

    return SAM2Base(image_encoder=_image_encoder(**(trunk or {})), memory_attention=_memory_attention(heads),
                    memory_encoder=_memory_encoder(), image_size=IMG, **kw)


def _track(gen, frames=3, mask_first=False):
    imgs = randn(frames, B, 3, IMG, IMG, gen=gen)
    coords = torch.rand(B, 2, 2, generator=gen) * IMG
    labels = torch.tensor([[1, 0]] * B, dtype=torch.int32)
    mask = (randn(B, 1, IMG, IMG, gen=gen) > 0).float()

    def run(m):
        out = {"cond_frame_outputs": {}, "non_cond_frame_outputs": {}}
        for t in range(frames):
            backbone = m.forward_image(imgs[t])
            _, feats, pos, sizes = m._prepare_backbone_features(backbone)
            cond = t == 0
            points = None if not cond or mask_first else {"point_coords": coords, "point_labels": labels}
            masks = mask if cond and mask_first else None
            o = m.track_step(frame_idx=t, is_init_cond_frame=cond, current_vision_feats=feats,
                             current_vision_pos_embeds=pos, feat_sizes=sizes, point_inputs=points,
                             mask_inputs=masks, output_dict=out, num_frames=frames, run_mem_encoder=True)
            out["cond_frame_outputs" if cond else "non_cond_frame_outputs"][t] = o
        return out

    return run


def _video(kw, heads=1, mask_first=False, trunk=None):
    def build(gen, fused):
        return _sam2(heads=heads, trunk=trunk, **kw), _track(gen, mask_first=mask_first)

    return build


def _image(gen, fused):
    from sam2.sam2_image_predictor import SAM2ImagePredictor

    model = _sam2(**TINY_T)
    img = (torch.rand(96, 80, 3, generator=gen) * 255).numpy().astype(np.uint8)
    pts = np.array([[10.0, 20.0], [40.0, 30.0]])

    def run(m):
        p = SAM2ImagePredictor(m)
        p._bb_feat_sizes = FEAT_SIZES
        p.set_image(img)
        p.predict(point_coords=pts, point_labels=np.array([1, 0]), multimask_output=True)
        p.predict(box=np.array([5.0, 5.0, 60.0, 70.0]), multimask_output=False)
        p.set_image_batch([img, img])
        p.predict_batch([pts, pts], [np.array([1, 1]), np.array([1, 0])])

    return model, run


def _amg(gen, fused):
    from sam2.automatic_mask_generator import SAM2AutomaticMaskGenerator

    model = _sam2(**TINY_T)
    img = (torch.rand(64, 64, 3, generator=gen) * 255).numpy().astype(np.uint8)

    def run(m):
        g = SAM2AutomaticMaskGenerator(m, points_per_side=2, points_per_batch=4, pred_iou_thresh=0.0,
                                       stability_score_thresh=0.0, crop_n_layers=1, min_mask_region_area=0)
        g.predictor._bb_feat_sizes = FEAT_SIZES
        return g.generate(img)

    return model, run


def _hiera(kw):
    def build(gen, fused):
        return _trunk(**kw), randn(B, 3, IMG, IMG, gen=gen)

    return build


def _encoder(gen, fused):
    return _image_encoder(), randn(B, 3, IMG, IMG, gen=gen)


def _mem_attn(heads):
    def build(gen, fused):
        f = (IMG // 16) ** 2
        cur = randn(f, B, D, gen=gen)
        mem = randn(2 * f + 4, B, MEM, gen=gen)
        return _memory_attention(heads), lambda m: m(curr=[cur], memory=mem, curr_pos=[cur], memory_pos=mem,
                                                       num_obj_ptr_tokens=4)

    return build


def _mask_decoder(high_res, obj_scores):
    from sam2.modeling.sam.mask_decoder import MaskDecoder
    from sam2.modeling.sam.prompt_encoder import PromptEncoder
    from sam2.modeling.sam.transformer import TwoWayTransformer

    def build(gen, fused):
        f = IMG // 16
        pe = PromptEncoder(embed_dim=D, image_embedding_size=(f, f), input_image_size=(IMG, IMG), mask_in_chans=16)
        dec = MaskDecoder(num_multimask_outputs=3, transformer_dim=D, iou_head_depth=3, iou_head_hidden_dim=32,
                          transformer=TwoWayTransformer(depth=2, embedding_dim=D, mlp_dim=64, num_heads=8),
                          use_high_res_features=high_res, pred_obj_scores=obj_scores, pred_obj_scores_mlp=obj_scores,
                          use_multimask_token_for_obj_ptr=obj_scores, iou_prediction_use_sigmoid=True)
        m = torch.nn.ModuleDict(dict(pe=pe, dec=dec))
        emb = randn(B, D, f, f, gen=gen)
        hr = [randn(B, D // 8, 4 * f, 4 * f, gen=gen), randn(B, D // 4, 2 * f, 2 * f, gen=gen)] if high_res else None
        pts = (torch.rand(B, 3, 2, generator=gen) * IMG, torch.ones(B, 3, dtype=torch.int64))
        boxes = torch.tensor([[4.0, 4.0, 60.0, 60.0]] * B)
        masks = randn(B, 1, 4 * f, 4 * f, gen=gen)

        def run(mm):
            sp, de = mm["pe"](points=pts, boxes=boxes, masks=masks)
            return mm["dec"](image_embeddings=emb, image_pe=mm["pe"].get_dense_pe(), sparse_prompt_embeddings=sp,
                             dense_prompt_embeddings=de, multimask_output=True, repeat_image=False,
                             high_res_features=hr)

        return m, run

    return build


def configs():
    return {
        "SAM2Base-track-tiny_t": Config(_video(TINY_T), train=True),
        "SAM2Base-track-tiny_t-2heads": Config(_video(TINY_T, heads=2)),
        "SAM2Base-track-mask-prompt": Config(_video(TINY_T, mask_first=True)),
        "SAM2Base-track-plain": Config(_video(PLAIN), train=True),
        "SAM2Base-track-global-windows": Config(_video(TINY_T, trunk=dict(window_spec=(8, 4, 8, 4)))),
        "SAM2ImagePredictor": Config(_image),
        "SAM2AutomaticMaskGenerator": Config(_amg),
        "Hiera": Config(_hiera({}), train=True),
        "Hiera-2heads-qpool2": Config(_hiera(dict(num_heads=2, q_pool=2, stages=(1, 1, 2, 1), global_att_blocks=(3,)))),
        "ImageEncoder": Config(_encoder),
        "MemoryAttention": Config(_mem_attn(1), train=True),
        "MemoryAttention-2heads": Config(_mem_attn(2)),
        "MaskDecoder-high-res-obj-scores": Config(_mask_decoder(True, True)),
        "MaskDecoder-plain": Config(_mask_decoder(False, False)),
    }
