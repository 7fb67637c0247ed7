#!/usr/bin/env python3
"""The mutation study: delete one `.contiguous()` in front of an executed view and ask torch.

    .venv-realcode/bin/python scripts/realcode/mutate.py [--tree target/realcode/src]
    .venv-realcode/bin/python scripts/realcode/mutate.py --tree2   # forms A, B, C, F on the second tree
    .venv-realcode/bin/python scripts/realcode/mutate.py --tree3   # the same on the third (held out)

Candidates (mutations.py): every `.view(...)`/`.view_as(...)` whose receiver is a
`.contiguous()` call (`chain`), `x = ....contiguous()` followed by `x.view(...)` (`assign`),
and the result of a same-file function whose only return is `return ....contiguous()` as the
receiver (`return`), among the view sites that the record run executed
(tests/data/realcode/sites.jsonl). Which models hit a site: the per-job results under
target/realcode/results/ (all of them) when that cache is there, else the `models` field of
sites.jsonl (the first 8 of `n_models`), with each model's status and shrink level from
models.jsonl and its job (transformers: the auto-mapping entry) listed from the tree.
These are forms A (`chain`) and B (`assign`, `return`); `--forms` adds C (an executed
`.reshape` written `.view`) and F (an executed `.flatten` written as the equal view), see
mutations.py; `--copied-only` keeps C and F to the sites that copied. The default is A,B on
the first tree and A,B,C,F with `--tree2` or `--tree3`.

`--new-only`: rows already in mutations.jsonl (same file, view and edit) are kept as they are
and not re-run; only the other candidates run and are merged in (the per-mutation cache under
target/realcode/mutate/results/ is not needed for the kept rows).

Each mutation runs on its own: one worker slot holds a hardlink copy of the tree
(`cp -al`, made once per slot, under target/realcode/mutate/); for a mutation, exactly the one
edited file is replaced (the original bytes minus the deleted `.contiguous()`; no other byte
changes), a fresh process is forked from the driver (torch imported, recorder installed,
*no* model package imported yet), imports the packages from the slot and re-runs only the
models that hit the view site (first those that ran ok in the record run; it stops at the first
model whose run raises at the view, else runs them all, at most --max-models). Afterwards the
original file is linked back. No batching: a verdict is exactly what torch does with only
that one mutation applied. Byte-code: the mutated file gets a unique mtime so that no cached
`.pyc` of another version can be taken for it.

Output: tests/data/realcode/mutations.jsonl, one row per (edit, view site): file, pattern,
view (op, line, col, end_line, end_col) in the original file, mutated_view (same in the mutated
file; for C and F the rewritten call, op `view`), edit (byte_start, byte_end, line, col,
removed, and the inserted text for C and F), form, rank (C and F: the rank of the recorded
example), raised (the view raised "view size is not compatible" in some model), message,
reached (the view ran at all in the mutated runs), models (those run, in order), n_models_hit,
and runs (status / reason per model) where the verdict is incomplete: the view was not
reached, or it did not raise while some run failed.
"""

import argparse
import json
import multiprocessing as mp
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import recorder  # noqa: E402

recorder.install()

import mutations  # noqa: E402
import record  # noqa: E402
import runner  # noqa: E402
import trees  # noqa: E402

NOT_COMPATIBLE = "view size is not compatible"


PATTERNS = tuple(mutations.FORMS)
REWRITES = [p for p, f in mutations.FORMS.items() if f in ("C", "F")]  # their mutated call is a view


def _site_key(r):
    return (r["file"], r["line"], r["col"], r["end_line"], r["end_col"], r["op"])


def hits_from_tables(tree, rows, models_path):
    """Without the record cache: the models of each view site from sites.jsonl (`models`, the
    first 8; `n_models`), status and level from models.jsonl, the job dicts listed from the tree.
    Returns (hits, status, levels, jobs, n_hit) like the cache-based path (n_hit: site -> count)."""
    info = {}
    for line in open(models_path):
        m = json.loads(line)
        info["%s/%s/%s" % (m["package"], m["name"], m["attn"])] = m
    hits, n_hit = {}, {}
    for r in rows:
        if r["op"] in mutations.VIEW_OPS + mutations.REWRITE_OPS:
            hits[_site_key(r)] = {m.replace(":", "/") for m in r.get("models") or []}
            n_hit[_site_key(r)] = r.get("n_models", len(r.get("models") or []))
    wanted = set().union(*hits.values()) if hits else set()
    pkgs = sorted({k.split("/")[0] for k in wanted})
    listed = {j["key"]: j for j in runner.list_jobs_in_child(tree, pkgs, ["MODEL"])} if pkgs else {}
    missing = sorted(k for k in wanted if k not in listed)
    if missing:
        print("%d models of sites.jsonl not listed from the tree (dropped): %s" % (len(missing), missing[:5]),
              file=sys.stderr)
    for k in hits:
        hits[k] = {j for j in hits[k] if j in listed}
    status = {k: info[k]["status"] if k in info else "unknown" for k in listed}
    levels = {k: info[k].get("level") if k in info else None for k in listed}
    return hits, status, levels, listed, n_hit


