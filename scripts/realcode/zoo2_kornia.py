"""kornia 0.9.0: the learned feature modules (descriptors, detectors, orientation and affine
shape, LoFTR, LightGlue, SOLD2) with random weights (`pretrained=False`), the models (ViT,
TinyViT, MobileViT, SAM, SigLIP2, Qwen2.5-VL vision, Kimi-VL, PaliGemma, RT-DETR) at tiny
sizes, and module forms of image operators (filters, color, geometry, augmentations and their
containers) on 2x3x32x32 images / 8x1x32x32 patches. LightGlue's attention switch ("flash")
is the one eager/fused pair."""

import torch

from zoo2 import B, Config, constructed, randn


def img(c=3, s=32):
    return lambda gen: torch.rand(B, c, s, s, generator=gen)


def patches(n=8, s=32):
    return lambda gen: torch.rand(n, 1, s, s, generator=gen)


def _lafs(gen):
    from kornia.feature import laf_from_center_scale_ori

    xy = torch.rand(B, 6, 2, generator=gen) * 16 + 8
    return laf_from_center_scale_ori(xy, torch.full((B, 6, 1, 1), 4.0), torch.zeros(B, 6, 1))


# name -> (dotted class, kwargs, input maker, train differs)
SPECS = {
    # learned descriptors and detectors
    "HardNet": ("kornia.feature.HardNet", dict(pretrained=False), patches(), True),
    "HardNet8": ("kornia.feature.HardNet8", dict(pretrained=False), patches(), True),
    "SOSNet": ("kornia.feature.SOSNet", dict(pretrained=False), patches(), False),
    "TFeat": ("kornia.feature.TFeat", dict(pretrained=False), patches(s=32), False),
    "HyNet": ("kornia.feature.HyNet", dict(pretrained=False), patches(), True),
    "MKDDescriptor": ("kornia.feature.MKDDescriptor", dict(patch_size=32, whitening=None), patches(), False),
    "MKDDescriptor-cart": ("kornia.feature.MKDDescriptor", dict(patch_size=32, kernel_type="cart", whitening=None),
                           patches(), False),
    "SIFTDescriptor": ("kornia.feature.SIFTDescriptor", dict(patch_size=32), patches(), False),
    "DenseSIFTDescriptor": ("kornia.feature.DenseSIFTDescriptor", {}, img(1), False),
    "PatchDominantGradientOrientation": ("kornia.feature.PatchDominantGradientOrientation", {}, patches(), False),
    "OriNet": ("kornia.feature.OriNet", dict(pretrained=False), patches(), False),
    "PatchAffineShapeEstimator": ("kornia.feature.PatchAffineShapeEstimator", dict(patch_size=19), patches(s=19),
                                  False),
    "LAFAffNetShapeEstimator": ("kornia.feature.LAFAffNetShapeEstimator", dict(pretrained=False),
                                lambda gen: (_lafs(gen), torch.rand(B, 1, 32, 32, generator=gen)), False),
    "LAFOrienter": ("kornia.feature.LAFOrienter", dict(patch_size=19),
                    lambda gen: (_lafs(gen), torch.rand(B, 1, 32, 32, generator=gen)), False),
    "KeyNet": ("kornia.feature.KeyNet", dict(pretrained=False), img(1), False),
    "ScaleSpaceDetector": ("kornia.feature.ScaleSpaceDetector", dict(num_features=16), img(1), False),
    "CornerHarris": ("kornia.feature.CornerGFTT", {}, img(1), False),
    "BlobHessian": ("kornia.feature.BlobHessian", {}, img(1), False),
    "SOLD2": ("kornia.feature.SOLD2", dict(pretrained=False), img(1, 64), False),
    "LoFTR": ("kornia.feature.LoFTR", dict(pretrained=None),
              lambda gen: {"data": {"image0": torch.rand(1, 1, 64, 64, generator=gen),
                                    "image1": torch.rand(1, 1, 64, 64, generator=gen)}}, False),
    # models
    "VisionTransformer": ("kornia.models.vit.VisionTransformer",
                          dict(image_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=4), img(), True),
    "TinyViT": ("kornia.models.tiny_vit.TinyViT", dict(img_size=64, num_classes=10, embed_dims=(16, 32, 32, 32),
                                                      depths=(1, 1, 1, 1), num_heads=(1, 2, 2, 2),
                                                      window_sizes=(2, 2, 2, 2)), img(s=64), False),
    "MobileViT": ("kornia.models.vit_mobile.MobileViT", dict(mode="xxs"), img(s=64), False),
    "ConvSoftArgmax3d": ("kornia.geometry.subpix.ConvSoftArgmax3d", {},
                         lambda gen: torch.rand(B, 2, 3, 16, 16, generator=gen), False),
    "ConvQuadInterp3d": ("kornia.geometry.subpix.ConvQuadInterp3d", {},
                         lambda gen: torch.rand(B, 2, 3, 16, 16, generator=gen), False),
    "ExtractTensorPatches": ("kornia.contrib.ExtractTensorPatches", dict(window_size=8, stride=4), img(), False),
    "CombineTensorPatches": ("kornia.contrib.CombineTensorPatches", dict(original_size=(32, 32), window_size=8),
                             lambda gen: torch.rand(B, 16, 3, 8, 8, generator=gen), False),
    # image operators as modules
    "GaussianBlur2d": ("kornia.filters.GaussianBlur2d", dict(kernel_size=(5, 5), sigma=(1.5, 1.5)), img(), False),
    "Canny": ("kornia.filters.Canny", {}, img(), False),
    "Sobel": ("kornia.filters.Sobel", {}, img(), False),
    "MedianBlur": ("kornia.filters.MedianBlur", dict(kernel_size=(3, 3)), img(), False),
    "BilateralBlur": ("kornia.filters.BilateralBlur", dict(kernel_size=(5, 5), sigma_color=0.1,
                                                           sigma_space=(1.5, 1.5)), img(), False),
    "GuidedBlur": ("kornia.filters.GuidedBlur", dict(kernel_size=5, eps=0.1), lambda gen: (
        torch.rand(B, 3, 32, 32, generator=gen), torch.rand(B, 3, 32, 32, generator=gen)), False),
    "MotionBlur": ("kornia.filters.MotionBlur", dict(kernel_size=5, angle=30.0, direction=0.5), img(), False),
    "RgbToLab": ("kornia.color.RgbToLab", {}, img(), False),
    "RgbToYuv420": ("kornia.color.RgbToYuv420", {}, img(), False),
    "ZCAWhitening": ("kornia.enhance.ZCAWhitening", {}, lambda gen: (lambda m: m(torch.rand(8, 3, 8, 8,
                                                                                          generator=gen),
                                                                                  include_fit=True)), False),
    "Denormalize": ("kornia.enhance.Denormalize", dict(mean=torch.tensor([0.5, 0.5, 0.5]),
                                                       std=torch.tensor([0.2, 0.2, 0.2])), img(), False),
    "PyrUp": ("kornia.geometry.transform.PyrUp", {}, img(), False),
    "ScalePyramid": ("kornia.geometry.transform.ScalePyramid", dict(n_levels=2, min_size=8), img(1), False),
    "Rotate": ("kornia.geometry.transform.Rotate", dict(angle=torch.tensor([30.0, 45.0])), img(), False),
    "Affine": ("kornia.geometry.transform.Affine", dict(angle=torch.tensor([30.0, 45.0]),
                                                        scale_factor=torch.tensor([[1.1, 1.0], [0.9, 1.2]])), img(),
               False),
    "RandomAffine": ("kornia.augmentation.RandomAffine", dict(degrees=30.0, p=1.0), img(), True),
    "RandomPerspective": ("kornia.augmentation.RandomPerspective", dict(p=1.0), img(), True),
    "ColorJiggle": ("kornia.augmentation.ColorJiggle", dict(brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1,
                                                            p=1.0), img(), True),
    "RandomResizedCrop": ("kornia.augmentation.RandomResizedCrop", dict(size=(16, 16), p=1.0), img(), True),
    "RandomErasing": ("kornia.augmentation.RandomErasing", dict(p=1.0), img(), True),
    "RandomMosaic": ("kornia.augmentation.RandomMosaic", dict(output_size=(32, 32), p=1.0), img(), True),
    "RandomThinPlateSpline": ("kornia.augmentation.RandomThinPlateSpline", dict(p=1.0), img(), True),
    "RandomElasticTransform": ("kornia.augmentation.RandomElasticTransform", dict(p=1.0), img(), True),
    "RandomJigsaw": ("kornia.augmentation.RandomJigsaw", dict(grid=(4, 4), p=1.0), img(), True),
    "RandomCutMixV2": ("kornia.augmentation.RandomCutMixV2", dict(p=1.0), img(), True),
    "RandomRain": ("kornia.augmentation.RandomRain", dict(p=1.0, drop_height=(2, 4), drop_width=(1, 2)), img(),
                   False),
    "RandomAffine3D": ("kornia.augmentation.RandomAffine3D", dict(degrees=20.0, p=1.0),
                       lambda gen: torch.rand(B, 1, 8, 16, 16, generator=gen), True),
}


