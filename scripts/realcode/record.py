#!/usr/bin/env python3
"""Record what torch does at every layout call site of the real code tree.

    .venv-realcode/bin/python scripts/realcode/record.py [--tree target/realcode/src]
    .venv-realcode/bin/python scripts/realcode/record.py --tree2     # the second tree (zoo2*.py)
    .venv-realcode/bin/python scripts/realcode/record.py --tree3     # the third, held out (zoo3*.py)

Runs the model zoo (zoo_transformers.py, zoo_timm.py, zoo_diffusers.py: tiny configs, random
weights, eval mode, `torch.no_grad()`, batch 2, each attention implementation) with the
entry points wrapped by recorder.py *before* the packages are imported, the packages imported
from the tree itself (PYTHONPATH = the tree), so the recorded files are the linted files.

Each job's result (status, reason, seconds, the sites it hit) is cached under
target/realcode/results/<package>/<model>__<attn>.json: a re-run only runs the missing ones
(`--retry-failed` also re-runs failed ones, `--only REGEX` limits to matching keys). Then the
tables are written from all cached results:

* tests/data/realcode/sites.jsonl: one row per executed site (file relative to the tree,
  line, col, end_line, end_col in stridelint's convention: 1-based rows, 1-based character
  columns, end exclusive), op, executed, copied, raised, message, models, n_models, example;
* tests/data/realcode/models.jsonl: one row per job;
* tests/data/realcode/META.json: versions, date, counts, commands.
"""

import argparse
import datetime
import json
import os
import platform
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import recorder  # noqa: E402  (imports torch; must precede the model packages)

recorder.install()

import runner  # noqa: E402
import trees  # noqa: E402

MODEL_LIST = 8  # model names kept per site in sites.jsonl


def result_path(results, key):
    pkg, name, attn = key.split("/")
    return os.path.join(results, pkg, "%s__%s.json" % (name, attn))


def model_name(key):
    pkg, name, attn = key.split("/")
    return "%s:%s:%s" % (pkg, name, attn)


def load_results(results):
    out = {}
    for pkg in sorted(os.listdir(results)) if os.path.isdir(results) else []:
        d = os.path.join(results, pkg)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".json"):
                with open(os.path.join(d, f)) as fh:
                    r = json.load(fh)
                out[r["job"]["key"]] = r
    return out


def aggregate(results):
    """sites: key -> merged record; models: rows."""
    sites = {}
    models = []
    for key in sorted(results):
        r = results[key]
        job = r["job"]
        models.append(dict(
            package=job["package"], name=job["name"], attn=job["attn"], status=r["status"],
            reason=r.get("reason"), seconds=r.get("seconds"), level=r.get("level"),
            family=job.get("family") or job.get("mtype"), sites=len(r.get("sites") or []),
        ))
        if r.get("layers_outside_tree"):  # einops layers called from no tree file (recorder.py)
            models[-1]["layers_outside_tree"] = r["layers_outside_tree"]
        mname = model_name(key)
        for row in r.get("sites") or []:
            rel, l0, c0, l1, c1, op, n, cp, rs, msg, ex = row[:11]
            k = (rel, l0, c0, l1, c1, op)
            s = sites.get(k)
            if s is None:
                s = sites[k] = dict(file=rel, line=l0, col=c0, end_line=l1, end_col=c1, op=op, executed=0,
                                    copied=0, raised=0, message=None, models=[], example=None, _excp=False)
            s["executed"] += n
            s["copied"] += cp
            s["raised"] += rs
            if s["message"] is None and msg:
                s["message"] = msg
            s["models"].append(mname)
            if len(row) > 11:  # an einops layer called through nn.Sequential
                s["via"] = row[11]
            if s["example"] is None or (cp and not s["_excp"]):
                s["example"] = ex
                s["_excp"] = bool(cp)
    rows = []
    for k in sorted(sites):
        s = sites[k]
        del s["_excp"]
        ms = sorted(set(s["models"]))
        s["n_models"] = len(ms)
        s["models"] = ms[:MODEL_LIST]
        rows.append(s)
    return rows, models


def site_models(results):
    """(file, line, col, end_line, end_col, op) -> every job key that hit it (for mutate.py)."""
    out = {}
    for key, r in results.items():
        for row in r.get("sites") or []:
            out.setdefault(tuple(row[:6]), set()).add(key)
    return out


def versions():
    import einops
    import torch

    v = dict(python=platform.python_version(), torch=torch.__version__,
             torch_git=getattr(torch.version, "git_version", None), einops=einops.__version__)
    return v


def tree_versions(tree):
    v = {}
    for d in os.listdir(tree):
        m = re.match(r"(.+?)-([^-]+)\.dist-info$", d)
        if m:
            v[m.group(1)] = m.group(2)
    return v