def _rank(row):
    shape = ((row.get("example") or {}).get("input") or [None])[0]
    return len(shape) if isinstance(shape, list) else None


def _wanted(rows, forms, copied_only=False):
    """file -> (view sites for forms A/B, reshape/flatten sites -> rank for forms C/F; with
    `copied_only`, only the reshape/flatten sites that copied in the record run)."""
    out = {}
    for r in rows:
        site = (r["line"], r["col"], r["end_line"], r["end_col"], r["op"])
        views, rewrites = out.setdefault(r["file"], (set(), {}))
        if r["op"] in mutations.VIEW_OPS and {"A", "B"} & forms:
            views.add(site)
        elif r["op"] in mutations.REWRITE_OPS and {"C", "F"} & forms and (r["copied"] or not copied_only):
            rewrites[site] = _rank(r)
    return out


def _found(data, views, rewrites, forms):
    """The mutations of one file in the requested forms."""
    found = mutations.find(data, views) + mutations.find_rewrites(data, rewrites)
    return [m for m in found if mutations.FORMS[m["pattern"]] in forms]


def candidates(tree, sites_path, results_dir, forms=("A", "B"), copied_only=False):
    forms = set(forms)
    rows = [json.loads(line) for line in open(sites_path)]
    by_file = _wanted(rows, forms, copied_only)
    results = record.load_results(results_dir) if os.path.isdir(results_dir) else {}
    if results:
        hits = record.site_models(results)
        status = {k: r["status"] for k, r in results.items()}
        levels = {k: r.get("level") for k, r in results.items()}
        jobs = {k: r["job"] for k, r in results.items()}
        n_hit = None
    else:
        print("no record cache at %s: models from sites.jsonl / models.jsonl" % results_dir, file=sys.stderr)
        hits, status, levels, jobs, n_hit = hits_from_tables(
            tree, rows, os.path.join(os.path.dirname(sites_path), "models.jsonl"))
    out = []
    for rel in sorted(by_file):
        with open(os.path.join(tree, rel), "rb") as f:
            data = f.read()
        try:
            found = _found(data, *by_file[rel], forms)
        except SyntaxError:
            continue
        text = mutations.Text(data)
        for m in found:
            s, e = m["edit"][:2]
            line, col = text.pos(s)
            site = m["view"]
            vs = mutations.view_span(data, site)
            new = mutations.apply(data, m["edit"])
            ms, me = mutations.moved(data, m["edit"], vs)
            nt = mutations.Text(new)
            mut_site = nt.pos(ms) + nt.pos(me)
            keys = sorted(hits.get((rel,) + site, ()), key=lambda k: (status[k] != "ok", k))
            edit = dict(byte_start=s, byte_end=e, line=line, col=col,
                        removed=data[s:e].decode("utf-8", errors="replace"))
            mut_op = "view" if m["pattern"] in REWRITES else site[4]
            row = dict(file=rel, pattern=m["pattern"], form=mutations.FORMS[m["pattern"]],
                       view=dict(op=site[4], line=site[0], col=site[1], end_line=site[2], end_col=site[3]),
                       mutated_view=dict(op=mut_op, line=mut_site[0], col=mut_site[1], end_line=mut_site[2],
                                         end_col=mut_site[3]),
                       edit=edit, _jobs=[dict(jobs[k], level=levels[k]) for k in keys],
                       _n_hit=len(keys) if n_hit is None else n_hit[(rel,) + site])
            if len(m["edit"]) > 2:
                edit["inserted"] = m["edit"][2]
                row["rank"] = m.get("rank")
            out.append(row)
    return out


def incomplete(res):
    """Whether a mutation's verdict leaves something out: the view was not reached, or it did not
    raise and some model's run did not end ok (for instance another view of the same edit raised
    first), so the view may not have run in all the places it runs unmutated. Such rows carry
    `runs` (status and reason per model)."""
    if not res.get("reached"):
        return True
    return not res.get("raised") and any(r.get("status") != "ok" for r in (res.get("runs") or {}).values())


def preimport(job):
    """Import the model's code (lazily exported classes) before its run's time limit starts."""
    pkg = __import__(job["package"])
    if job["package"] == "transformers":
        getattr(pkg, job["name"])
    elif job["package"] == "diffusers":
        import zoo_diffusers

        getattr(pkg, zoo_diffusers.SPECS[job["name"]][0] if job["name"] in zoo_diffusers.SPECS else job["name"])
        import diffusers.models.attention_processor  # noqa: F401


