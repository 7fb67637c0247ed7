"""Worker processes for the record and mutation runs.

The driver imports torch and installs the recorder (`recorder.install`), then forks workers
(`Pool`). A worker puts its tree first on `sys.path`, points the recorder at it, imports the
model packages *from that tree* (checked: `transformers.__file__` must lie inside it) and runs
jobs one at a time, each under a time limit (SIGALRM per attempt; the driver kills a worker
that overruns its job's hard limit and forks a new one).

A job is a dict: key ("transformers/BertModel/eager"), package, name, attn, and mtype for
transformers. Its result: status ok / failed / skipped, reason, seconds, level (transformers:
which shrink level ran), and the sites the recorder saw during the job.
"""

import multiprocessing as mp
import os
import signal
import sys
import time
import traceback

import torch

import recorder
import zoo2
import zoo3

ATTEMPT_LIMIT = 60


class JobTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise JobTimeout("time limit")


def _short_exc(e):
    msg = str(e).strip().split("\n")[0]
    return ("%s: %s" % (type(e).__name__, msg))[:300]


def _forward(model, inputs):
    with torch.no_grad():
        if isinstance(inputs, dict):
            return model(**inputs)
        return model(inputs)


def _attempt(fn, limit):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        return fn()
    finally:
        signal.alarm(0)


def run_transformers(job, limit):
    import zoo_transformers as zt

    cls, config_class = zt.load(job["mtype"], job["name"])
    if not zt.supports(cls, job["attn"]):
        return dict(status="skipped", reason="no %s support" % job["attn"])
    reasons = []
    levels = [job["level"]] if job.get("level") is not None else zt.LEVELS
    for level in levels:
        def go():
            torch.manual_seed(0)
            gen = torch.Generator().manual_seed(0)
            model, cfg = zt.build(cls, config_class, level, job["attn"])
            impl = getattr(model.config, "_attn_implementation", None)
            inputs = zt.make_inputs(model, cfg, gen)
            _forward(model, inputs)
            return impl

        try:
            impl = _attempt(go, limit)
            return dict(status="ok", level=level, reason="; ".join(reasons) or None, impl=impl)
        except JobTimeout:
            reasons.append("level %d: time limit %d s" % (level, limit))
            break
        except Exception as e:
            reasons.append("level %d: %s" % (level, _short_exc(e)))
    return dict(status="failed", reason="; ".join(reasons))


def run_timm(job, limit):
    import zoo_timm

    errs = []
    for kw, size in zoo_timm.attempts(job["name"]):
        def go():
            torch.manual_seed(0)
            gen = torch.Generator().manual_seed(0)
            model = zoo_timm.create(job["name"], job["attn"] == "sdpa", kw)
            s = zoo_timm.input_size(model, size)
            _forward(model, torch.randn(2, *s, generator=gen))
            return list(s)

        try:
            s = _attempt(go, limit)
            return dict(status="ok", input=s, kwargs=kw, reason="; ".join(errs) or None)
        except JobTimeout:
            errs.append("%s: time limit %d s" % (kw or size, limit))
            break
        except Exception as e:
            errs.append("%s: %s" % (kw or size, _short_exc(e)))
            if "too large" in str(e):
                break
    return dict(status="failed", reason="; ".join(errs))


def run_diffusers(job, limit):
    import zoo_diffusers as zd

    def go():
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(0)
        model, inputs = zd.build(job["name"], gen)
        if job["attn"] == "eager" and not zd.set_eager(model):
            return "skip"
        _forward(model, inputs)
        return None

    try:
        r = _attempt(go, limit)
        if r == "skip":
            return dict(status="skipped", reason="no eager attention processor switch")
        return dict(status="ok")
    except JobTimeout:
        return dict(status="failed", reason="time limit %d s" % limit)
    except Exception as e:
        return dict(status="failed", reason=_short_exc(e))


def run_zoo2(job, limit):
    """A job of the second tree's zoo (zoo2.py: one build and forward per job)."""
    try:
        return dict(status="ok", **_attempt(lambda: zoo2.run(job), limit))
    except JobTimeout:
        return dict(status="failed", reason="time limit %d s" % limit)
    except Exception as e:
        return dict(status="failed", reason=_short_exc(e))


def run_zoo3(job, limit):
    """A job of the third tree's zoo (zoo3.py, as zoo2)."""
    try:
        return dict(status="ok", **_attempt(lambda: zoo3.run(job), limit))
    except JobTimeout:
        return dict(status="failed", reason="time limit %d s" % limit)
    except Exception as e:
        return dict(status="failed", reason=_short_exc(e))