def _lightglue(gen, fused):
    from kornia.feature import LightGlue

    model = LightGlue(None, n_layers=2, descriptor_dim=32, input_dim=32, num_heads=4,
                      flash=bool(fused), depth_confidence=-1, width_confidence=-1)

    def image(n):
        return {"keypoints": torch.rand(B, n, 2, generator=gen) * 60 + 2, "descriptors": randn(B, n, 32, gen=gen),
                "image_size": torch.tensor([[64.0, 64.0]] * B)}

    return model, {"data": {"image0": image(12), "image1": image(10)}}


# --- kornia's ports of vision-language towers and detectors, from tiny configs ---------------


def _siglip2(gen, fused):
    from kornia.models.siglip2 import SigLip2Builder
    from kornia.models.siglip2.config import SigLip2Config, SigLip2TextConfig, SigLip2VisionConfig

    cfg = SigLip2Config(vision_config=SigLip2VisionConfig(image_size=32, patch_size=8, hidden_size=32,
                                                          num_hidden_layers=2, num_attention_heads=4,
                                                          intermediate_size=64),
                        text_config=SigLip2TextConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                                      num_attention_heads=4, intermediate_size=64,
                                                      max_position_embeddings=16))
    return SigLip2Builder.from_config(cfg), dict(pixel_values=torch.rand(B, 3, 32, 32, generator=gen),
                                                 input_ids=torch.randint(0, 100, (B, 8), generator=gen))