def _child(conn, slot, jobs, rel, mut_site, limit, stop_at_raise):
    runner._prepare(slot)
    sys.pycache_prefix = os.path.join(ROOT, "target/realcode/pycache")
    sys.dont_write_bytecode = False
    key = (rel,) + tuple(mut_site[k] for k in ("line", "col", "end_line", "end_col", "op"))
    out = dict(raised=False, message=None, reached=False, models=[], errors={})
    checked = set()
    out["runs"] = {}
    for job in jobs:
        recorder.take()
        try:
            if job["package"] not in checked:
                runner.check_origin(job["package"], slot)
                checked.add(job["package"])
            preimport(job)  # imports are slow on a busy machine: outside the time limit
            res = runner.RUNNERS[job["package"]](job, limit)
        except Exception as e:
            res = dict(status="failed", reason=runner._short_exc(e))
        rows = {tuple(r[:6]): r for r in recorder.take()}
        out["models"].append(record.model_name(job["key"]))
        out["runs"][job["key"]] = dict(status=res.get("status"), reason=res.get("reason"))
        r = rows.get(key)
        if r is not None:
            out["reached"] = True
            if r[8] and r[9] and NOT_COMPATIBLE in r[9]:
                out["raised"] = True
                out["message"] = out["message"] or r[9]
            elif r[8] and r[9]:
                out["errors"][job["key"]] = r[9]
        if out["raised"] and stop_at_raise:
            break
    conn.send(out)


def run_one(mut, slot, tree, limit, max_models, index):
    rel = mut["file"]
    with open(os.path.join(tree, rel), "rb") as f:
        data = f.read()
    new = mutations.apply(data, mutations.row_edit(mut))
    # unique mtime: no cached .pyc of another version can match the mutated file
    mutations.replace_file(slot, tree, rel, new, mtime=1_000_000_000 + index * 7)
    try:
        ctx = mp.get_context("fork")
        a, b = ctx.Pipe()
        jobs = mut["_jobs"][:max_models]
        p = ctx.Process(target=_child, args=(b, slot, jobs, rel, mut["mutated_view"], limit, True))
        p.start()
        b.close()
        hard = 120 + len(jobs) * (limit + 30)
        if a.poll(hard):
            try:
                res = a.recv()
            except EOFError:
                res = dict(error="child died (exit %s)" % p.exitcode)
        else:
            res = dict(error="killed after %d s" % hard)
        p.kill()
        p.join(5)
    finally:
        mutations.restore_file(slot, tree, rel)
    return res


def _tally(rows):
    return dict(mutations=len(rows), executed=sum(1 for r in rows if r["models"]),
                reached=sum(1 for r in rows if r["reached"]), raised=sum(1 for r in rows if r["raised"]))


