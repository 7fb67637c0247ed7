#!/usr/bin/env python3
"""Confirm SL008 (`unfused-attention`) on the real corpus by running the models it names.

1. `stridelint check --select SL008 --output-format json TREE`: the flagged products.
2. For each flagged file, the models of the record run that use it (timm: the architecture
   module's variants; transformers: the model type of `models/<type>/`; diffusers: the
   model classes defined in the flagged file's directory), built as the record run builds them
   (random weights, tiny configs), run forward once in training mode with gradients on.
3. Every `@` / `matmul` / `bmm` call made from the tree is judged by autograd
   (`scripts/oracle/attention_graph.py`): is its first operand attention weights?

A flagged site is confirmed when every execution of it was attention, a false alarm when it
ran and some execution was not; a site no model ran is listed as not executed. Also printed:
the executed products torch calls attention that SL008 leaves alone (the weights returned,
a fused path beside, or dataflow the analysis lost), for reach.

Usage: .venv-realcode/bin/python scripts/realcode/check_attention.py --tree /work/realcode/src
Exit status 1 when there is a false alarm.
"""

import argparse
import collections
import inspect
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "oracle"))

import torch  # noqa: E402

from attention_graph import is_attention_weights  # noqa: E402

SEEN = collections.defaultdict(collections.Counter)  # (file, line) -> {True: n, False: m}
TREE = None


def watch(original):
    def wrapper(*args, **kwargs):
        frame = sys._getframe(1)
        path = os.path.abspath(frame.f_code.co_filename)
        if TREE and path.startswith(TREE + os.sep) and args and isinstance(args[0], torch.Tensor):
            SEEN[(path[len(TREE) + 1:], frame.f_lineno)][is_attention_weights(args[0])] += 1
        return original(*args, **kwargs)

    return wrapper


def install():
    torch.Tensor.__matmul__ = watch(torch.Tensor.__matmul__)
    torch.Tensor.matmul = watch(torch.Tensor.matmul)
    torch.Tensor.bmm = watch(torch.Tensor.bmm)
    torch.matmul = watch(torch.matmul)
    torch.bmm = watch(torch.bmm)


def flagged(binary, tree):
    out = subprocess.run([binary, "check", tree, "--no-cache", "--select", "SL008", "--output-format", "json",
                          "--exit-zero"], capture_output=True, text=True, check=True)
    return {(os.path.relpath(f["filename"], tree), f["location"]["row"]) for f in json.loads(out.stdout)}


def first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:80]


def run_job(job):
    """Build and run one job's model in training mode with gradients on."""
    if job["package"] == "timm":
        import zoo_timm

        for kw, size in zoo_timm.attempts(job["name"]):
            try:
                model = zoo_timm.create(job["name"], False, kw).train()
                x = torch.randn(2, *zoo_timm.input_size(model, size))
                model(x)
                return "ok"
            except Exception as e:  # the next attempt's sizes may work
                err = e
        return "failed: %s" % first_line(err)
    if job["package"] == "transformers":
        import zoo_transformers as zt

        cls, config_class = zt.load(job["mtype"], job["name"])
        for level in zt.LEVELS:
            try:
                model, cfg = zt.build(cls, config_class, level, "eager")
                model.train()
                inputs = zt.make_inputs(model, cfg, torch.Generator().manual_seed(0))
                model(**inputs) if isinstance(inputs, dict) else model(inputs)
                return "ok"
            except Exception as e:
                err = e
        return "failed: %s" % first_line(err)
    import zoo_diffusers as zd

    try:
        model, inputs = zd.build(job["name"], torch.Generator().manual_seed(0))
        model.train()
        model(**inputs) if isinstance(inputs, dict) else model(inputs)
        return "ok"
    except Exception as e:
        return "failed: %s" % first_line(e)


def diffusers_class_dir(name, tree):
    """The directory (relative to the tree) of the file defining a diffusers job's class."""
    import diffusers
    import zoo_diffusers as zd

    cls = getattr(diffusers, zd.SPECS[name][0] if name in zd.SPECS else name, None)
    try:
        return os.path.dirname(os.path.relpath(inspect.getsourcefile(cls), tree))
    except TypeError:
        return None


def jobs_for(files, tree, every=()):
    """The eager jobs of the models that use the flagged files, and every job of the packages
    in `every` (to see what SL008 leaves alone across a whole zoo)."""
    import runner

    wanted = []
    timm_modules = {os.path.splitext(os.path.basename(f))[0] for f in files if f.startswith("timm/models/")}
    hf_types = {f.split("/")[2] for f in files if f.startswith("transformers/models/")}
    diffusers = {os.path.dirname(f) for f in files if f.startswith("diffusers/")}
    packages = [p for p, want in (("timm", timm_modules), ("transformers", hf_types), ("diffusers", diffusers))
                if want or p in every]
    seen = set()
    for job in runner.list_jobs(packages, ["MODEL"]):
        if job["attn"] != "eager" or job["name"] in seen:
            continue
        if job["package"] in every:
            pass
        elif job["package"] == "timm" and job["family"].rsplit(".", 1)[-1] in timm_modules:
            pass
        elif job["package"] == "transformers" and job["mtype"].replace("-", "_") in hf_types:
            pass
        elif job["package"] == "diffusers" and diffusers_class_dir(job["name"], tree) in diffusers:
            pass
        else:
            continue
        seen.add(job["name"])
        wanted.append(job)
    return wanted


def main():
    global TREE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=os.environ.get("STRIDELINT_REALCODE_TREE", os.path.join(ROOT, "target/realcode/src")))
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/stridelint"))
    ap.add_argument("--every", default="", help="also run every job of these packages (timm,transformers,diffusers)")
    args = ap.parse_args()
    tree = os.path.realpath(args.tree)
    sites = flagged(args.bin, tree)
    sys.path.insert(0, tree)
    sys.path.insert(0, HERE)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import warnings

    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    TREE = tree
    install()
    jobs = jobs_for({f for f, _ in sites}, tree, [p for p in args.every.split(",") if p])
    statuses = collections.Counter()
    for job in jobs:
        status = run_job(job)
        statuses[status.split(":")[0]] += 1
    confirmed, alarms, unexecuted = [], [], []
    for site in sorted(sites):
        seen = SEEN.get(site)
        if not seen:
            unexecuted.append(site)
        elif seen[False]:
            alarms.append((site, dict(seen)))
        else:
            confirmed.append(site)
    print("SL008 on %s: %d findings; %d jobs run (%s)" % (
        tree, len(sites), len(jobs), ", ".join("%s %d" % kv for kv in sorted(statuses.items()))))
    for site in confirmed:
        print("  confirmed    %s:%d  (%d executions, every one attention)" % (site[0], site[1], SEEN[site][True]))
    for site, seen in alarms:
        print("  FALSE ALARM  %s:%d  %s" % (site[0], site[1], seen))
    for site in unexecuted:
        print("  not executed %s:%d" % site)
    quiet = sorted(s for s, c in SEEN.items() if c[True] and not c[False] and s not in sites)
    print("confirmed %d, false alarms %d, not executed %d; attention products torch saw that SL008 leaves "
          "alone in these models: %d" % (len(confirmed), len(alarms), len(unexecuted), len(quiet)))
    for site in quiet:
        print("  silent       %s:%d" % site)
    return 1 if alarms else 0


if __name__ == "__main__":
    sys.exit(main())
