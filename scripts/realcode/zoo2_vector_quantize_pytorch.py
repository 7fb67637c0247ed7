"""vector-quantize-pytorch 1.32.0: the quantizers on (2, 16, 32) sequences or (2, 32, 8, 8)
feature maps; train and eval (codebook updates, dropout of quantizers and commitment losses
run only in training)."""

from zoo2 import B, Config, constructed, randn


def _seq(dim=32, n=16):
    return lambda gen: randn(B, n, dim, gen=gen)


def _fmap(dim=32, s=8):
    return lambda gen: randn(B, dim, s, s, gen=gen)


V = "vector_quantize_pytorch."

# name -> (class, constructor kwargs, input maker)
SPECS = {
    "VectorQuantize": (V + "VectorQuantize", dict(dim=32, codebook_size=64), _seq()),
    "VectorQuantize-heads": (V + "VectorQuantize", dict(dim=32, codebook_size=64, heads=4, codebook_dim=8,
                                                    separate_codebook_per_head=True), _seq()),
    "VectorQuantize-cosine-fmap": (V + "VectorQuantize", dict(dim=32, codebook_size=64, use_cosine_sim=True,
                                                          accept_image_fmap=True), _fmap()),
    "VectorQuantize-rotation": (V + "VectorQuantize", dict(dim=32, codebook_size=64, rotation_trick=True,
                                                       codebook_dim=16), _seq()),
    "ResidualVQ": (V + "ResidualVQ", dict(dim=32, num_quantizers=3, codebook_size=64), _seq()),
    "GroupedResidualVQ": (V + "GroupedResidualVQ", dict(dim=32, groups=2, num_quantizers=2, codebook_size=64), _seq()),
    "FSQ": (V + "FSQ", dict(levels=[8, 5, 5], dim=32), _seq()),
    "FSQ-channel-first": (V + "FSQ", dict(levels=[8, 5, 5], dim=32, num_codebooks=2, channel_first=True), _fmap()),
    "LFQ": (V + "LFQ", dict(dim=32, codebook_size=256), _seq()),
    "LFQ-codebooks-fmap": (V + "LFQ", dict(dim=32, codebook_size=256, num_codebooks=2), _fmap()),
    "ResidualLFQ": (V + "ResidualLFQ", dict(dim=32, num_quantizers=2, codebook_size=256), _seq()),
    "GroupedResidualLFQ": (V + "GroupedResidualLFQ", dict(dim=32, groups=2, num_quantizers=2, codebook_size=256),
                           _seq()),
    "ResidualFSQ": (V + "ResidualFSQ", dict(dim=32, levels=[8, 5, 5], num_quantizers=2), _seq()),
    "GroupedResidualFSQ": (V + "GroupedResidualFSQ", dict(dim=32, groups=2, levels=[8, 5, 5], num_quantizers=2),
                           _seq()),
    "SimVQ": (V + "SimVQ", dict(dim=32, codebook_size=64), _seq()),
    "ResidualSimVQ": (V + "ResidualSimVQ", dict(dim=32, num_quantizers=2, codebook_size=64), _seq()),
    "RandomProjectionQuantizer": (V + "RandomProjectionQuantizer", dict(dim=32, codebook_size=64, codebook_dim=16,
                                                                    num_codebooks=2), _seq()),
    "HierarchicalVQ": (V + "HierarchicalVQ", dict(dim=32, codebook_size=64, scales=[1, 2, 4, 8, 16], kmeans_init=False),
                       lambda gen: randn(B, 32, 16, gen=gen)),
    "FSP": (V + "FSP", dict(levels=[8, 5, 5], dim=32), _seq()),
}


def configs():
    return {name: Config(constructed(*spec), train=True) for name, spec in SPECS.items()}