def make_slot(tree, path):
    if os.path.isdir(path) and not os.path.islink(path):
        return path
    tmp = path + ".tmp"
    if os.path.isdir(tmp) and not os.path.islink(tmp):
        shutil.rmtree(tmp)
    mutations.hardlink_copy(tree, tmp)
    os.rename(tmp, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    trees.add_tree_options(ap, "tree", "results", "data", "work")
    ap.add_argument("--forms", help="comma-separated forms A,B,C,F (default: A,B on tree 1, A,B,C,F on trees 2, 3)")
    ap.add_argument("--copied-only", action="store_true",
                    help="forms C and F only at the reshape / flatten sites that copied (the ones that can raise)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=150, help="seconds per model attempt")
    ap.add_argument("--max-models", type=int, default=6)
    ap.add_argument("--list", action="store_true", help="only list the candidates")
    ap.add_argument("--limit-mutations", type=int)
    ap.add_argument("--new-only", action="store_true",
                    help="keep the rows already in mutations.jsonl as they are; run only the other candidates")
    args = ap.parse_args()
    trees.resolve(args, dict(tree="tree", results="results", data="data", work="work"))
    forms = (args.forms or ("A,B,C,F" if trees.number(args) > 1 else "A,B")).split(",")
    tree = os.path.realpath(args.tree)
    t0 = time.time()
    muts = candidates(tree, os.path.join(args.data, "sites.jsonl"), args.results, forms, args.copied_only)
    print("%d mutations (%s)" % (len(muts), ", ".join(
        "%s %d" % (p, sum(m["pattern"] == p for m in muts)) for p in PATTERNS)), file=sys.stderr)
    if args.list:
        for m in muts:
            print(m["file"], m["view"], m["edit"], m["pattern"], len(m["_jobs"]))
        return

    def row_key(r):
        v = r["view"]
        return (r["file"], r["pattern"], v["op"], v["line"], v["col"], v["end_line"], v["end_col"],
                r["edit"]["byte_start"], r["edit"]["byte_end"])

    kept = []
    if args.new_only:
        mpath = os.path.join(args.data, "mutations.jsonl")
        kept = [json.loads(line) for line in open(mpath)] if os.path.exists(mpath) else []
        have = {row_key(r) for r in kept}
        gone = have - {row_key(m) for m in muts}
        if gone:
            print("%d kept rows are no longer candidates (kept anyway): %s" % (len(gone), sorted(gone)[:3]),
                  file=sys.stderr)
        muts = [m for m in muts if row_key(m) not in have]
        print("--new-only: %d rows kept, %d new candidates" % (len(kept), len(muts)), file=sys.stderr)
    if args.limit_mutations:
        muts = muts[: args.limit_mutations]
    cache_dir = os.path.join(args.work, "results")
    os.makedirs(cache_dir, exist_ok=True)
    slots = [make_slot(tree, os.path.join(args.work, "slot%d" % i)) for i in range(args.workers)]

    def cache_path(m):
        return os.path.join(cache_dir, "%s_%d_%d.json" % (m["file"].replace("/", "__"), m["edit"]["byte_start"],
                                                           m["view"]["line"] * 10000 + m["view"]["col"]))

    todo = [(i, m) for i, m in enumerate(muts) if not os.path.exists(cache_path(m))]
    print("%d to run" % len(todo), file=sys.stderr)
    # one thread per slot, each forking one child per mutation
    import threading

    lock = threading.Lock()
    done = [0]

    def work(slot):
        while True:
            with lock:
                if not todo:
                    return
                i, m = todo.pop(0)
            t = time.time()
            # (offset by the kept rows: a new run's mtimes differ from the ones the kept rows used)
            res = run_one(m, slot, tree, args.limit, args.max_models, i + len(kept)) if m["_jobs"] else dict(
                error="no models")
            res["seconds"] = round(time.time() - t, 2)
            with open(cache_path(m) + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(cache_path(m) + ".tmp", cache_path(m))
            with lock:
                done[0] += 1
                print("[%d %5.0fs] %s:%d:%d %-6s raised=%s reached=%s %s %s" % (
                    done[0], time.time() - t0, m["file"], m["view"]["line"], m["view"]["col"], m["pattern"],
                    res.get("raised"), res.get("reached"), res.get("error") or "", res["seconds"]),
                    file=sys.stderr, flush=True)

    threads = [threading.Thread(target=work, args=(s,)) for s in slots]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rows = []
    for m in muts:
        p = cache_path(m)
        res = json.load(open(p)) if os.path.exists(p) else dict(error="not run")
        row = {k: v for k, v in m.items() if not k.startswith("_")}
        row.update(raised=bool(res.get("raised")), message=res.get("message"), reached=bool(res.get("reached")),
                   models=res.get("models", []), n_models_hit=m["_n_hit"], error=res.get("error"),
                   other_errors=res.get("errors") or None,
                   runs=res.get("runs") if incomplete(res) else None)
        rows.append(row)
    rows += kept
    rows.sort(key=lambda r: (r["file"], r["view"]["line"], r["view"]["col"], r["edit"]["byte_start"]))
    record.write_jsonl(os.path.join(args.data, "mutations.jsonl"), rows)
    meta_path = os.path.join(args.data, "META.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    old = meta.get("mutate", {})
    runs = old.get("runs") or ([dict(command=old["command"], mutations=old.get("mutations"),
                                     seconds=old.get("seconds_this_run"))] if "command" in old else [])
    command = "scripts/realcode/mutate.py %s--workers %d --limit %d --max-models %d%s" % (
        {1: "", 2: "--tree2 ", 3: "--tree3 "}[trees.number(args)], args.workers, args.limit, args.max_models,
        " --new-only" if args.new_only else "")
    seconds = round(time.time() - t0)
    runs = (runs if args.new_only else []) + [dict(command=command, mutations=len(muts), seconds=seconds)]
    meta["mutate"] = dict(
        command=command,
        runs=runs,
        seconds_this_run=seconds,
        per_pattern={p: n for p in PATTERNS for n in [sum(r["pattern"] == p for r in rows)] if n},
        **_tally(rows),
    )
    if trees.number(args) > 1 or any(r.get("form") in ("C", "F") for r in rows):
        meta["mutate"]["per_form"] = {f: _tally([r for r in rows if mutations.row_form(r) == f])
                                      for f in sorted({mutations.row_form(r) for r in rows})}
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(meta_path + ".tmp", meta_path)
    print(json.dumps(meta["mutate"], indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
