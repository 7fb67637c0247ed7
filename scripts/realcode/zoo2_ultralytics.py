"""ultralytics 8.4.190: YOLO models built from the package's own yaml configs at scale "n"
(the smallest; `yolov8n.yaml` reads yolov8.yaml with that scale), 10 classes, random
weights, on 2x3x64x64 images; detection-type heads in eval and train (the head's decoding runs
only in eval). RT-DETR at scale "l" with its smallest backbone (eval). The SAM / SAM2 modules
(`ultralytics.models.sam.modules`) assembled at tiny sizes (their builders fix 1024x1024
images): the ViT encoder, Hiera with its FPN neck, prompt encoder with the SAM
and SAM2 mask decoders, SAM2's memory encoder and memory attention."""

import torch

from zoo2 import B, Config, randn

# name -> (yaml, task)
SPECS = {
    "yolov3-tiny": ("yolov3-tinyu.yaml", "detect"),
    "yolov5n": ("yolov5nu.yaml", "detect"),
    "yolov6n": ("yolov6n.yaml", "detect"),
    "yolov8n": ("yolov8n.yaml", "detect"),
    "yolov8n-p2": ("yolov8n-p2.yaml", "detect"),
    "yolov8n-ghost": ("yolov8n-ghost.yaml", "detect"),
    "yolov8n-seg": ("yolov8n-seg.yaml", "segment"),
    "yolov8n-pose": ("yolov8n-pose.yaml", "pose"),
    "yolov8n-obb": ("yolov8n-obb.yaml", "obb"),
    "yolov8n-cls": ("yolov8n-cls.yaml", "classify"),
    "yolov9t": ("yolov9t.yaml", "detect"),
    "yolov10n": ("yolov10n.yaml", "detect"),
    "yolo11n": ("yolo11n.yaml", "detect"),
    "yolo11n-seg": ("yolo11n-seg.yaml", "segment"),
    "yolo11n-pose": ("yolo11n-pose.yaml", "pose"),
    "yolo11n-obb": ("yolo11n-obb.yaml", "obb"),
    "yolo11n-cls": ("yolo11n-cls.yaml", "classify"),
    "yolo12n": ("yolo12n.yaml", "detect"),
    "yolo12n-seg": ("yolo12n-seg.yaml", "segment"),
    "yolo12n-cls": ("yolo12n-cls.yaml", "classify"),
    "yolo26n": ("yolo26n.yaml", "detect"),
    "yolo26n-seg": ("yolo26n-seg.yaml", "segment"),
    "yolo26n-pose": ("yolo26n-pose.yaml", "pose"),
    "yolo26n-obb": ("yolo26n-obb.yaml", "obb"),
    "yolo26n-sem": ("yolo26n-sem.yaml", "semseg"),
    "yolo26n-depth": ("yolo26n-depth.yaml", "depth"),
    "rtdetr-l": ("rtdetr-l.yaml", "rtdetr"),
}
CLASSES = dict(detect="DetectionModel", segment="SegmentationModel", pose="PoseModel", obb="OBBModel",
               classify="ClassificationModel", semseg="SemanticSegmentationModel", depth="DepthModel",
               rtdetr="RTDETRDetectionModel")
TRAIN_DIFFERS = ("detect", "segment", "pose", "obb")


def _build(yaml_name, task):
    def build(gen, fused):
        from ultralytics.nn import tasks

        model = getattr(tasks, CLASSES[task])(yaml_name, nc=10, verbose=False)
        return model, torch.rand(2, 3, 64, 64, generator=gen)

    return build


def _sam_modules():
    import importlib

    return importlib.import_module("ultralytics.models.sam.modules.encoders"), \
        importlib.import_module("ultralytics.models.sam.modules.decoders"), \
        importlib.import_module("ultralytics.models.sam.modules.transformer")


def _vit_encoder(gen, fused):
    enc, _, _ = _sam_modules()
    return enc.ImageEncoderViT(img_size=64, patch_size=8, embed_dim=32, depth=2, num_heads=4, out_chans=32,
                               use_rel_pos=True, window_size=3, global_attn_indexes=(1,)), randn(B, 3, 64, 64, gen=gen)