def _qwen25(gen, fused):
    from kornia.models.qwen25.config import Qwen25VisionConfig
    from kornia.models.qwen25.vision import Qwen25VisionTransformer

    cfg = Qwen25VisionConfig(depth=2, hidden_size=32, intermediate_size=64, num_heads=4, patch_size=4, window_size=16,
                             fullatt_block_indexes=(1,), out_hidden_size=32)
    return Qwen25VisionTransformer(cfg), torch.rand(B, 3, 32, 32, generator=gen)


def _kimi_vl(gen, fused):
    from kornia.models.kimi_vl.builder import KimiVLBuilder
    from kornia.models.kimi_vl.config import KimiVLConfig, KimiVLProjectorConfig, MoonViTConfig

    cfg = KimiVLConfig(vision_config=MoonViTConfig(image_size=32, patch_size=4, init_pos_emb_height=8,
                                                   init_pos_emb_width=8, hidden_size=32, num_hidden_layers=2,
                                                   num_attention_heads=4, intermediate_size=64),
                       projector_config=KimiVLProjectorConfig(input_dim=32, hidden_dim=64, output_dim=32))
    return KimiVLBuilder.from_config(cfg), torch.rand(B, 3, 32, 32, generator=gen)


def _paligemma(gen, fused):
    from kornia.models.paligemma.configuration_paligemma import PaliGemmaConfig
    from kornia.models.paligemma.modeling_paligemma import PaliGemma
    from kornia.models.siglip2.config import SigLip2VisionConfig

    cfg = PaliGemmaConfig(vision_config=SigLip2VisionConfig(image_size=32, patch_size=8, hidden_size=32,
                                                            num_hidden_layers=1, num_attention_heads=4,
                                                            intermediate_size=64),
                          vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=1, head_dim=8, max_position_embeddings=64,
                          image_token_index=99)
    return PaliGemma(cfg), dict(input_ids=torch.randint(1, 99, (B, 8), generator=gen),
                                pixel_values=torch.rand(B, 3, 32, 32, generator=gen))