def write_jsonl(path, rows):
    with open(path + ".tmp", "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(path + ".tmp", path)


def counts(rows, models):
    c = dict(sites=len(rows), sites_copied=sum(1 for r in rows if r["copied"]),
             sites_raised=sum(1 for r in rows if r["raised"]), per_op={}, per_package={}, models={})
    for r in rows:
        o = c["per_op"].setdefault(r["op"], dict(sites=0, copied=0, raised=0))
        o["sites"] += 1
        o["copied"] += bool(r["copied"])
        o["raised"] += bool(r["raised"])
        p = c["per_package"].setdefault(r["file"].split("/")[0], dict(sites=0, copied=0))
        p["sites"] += 1
        p["copied"] += bool(r["copied"])
    for m in models:
        k = "%s/%s" % (m["package"], m["attn"])
        d = c["models"].setdefault(k, dict(tried=0, ok=0, failed=0, skipped=0))
        d["tried"] += m["status"] != "skipped"
        d[m["status"]] += 1
    c["model_classes_ok"] = len({(m["package"], m["name"]) for m in models if m["status"] == "ok"})
    c["model_classes_tried"] = len({(m["package"], m["name"]) for m in models})
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    trees.add_tree_options(ap, "tree", "results", "out")
    ap.add_argument("--packages", help="comma-separated (default: the tree's packages)")
    ap.add_argument("--mappings", default="MODEL", help="transformers auto maps, e.g. MODEL,MODEL_FOR_CAUSAL_LM")
    ap.add_argument("--only", help="regex on job keys (package/name/attn)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=runner.ATTEMPT_LIMIT, help="seconds per attempt")
    ap.add_argument("--hard-limit", type=int, default=240, help="seconds per job before the worker is killed")
    ap.add_argument("--retry-failed", action="store_true")
    ap.add_argument("--aggregate-only", action="store_true")
    ap.add_argument("--max-jobs", type=int)
    args = ap.parse_args()
    d = trees.resolve(args, dict(tree="tree", results="results", out="data"))
    tree = os.path.abspath(args.tree)
    if not os.path.isdir(tree):
        sys.exit("no tree at %s (run scripts/realcode/setup.sh, setup2.sh or setup3.sh)" % tree)
    packages = [p for p in (args.packages or ",".join(d["packages"])).split(",") if p]
    t0 = time.time()
    ran = [0]
    if not args.aggregate_only:
        jobs = runner.list_jobs_in_child(tree, packages, args.mappings.split(","))
        print("%d jobs listed (%.0f s)" % (len(jobs), time.time() - t0), file=sys.stderr)
        if args.only:
            jobs = [j for j in jobs if re.search(args.only, j["key"])]
        todo = []
        for j in jobs:
            p = result_path(args.results, j["key"])
            if os.path.exists(p):
                if not args.retry_failed:
                    continue
                with open(p) as f:
                    if json.load(f)["status"] != "failed":
                        continue
            todo.append(j)
        if args.max_jobs:
            todo = todo[: args.max_jobs]
        print("%d to run" % len(todo), file=sys.stderr)
        done = [0]

        def on_result(job, res):
            done[0] += 1
            res["job"] = job
            p = result_path(args.results, job["key"])
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(p + ".tmp", p)
            print("[%d/%d %5.0fs] %-60s %-7s %5s s %4d sites %s" % (
                done[0], len(todo), time.time() - t0, job["key"], res["status"], res.get("seconds"),
                len(res.get("sites") or []), (res.get("reason") or "")[:150]), file=sys.stderr, flush=True)

        runner.run_pool(todo, tree, args.workers, args.limit, args.hard_limit, on_result)
        ran[0] = len(todo)
    elapsed = time.time() - t0
    results = load_results(args.results)
    rows, models = aggregate(results)
    os.makedirs(args.out, exist_ok=True)
    write_jsonl(os.path.join(args.out, "sites.jsonl"), rows)
    write_jsonl(os.path.join(args.out, "models.jsonl"), models)
    meta_path = os.path.join(args.out, "META.json")
    meta = {}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    c = counts(rows, models)
    rec = meta.get("record", {})
    runs = rec.get("runs", [])
    if not args.aggregate_only and ran[0]:
        runs.append(dict(command=" ".join(["scripts/realcode/record.py"] + sys.argv[1:]), jobs=ran[0],
                         seconds=round(elapsed), date=datetime.datetime.now(datetime.timezone.utc).isoformat(
                             timespec="minutes")))
    meta.update(
        versions=dict(versions(), **tree_versions(tree)),
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        counts=c,
        record=dict(
            setup="scripts/realcode/setup3.sh" if trees.number(args) == 3 else "scripts/realcode/setup.sh",
            runs=runs,
            seconds_total=sum(r["seconds"] for r in runs),
            job_seconds_total=round(sum(m["seconds"] or 0 for m in models)),
            platform=platform.platform(),
            cpus=os.cpu_count(),
        ),
    )
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(meta_path + ".tmp", meta_path)
    print(json.dumps(c, indent=1), file=sys.stderr)
    print("record: %.0f s" % elapsed, file=sys.stderr)


if __name__ == "__main__":
    main()