def _hiera(gen, fused):
    enc, _, _ = _sam_modules()
    trunk = enc.Hiera(embed_dim=16, num_heads=1, stages=(1, 1, 2, 1), global_att_blocks=(3,),
                      window_pos_embed_bkg_spatial_size=(4, 4), window_spec=(4, 2, 2, 2))
    neck = enc.FpnNeck(d_model=32, backbone_channel_list=[128, 64, 32, 16], fpn_top_down_levels=[2, 3],
                       fpn_interp_model="nearest")
    return enc.ImageEncoder(trunk=trunk, neck=neck, scalp=1), randn(B, 3, 64, 64, gen=gen)


def _prompt_decoder(sam2):
    """The prompt encoder and a mask decoder (SAM's or SAM2's) on an 8x8 image embedding."""
    def build(gen, fused):
        enc, dec, tr = _sam_modules()
        prompt = enc.PromptEncoder(embed_dim=32, image_embedding_size=(8, 8), input_image_size=(64, 64),
                                   mask_in_chans=4)
        two_way = tr.TwoWayTransformer(depth=2, embedding_dim=32, mlp_dim=64, num_heads=4)
        extra = dict(pred_obj_scores=True, use_multimask_token_for_obj_ptr=True,
                     dynamic_multimask_via_stability=True) if sam2 else {}
        decoder = (dec.SAM2MaskDecoder if sam2 else dec.MaskDecoder)(
            transformer_dim=32, transformer=two_way, iou_head_depth=2, iou_head_hidden_dim=32, **extra)
        model = torch.nn.ModuleDict(dict(prompt=prompt, decoder=decoder))
        points = (torch.rand(B, 3, 2, generator=gen) * 64, torch.tensor([[1, 0, 1], [1, 1, 0]]))
        boxes = torch.tensor([[4.0, 4.0, 40.0, 30.0], [10.0, 8.0, 50.0, 50.0]])
        masks = randn(B, 1, 32, 32, gen=gen)
        image = randn(1, 32, 8, 8, gen=gen)  # the decoders repeat the image for each prompt

        def run(m):
            sparse, dense = m["prompt"](points=points, boxes=boxes, masks=masks)
            args = (image, m["prompt"].get_dense_pe(), sparse, dense, not sam2)
            return m["decoder"](*args, repeat_image=True) if sam2 else m["decoder"](*args)

        return model, run

    return build


def _memory_encoder(gen, fused):
    enc, _, _ = _sam_modules()
    # (its mask downsampler is 256 wide whatever in_dim says)
    return enc.MemoryEncoder(out_dim=16), (randn(B, 256, 8, 8, gen=gen), randn(B, 1, 128, 128, gen=gen))


def _memory_attention(gen, fused):
    from ultralytics.models.sam.modules.blocks import RoPEAttention
    from ultralytics.models.sam.modules.memory_attention import MemoryAttention, MemoryAttentionLayer

    layer = MemoryAttentionLayer(d_model=32, dim_feedforward=64,
                                 self_attn=RoPEAttention(embedding_dim=32, num_heads=1, downsample_rate=1,
                                                         feat_sizes=(4, 4)),
                                 cross_attn=RoPEAttention(embedding_dim=32, num_heads=1, downsample_rate=1,
                                                          kv_in_dim=16, feat_sizes=(4, 4), rope_k_repeat=True))
    model = MemoryAttention(d_model=32, pos_enc_at_input=True, layer=layer, num_layers=2)
    curr, pos = randn(16, B, 32, gen=gen), randn(16, B, 32, gen=gen)
    memory, mpos = randn(32, B, 16, gen=gen), randn(32, B, 16, gen=gen)
    return model, (curr, memory, pos, mpos)


SAM = {"sam-ImageEncoderViT": _vit_encoder, "sam2-Hiera-FpnNeck": _hiera,
       "sam-PromptEncoder-MaskDecoder": _prompt_decoder(False), "sam2-PromptEncoder-MaskDecoder": _prompt_decoder(True),
       "sam2-MemoryEncoder": _memory_encoder, "sam2-MemoryAttention": _memory_attention}


def configs():
    out = {name: Config(_build(y, task), train=task in TRAIN_DIFFERS) for name, (y, task) in SPECS.items()}
    out.update({name: Config(build) for name, build in SAM.items()})
    return out