RUNNERS = {"transformers": run_transformers, "timm": run_timm, "diffusers": run_diffusers}
RUNNERS.update({p: run_zoo2 for p in zoo2.PACKAGES})
RUNNERS.update({p: run_zoo3 for p in zoo3.PACKAGES})


def list_jobs(packages, mappings):
    out = []
    if "transformers" in packages:
        import zoo_transformers as zt

        for mtype, cls in zt.jobs(mappings):
            for attn in ("eager", "sdpa"):
                out.append(dict(key="transformers/%s/%s" % (cls, attn), package="transformers", name=cls,
                                mtype=mtype, attn=attn))
    if "timm" in packages:
        import zoo_timm

        for fam, names in zoo_timm.jobs():
            for n in names[: zoo_timm.PER_FAMILY]:
                for attn in ("eager", "sdpa"):
                    out.append(dict(key="timm/%s/%s" % (n, attn), package="timm", name=n, family=fam, attn=attn))
    if "diffusers" in packages:
        import zoo_diffusers

        for n in zoo_diffusers.jobs():
            for attn in ("eager", "sdpa"):
                out.append(dict(key="diffusers/%s/%s" % (n, attn), package="diffusers", name=n, attn=attn))
    out += zoo2.list_jobs([p for p in packages if p in zoo2.PACKAGES])
    out += zoo3.list_jobs([p for p in packages if p in zoo3.PACKAGES])
    return out


def _prepare(tree):
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")
    tree = os.path.abspath(tree)
    sys.path.insert(0, tree)
    recorder.set_tree(tree)
    torch.set_num_threads(1)


def check_origin(package, tree):
    zoo2.before_import(package)
    zoo3.before_import(package)
    mod = __import__(package)
    f = os.path.abspath(mod.__file__)
    if not f.startswith(os.path.abspath(tree) + os.sep):
        raise RuntimeError("%s imported from %s, not from the tree %s" % (package, f, tree))
    return f


def _worker(conn, tree, limit):
    _prepare(tree)
    checked = set()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        t0 = time.time()
        recorder.take()
        try:
            if job["package"] not in checked:
                check_origin(job["package"], tree)
                checked.add(job["package"])
            res = RUNNERS[job["package"]](job, limit)
        except Exception as e:
            res = dict(status="failed", reason=_short_exc(e), trace=traceback.format_exc()[-2000:])
        res["seconds"] = round(time.time() - t0, 3)
        res["sites"] = recorder.take()
        outside = recorder.take_outside()
        if outside:
            res["layers_outside_tree"] = outside
        conn.send(res)


def _lister(conn, tree, packages, mappings):
    _prepare(tree)
    for p in packages:
        check_origin(p, tree)
    conn.send(list_jobs(packages, mappings))


def list_jobs_in_child(tree, packages, mappings):
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()
    p = ctx.Process(target=_lister, args=(b, tree, packages, mappings))
    p.start()
    jobs = a.recv()
    p.join()
    return jobs


class Worker:
    def __init__(self, tree, limit):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, tree, limit), daemon=True)
        self.proc.start()
        child.close()
        self.job = None
        self.deadline = None
        self.fresh = True

    def give(self, job, hard_limit):
        # the first job of a fresh worker also pays for its imports
        self.job = job
        self.deadline = time.time() + hard_limit + (120 if self.fresh else 0)
        self.fresh = False
        self.conn.send(job)

    def kill(self):
        try:
            self.proc.kill()
        except Exception:
            pass
        self.proc.join(5)

    def close(self):
        try:
            self.conn.send(None)
        except Exception:
            pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.kill()


def run_pool(jobs, tree, nworkers, limit, hard_limit, on_result):
    """Run `jobs` on `nworkers` forked workers; `on_result(job, result)` for each."""
    from multiprocessing.connection import wait

    pending = list(jobs)
    workers = []
    while pending or any(w.job for w in workers):
        while len(workers) < nworkers and pending:
            workers.append(Worker(tree, limit))
        for w in workers:
            if w.job is None and pending:
                w.give(pending.pop(0), hard_limit)
        busy = [w for w in workers if w.job is not None]
        if not busy:
            break
        ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=2)
        now = time.time()
        for w in list(busy):
            res = None
            if w.conn in ready:
                try:
                    res = w.conn.recv()
                except (EOFError, OSError):
                    res = None
            if res is not None:
                job, w.job = w.job, None
                on_result(job, res)
                continue
            dead = not w.proc.is_alive()
            if dead or now > w.deadline:
                job, w.job = w.job, None
                w.kill()
                workers.remove(w)
                why = "worker died (exit %s)" % w.proc.exitcode if dead else "killed after %d s" % hard_limit
                on_result(job, dict(status="failed", reason=why, seconds=None, sites=[]))
    for w in workers:
        w.close()
