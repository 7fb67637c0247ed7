"""Where each tree's files live (pure Python, no torch: score.py uses it too).

Tree 1: transformers, timm, diffusers (setup.sh). Tree 2: ten smaller model packages
(setup2.sh, zoo2*.py). `--tree2` in record.py, mutate.py and score.py picks tree 2's
defaults; explicit options still override each path.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _t(*parts):
    return os.path.join(ROOT, "target", "realcode", *parts)


TREES = {
    1: dict(tree_env="STRIDELINT_REALCODE_TREE", tree=_t("src"), data=os.path.join(ROOT, "tests/data/realcode"),
            results=_t("results"), work=_t("mutate"), score=_t("score"), score_work=_t("score-work"),
            packages=("transformers", "timm", "diffusers")),
    2: dict(tree_env="STRIDELINT_REALCODE_TREE2", tree=_t("src2"), data=os.path.join(ROOT, "tests/data/realcode2"),
            results=_t("results2"), work=_t("mutate2"), score=_t("score2"), score_work=_t("score-work2"),
            packages=("vector_quantize_pytorch", "denoising_diffusion_pytorch", "perceiver_pytorch",
                      "local_attention", "whisper", "segment_anything", "encodec", "demucs", "kornia",
                      "ultralytics")),
}


def paths(tree2, env=("REALCODE_TREE",)):
    """The defaults of tree 1 or 2; the tree path from the first set environment variable of
    `env` (then the tree's own variable), else target/realcode/src or src2."""
    d = dict(TREES[2 if tree2 else 1])
    for name in tuple(env) + (d["tree_env"],):
        if os.environ.get(name):
            d["tree"] = os.environ[name]
            break
    return d


def add_tree_options(ap, *names):
    """`--tree2` plus the path options `names` (tree, data, results, work, out), each default
    None: `resolve` fills them from `paths`."""
    ap.add_argument("--tree2", action="store_true", help="the second tree (setup2.sh) and its tables")
    helps = dict(tree="the model tree", data="the tables", results="the record cache", work="the mutation work dir",
                 out="where lists go")
    for n in names:
        ap.add_argument("--" + n, help="%s (default: per tree, see trees.py)" % helps[n])


def resolve(args, mapping, env=("REALCODE_TREE",)):
    """Fill unset path options from the tree's defaults; `mapping`: option -> key of TREES."""
    d = paths(args.tree2, env)
    for opt, key in mapping.items():
        if getattr(args, opt) is None:
            setattr(args, opt, d[key])
    return d
