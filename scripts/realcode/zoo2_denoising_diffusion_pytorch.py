"""denoising-diffusion-pytorch 2.3.4: the U-Nets (2-D, 1-D, Karras 1-D/2-D/3-D, U-ViT,
classifier-free guidance, guided) on 16x16 images / length-32 sequences with a time step,
and the diffusion wrappers' training loss; flash attention switched by the constructors'
`flash_attn` / `attn_flash` where they have one."""

import torch

from zoo2 import B, Config, klass, randn


def _img(c=3, s=16):
    return lambda gen: (randn(B, c, s, s, gen=gen), torch.tensor([3.0, 7.0]))


def _seq(c=3, n=32):
    return lambda gen: (randn(B, c, n, gen=gen), torch.tensor([3.0, 7.0]))


def _karras_time(make):
    return lambda gen: (make(gen)[0], torch.tensor([0.3, 0.7]))


UNET = dict(dim=16, dim_mults=(1, 2), attn_dim_head=8, attn_heads=2)
KARRAS = dict(dim=16, dim_max=32, num_downsamples=2, num_blocks_per_stage=1, attn_dim_head=8, channels=3)
UVIT = dict(dim=16, dim_mults=(1, 2), vit_depth=1, attn_dim_head=8, attn_heads=2)
P = "denoising_diffusion_pytorch."
VIDEO = lambda gen: (randn(B, 3, 4, 16, 16, gen=gen), torch.tensor([0.3, 0.7]))  # noqa: E731

# name -> (class, kwargs, input maker, flash kwarg or None, train differs)
SPECS = {
    "Unet": (P + "Unet", UNET, _img(), "flash_attn", True),
    "Unet-fullattn-selfcond": (P + "Unet", dict(UNET, full_attn=(True, True), learned_variance=True,
                                                random_fourier_features=True, learned_sinusoidal_cond=True),
                               _img(), "flash_attn", False),
    "Unet1D": (P + "Unet1D", UNET, _seq(), None, False),
    "KarrasUnet": (P + "KarrasUnet", dict(KARRAS, image_size=16, attn_res=(8, 4)), _karras_time(_img()),
                   "attn_flash", True),
    "KarrasUnet1D": (P + "KarrasUnet1D", dict(KARRAS, seq_len=32, attn_res=(16, 8)), _karras_time(_seq()),
                     "attn_flash", False),
    "KarrasUnet3D": (P + "KarrasUnet3D", dict(KARRAS, image_size=16, frames=4, attn_res=(8, 4),
                                              downsample_types=("image", "frame")), VIDEO, "attn_flash", False),
    "KarrasUnet3D-factorized": (P + "KarrasUnet3D", dict(KARRAS, image_size=16, frames=4, attn_res=(8, 4),
                                                         factorize_space_time_attn=True), VIDEO, "attn_flash", False),
    "UViT": (P + "simple_diffusion.UViT", UVIT, _img(), None, True),
    "UViT-patch2-dualnorm": (P + "simple_diffusion.UViT", dict(UVIT, patch_size=2, dual_patchnorm=True), _img(),
                             None, False),
    "Unet-classifier-free": (P + "classifier_free_guidance.Unet", dict(UNET, num_classes=10),
                             lambda gen: (randn(B, 3, 16, 16, gen=gen), torch.tensor([3.0, 7.0]),
                                          torch.tensor([1, 4])), None, True),
    "Unet-guided": (P + "guided_diffusion.Unet", dict(dim=16, dim_mults=(1, 2)), _img(), None, False),
}

# name -> (wrapper class, U-Net class, U-Net kwargs, wrapper kwargs): the forward is the training loss
DIFFUSIONS = {
    "GaussianDiffusion": (P + "GaussianDiffusion", P + "Unet", UNET, dict(image_size=16, timesteps=10)),
    "LearnedGaussianDiffusion": (P + "LearnedGaussianDiffusion", P + "Unet", dict(UNET, learned_variance=True),
                                 dict(image_size=16, timesteps=10)),
    "ContinuousTimeGaussianDiffusion": (P + "ContinuousTimeGaussianDiffusion", P + "Unet",
                                        dict(UNET, random_fourier_features=True),
                                        dict(image_size=16, num_sample_steps=10)),
    "ElucidatedDiffusion": (P + "ElucidatedDiffusion", P + "Unet", dict(UNET, random_fourier_features=True),
                            dict(image_size=16, num_sample_steps=4)),
    "SimpleDiffusion": (P + "simple_diffusion.GaussianDiffusion", P + "simple_diffusion.UViT", UVIT,
                        dict(image_size=16)),
}


def _build(dotted, kw, make, flash, _train):
    def build(gen, fused):
        extra = {flash: bool(fused)} if flash else {}
        return klass(dotted)(**kw, **extra), make(gen)

    return build


def _diffusion(wrapper, unet, unet_kw, kw):
    def build(gen, fused):
        return klass(wrapper)(klass(unet)(**unet_kw), **kw), randn(B, 3, 16, 16, gen=gen)

    return build


def configs():
    out = {name: Config(_build(*spec), attn=spec[3] is not None, train=spec[4]) for name, spec in SPECS.items()}
    out.update({name: Config(_diffusion(*spec)) for name, spec in DIFFUSIONS.items()})
    return out