def _rtdetr(gen, fused):
    from kornia.models.rt_detr.model import RTDETR, RTDETRConfig

    cfg = RTDETRConfig("resnet18d", num_classes=10, input_size=64, head_hidden_dim=32, head_num_queries=20,
                       neck_hidden_dim=32, neck_dim_feedforward=64, head_num_decoder_layers=2)
    return RTDETR.from_config(cfg), torch.rand(B, 3, 64, 64, generator=gen)


def _sam(gen, fused):
    """kornia's SAM assembled from its architecture modules at 64x64 (patch 8, embedding 32)."""
    from kornia.models.sam.architecture.image_encoder import ImageEncoderViT
    from kornia.models.sam.architecture.mask_decoder import MaskDecoder
    from kornia.models.sam.architecture.prompt_encoder import PromptEncoder
    from kornia.models.sam.architecture.transformer import TwoWayTransformer
    from kornia.models.sam.model import Sam

    enc = ImageEncoderViT(64, patch_size=8, embed_dim=32, depth=2, num_heads=4, out_chans=32, use_rel_pos=True,
                          window_size=3, global_attn_indexes=(1,))
    prompt = PromptEncoder(embed_dim=32, image_embedding_size=(8, 8), input_image_size=(64, 64), mask_in_chans=4)
    decoder = MaskDecoder(transformer_dim=32, transformer=TwoWayTransformer(depth=2, embedding_dim=32, mlp_dim=64,
                                                                            num_heads=4),
                          num_multimask_outputs=3, iou_head_depth=2, iou_head_hidden_dim=32)
    images = torch.rand(B, 3, 64, 64, generator=gen)
    prompts = [{"points": (torch.rand(3, 2, 2, generator=gen) * 60, torch.tensor([[1, 0], [1, 1], [0, 1]])),
                "boxes": torch.tensor([[4.0, 4.0, 40.0, 30.0]] * 3)} for _ in range(B)]
    return Sam(enc, prompt, decoder), lambda m: m(images, prompts, multimask_output=True)


def _patch_sequential(gen, fused):
    import kornia.augmentation as K

    model = K.PatchSequential(K.ColorJiggle(0.1, 0.1, 0.1, 0.1, p=1.0), K.RandomAffine(10.0, p=1.0),
                              grid_size=(2, 2), patchwise_apply=False)
    return model, torch.rand(B, 3, 32, 32, generator=gen)


def _augmentation_sequential(gen, fused):
    import kornia.augmentation as K

    model = K.AugmentationSequential(K.RandomAffine(20.0, p=1.0), K.RandomPerspective(p=1.0),
                                     data_keys=["input", "keypoints", "bbox_xyxy", "mask"])
    return model, (torch.rand(B, 3, 32, 32, generator=gen), torch.rand(B, 5, 2, generator=gen) * 32,
                   torch.tensor([[[2.0, 2.0, 20.0, 20.0]]] * B), torch.rand(B, 1, 32, 32, generator=gen))


def _diamond_square(gen, fused):
    from kornia.contrib import diamond_square

    return torch.nn.Identity(), lambda m: diamond_square((B, 1, 33, 33), roughness=0.5, random_scale=1.0)


# name -> build: the containers and functions above and the ports of larger models
BUILDS = {"PatchSequential": _patch_sequential, "AugmentationSequential": _augmentation_sequential,
          "diamond_square": _diamond_square, "Sam": _sam, "SigLip2": _siglip2, "Qwen25VisionTransformer": _qwen25,
          "KimiVL": _kimi_vl, "PaliGemma": _paligemma, "RTDETR-resnet18d": _rtdetr}


def configs():
    out = {name: Config(constructed(*spec[:3]), train=spec[3]) for name, spec in SPECS.items()}
    out["LightGlue"] = Config(_lightglue, attn=True)
    out.update({name: Config(build) for name, build in BUILDS.items()})
    return out
