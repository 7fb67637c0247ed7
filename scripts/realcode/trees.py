"""Where each tree's files live (pure Python, no torch: score.py uses it too).

Tree 1: transformers, timm, diffusers (setup.sh). Tree 2: ten smaller model packages
(setup2.sh, zoo2*.py). Tree 3: six more, held out (setup3.sh, zoo3*.py). `--tree2` /
`--tree3` in record.py, mutate.py and score.py pick that tree's defaults; explicit options
still override each path.
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
    3: dict(tree_env="STRIDELINT_REALCODE_TREE3", tree=_t("src3"), data=os.path.join(ROOT, "tests/data/realcode3"),
            results=_t("results3"), work=_t("mutate3"), score=_t("score3"), score_work=_t("score-work3"),
            packages=("sam2", "speechbrain", "chronos", "transformer_lens", "e3nn", "torch_geometric")),
}


def number(args):
    """The tree an argument namespace picks: 3 with --tree3, 2 with --tree2, else 1."""
    if getattr(args, "tree3", False):
        return 3
    return 2 if getattr(args, "tree2", False) else 1


def paths(tree, env=("REALCODE_TREE",)):
    """The defaults of tree 1, 2 or 3 (`tree`: the number; True / False mean 2 / 1, as
    before tree 3); the tree path from the first set environment variable of `env` (then the
    tree's own variable), else target/realcode/src, src2 or src3."""
    n = tree if isinstance(tree, int) and not isinstance(tree, bool) else (2 if tree else 1)
    d = dict(TREES[n])
    for name in tuple(env) + (d["tree_env"],):
        if os.environ.get(name):
            d["tree"] = os.environ[name]
            break
    return d


def add_tree_options(ap, *names):
    """`--tree2` / `--tree3` plus the path options `names` (tree, data, results, work, out),
    each default None: `resolve` fills them from `paths`."""
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--tree2", action="store_true", help="the second tree (setup2.sh) and its tables")
    g.add_argument("--tree3", action="store_true", help="the third tree, held out (setup3.sh) and its tables")
    helps = dict(tree="the model tree", data="the tables", results="the record cache", work="the mutation work dir",
                 out="where lists go")
    for n in names:
        ap.add_argument("--" + n, help="%s (default: per tree, see trees.py)" % helps[n])


def resolve(args, mapping, env=("REALCODE_TREE",)):
    """Fill unset path options from the tree's defaults; `mapping`: option -> key of TREES."""
    d = paths(number(args), env)
    for opt, key in mapping.items():
        if getattr(args, opt) is None:
            setattr(args, opt, d[key])
    return d
