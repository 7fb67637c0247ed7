#!/usr/bin/env python3
"""Scores stridelint against the candle truth harness and writes the derived tables.

Reads the runner's logs (target/candle_real/log/base, log/mut), lints the registry's
candle-transformers 0.11.1 sources with the built binary (unmodified, and one copy of a model
file per mutant with the skipped `.contiguous()` deleted), and writes
tests/data/candle_real/{calls,mutations,copies,alarms}.csv and META.json.

Usage: scripts/candle_real/score.py [--log DIR] [--tree DIR] [--bin PATH] [--out DIR] [--misses]
"""
import argparse
import collections
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKENDS = ["cpu", "mkl", "cuda", "metal"]
CONTRACT_OPS = {
    "matmul", "broadcast_matmul", "index_select", "gather", "scatter", "scatter_add", "index_add",
    "slice_set", "cat", "arg_sort_last_dim", "sort_last_dim", "softmax_last_dim", "rms_norm",
    "layer_norm", "rope", "rope_i", "rope_thd", "RmsNorm", "LayerNorm",
}
RESHAPE_OUTER = {"reshape", "flatten", "flatten_to", "flatten_from", "flatten_all", "get"}
NAMES = {"CUDA": "cuda", "Metal": "metal", "mkl/accelerate": "mkl", "CPU (gemm crate)": "cpu"}


def is_reshape_record(r):
    """A reshape the model itself asked for: `reshape` at depth 0, or the reshape under a
    `flatten*` / `get` frame (depth 1)."""
    outer = r["outer"]
    return r["op"] == "reshape" and outer in RESHAPE_OUTER and (
        r["depth"] == 0 or (r["depth"] == 1 and outer != "reshape"))


def registry_tree():
    g = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/candle-transformers-0.11.1"))
    return g[0] if g else None


def read_log(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def split_site(site):
    file, line, col = site.rsplit(":", 2)
    return file, int(line), int(col)


def is_model_site(site):
    return bool(site) and not site.startswith("@")


def named_backends(finding):
    """The backends a SL005/SL006 finding says reject the call."""
    msg = finding.get("message", "")
    if "every candle backend" in msg:
        return set(BACKENDS)
    for n in finding.get("notes", []):
        if n.startswith("fails on "):
            body = n[len("fails on "):]
            body = re.split(r";| \(the check", body)[0]
            return {NAMES.get(p.strip(), p.strip()) for p in body.split(", ")}
    m = re.search(r"fails on (.*?)(, passes on|:|$)", msg)
    if m:
        return {NAMES.get(p.strip(), p.strip()) for p in m.group(1).split(", ")}
    return set()


CONDITION = "holds for all sizes with "
AT_LEAST_2 = re.compile(r"(?:^|, )([^,]+?) ≥ 2(?=,|$)")


def needs_two(finding):
    """The sizes a finding's condition note says must be >= 2 ("holds for all sizes with
    b ≥ 2, t ≥ 2, ..."), as the names it prints."""
    for n in finding.get("notes") or []:
        if n.startswith(CONDITION):
            return {m.group(1) for m in AT_LEAST_2.finditer(n[len(CONDITION):])}
    return set()


def subject_arg(finding, recs):
    """The logged argument (its name in the log) that is the finding's subject: the operand
    whose note prints the subject's shape under that name (`lhs (5, b·t, ...)`), or None
    when the notes name no logged argument, or more than one, with that shape."""
    shape = (finding.get("subject") or {}).get("shape")
    if not shape or not recs:
        return None
    text = "(" + ", ".join(shape) + ")"
    names = {a["n"] for r in recs for a in r["args"]}
    hit = {n for n in names for note in finding.get("notes") or [] if note.startswith(f"{n} {text}")}
    return hit.pop() if len(hit) == 1 else None


def outside_size_condition(finding, recs):
    """Why the logged runs of a finding's site lie outside the condition it states, or None.

    A SL005/SL006 finding holds for named sizes >= 2 (its note "holds for all sizes with
    b ≥ 2, t ≥ 2, ..."). `recs` are the logged calls of the finding's op on its lines. When
    they come from one call site, the logged operand that the notes print as the subject has
    the subject's rank, and in every run some subject dim whose printed size is a name the
    condition needs >= 2, or a product of such names (`b·t`), had size 1 or 0, then every run
    broke the condition: a product of sizes that is 1 has every factor 1, one that is 0 a
    factor 0. Such runs are no evidence against the finding (nor for it). Anything the log
    cannot decide exactly (two sites, no operand named as the subject, a dim printed as a
    quotient or with a constant, a product of 2 or more) leaves the finding where it was."""
    need = needs_two(finding)
    subject = (finding.get("subject") or {}).get("shape") or []
    if not need or not recs or len({r["site"] for r in recs}) != 1:
        return None
    arg = subject_arg(finding, recs)
    if arg is None:
        return None
    dims = [i for i, e in enumerate(subject) if all(x in need for x in e.split("\u00b7"))]
    seen = set()
    for r in recs:
        shape = next((a["shape"] for a in r["args"] if a["n"] == arg), None)
        if shape is None or len(shape) != len(subject):
            return None
        small = [i for i in dims if shape[i] <= 1]
        if not small:
            return None
        seen.add((small[0], tuple(shape)))
    i, shape = min(seen)
    return "dim %d (%s) of %s had size %d in every run (%d runs, e.g. %s)" % (
        i, subject[i], arg, shape[i], len(recs), list(shape))


def lint(binary, paths):
    r = subprocess.run([binary, "check", *paths, "--no-cache", "--output-format", "json"],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"stridelint failed ({r.returncode}): {r.stderr[:2000]}")
    return json.loads(r.stdout or "[]")


def rel(path, tree):
    p = os.path.realpath(path)
    src = os.path.realpath(os.path.join(tree, "src")) + os.sep
    return p[len(src):] if p.startswith(src) else p


def covers(f, line):
    return f["location"]["row"] <= line <= f["end_location"]["row"]


def delete_contiguous(text, line, col):
    """Deletes the `.contiguous()` (and a directly following `?`) whose method name starts at
    line:col (1-based, as `Location::caller()` reports a method call). Keeps line numbers."""
    lines = text.split("\n")
    s = lines[line - 1]
    i = col - 1
    if not s[i:].startswith("contiguous()"):
        j = s.find("contiguous()")
        if j < 0:
            return None
        i = j
    end = i + len("contiguous()")
    k = i - 1
    while k >= 0 and s[k] in " \t":
        k -= 1
    if k < 0:
        # the dot is on a previous line: `.contiguous()` alone on this line after a `\n`
        return None
    if s[k] != ".":
        return None
    if end < len(s) and s[end] == "?":
        end += 1
    lines[line - 1] = s[:k] + s[end:]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", default=os.path.join(ROOT, "target/candle_real/log"))
    ap.add_argument("--tree", default=os.environ.get("STRIDELINT_CANDLE_TREE") or registry_tree())
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/stridelint"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/data/candle_real"))
    ap.add_argument("--misses", action="store_true", help="print every miss")
    a = ap.parse_args()
    tree = a.tree
    status = json.load(open(os.path.join(a.log, "base", "status.json")))
    models = sorted(status)

    # ---------------------------------------------------------------- base runs
    base = {m: read_log(os.path.join(a.log, "base", f"{m}.jsonl")) for m in models
            if os.path.exists(os.path.join(a.log, "base", f"{m}.jsonl"))}
    calls = {}  # (file, line, col, op) -> counters
    base_err = collections.defaultdict(set)  # model -> {(site, op, backend)}
    base_silent = collections.defaultdict(set)  # model -> {(site, op)} metal computes wrong values
    line_verdicts = collections.defaultdict(lambda: {"n": 0, "rej": set(), "ops": set()})
    line_records = collections.defaultdict(list)  # (file, line) -> contract-op records there
    reshape_sites = {}  # (file, line, col) -> [executed, copied, op]
    base_copies = collections.defaultdict(set)  # model -> reshape-family sites that copied
    for m, recs in base.items():
        for r in recs:
            site = r["site"]
            if not is_model_site(site):
                continue
            f, ln, col = split_site(site)
            op = r["op"]
            for b in BACKENDS:
                if r["v"][b] == "err":
                    base_err[m].add((site, op, b))
            if r["v"]["metal"] == "silent":
                base_silent[m].add((site, op))
            if op in CONTRACT_OPS or op in ("reshape", "contiguous"):
                k = (f, ln, col, op)
                c = calls.setdefault(k, {"runs": 0, "direct": False, "models": set(),
                                         **{b: 0 for b in BACKENDS}, "metal_silent": 0, "copied": 0})
                c["runs"] += 1
                c["models"].add(m)
                c["direct"] |= r["depth"] == 0
                for b in BACKENDS:
                    c[b] += r["v"][b] == "err"
                c["metal_silent"] += r["v"]["metal"] == "silent"
                c["copied"] += bool(r.get("copied"))
            if op in CONTRACT_OPS:
                lv = line_verdicts[(f, ln)]
                lv["n"] += 1
                lv["ops"].add(op)
                lv["rej"] |= {b for b in BACKENDS if r["v"][b] == "err"}
                line_records[(f, ln)].append(r)
            outer = r["outer"]
            if is_reshape_record(r):
                if r.get("copied"):
                    base_copies[m].add(site)
                e = reshape_sites.setdefault((f, ln, col), [0, 0, outer])
                e[0] += 1
                e[1] += bool(r.get("copied"))

    # ---------------------------------------------------------------- lint, unmodified
    findings = lint(a.bin, [os.path.join(tree, "src")])
    for f in findings:
        f["rel"] = rel(f["filename"], tree)
    by_file = collections.defaultdict(list)
    for f in findings:
        by_file[f["rel"]].append(f)

    # SL005/SL006 on the unmodified tree: alarms at executed lines
    alarms = []
    for f in findings:
        if f["code"] not in ("SL005", "SL006"):
            continue
        lines = [(f["rel"], ln) for ln in range(f["location"]["row"], f["end_location"]["row"] + 1)]
        ex = [line_verdicts[k] for k in lines if k in line_verdicts]
        named = named_backends(f)
        why = ""
        if not ex:
            kind = "unexecuted"
            rej = set()
        else:
            rej = set().union(*(e["rej"] for e in ex))
            kind = "true" if rej else "false"
            if kind == "false":
                op = (f.get("subject") or {}).get("op")
                recs = [r for k in lines for r in line_records.get(k, []) if r["op"] == op]
                why = outside_size_condition(f, recs) or ""
                if why:
                    kind = "outside"
        alarms.append({"file": f["rel"], "line": f["location"]["row"], "code": f["code"], "kind": kind,
                       "rejected": "+".join(b for b in BACKENDS if b in rej),
                       "named": "+".join(b for b in BACKENDS if b in named), "why": why})
    alarms.sort(key=lambda x: (x["file"], x["line"], x["code"]))
    # lines some backend rejects in the unmodified runs, found or not
    base_rejected_lines = sorted(k for k, v in line_verdicts.items() if v["rej"])

    # ---------------------------------------------------------------- mutations
    mutants = json.load(open(os.path.join(a.log, "mut", "mutants.json")))
    mut_rows = []
    tmp = tempfile.mkdtemp(prefix="candle_real_")
    shutil.copytree(os.path.join(tree, "src"), os.path.join(tmp, "src"))
    single_base = {}
    for mu in mutants:
        site = mu["site"]
        mf, ml, mc = split_site(site)
        primary = None
        rej_at = set()
        rej_else = set()
        silent = set()
        new_copies = set()  # (file, line): reshapes that copy only in the mutant
        skipped_ok = False
        for model in sorted(mu["runs"]):
            p = os.path.join(a.log, "mut", f"{mu['id']}__{model}.jsonl")
            if not os.path.exists(p):
                continue
            recs = read_log(p)
            skipped_ok |= any(r.get("skipped") for r in recs)
            for r in recs:
                s = r["site"]
                if not is_model_site(s):
                    continue
                if is_reshape_record(r) and r.get("copied") and s not in base_copies[model]:
                    new_copies.add(split_site(s)[:2])
                new = [b for b in BACKENDS if r["v"][b] == "err" and (s, r["op"], b) not in base_err[model]]
                if r["v"]["metal"] == "silent" and (s, r["op"]) not in base_silent[model]:
                    silent.add(split_site(s)[:2])
                if not new:
                    continue
                fl = split_site(s)[:2]
                if primary is None:
                    primary = fl + (r["op"],)
                if fl == primary[:2]:
                    rej_at |= set(new)
                else:
                    rej_else |= set(new)
        row = {"id": mu["id"], "file": mf, "line": ml, "col": mc, "models": len(mu["runs"]),
               "skipped": "y" if skipped_ok else "n",
               "rejected_at": "", "op": "", "rejected_by": "", "elsewhere": "",
               "metal_silent": "y" if silent else "n", "code": "", "named": "", "found": "",
               "agree": "", "copy_at": ";".join(f"{f}:{ln}" for f, ln in sorted(new_copies)),
               "sl002": "", "note": ""}
        if primary is not None:
            row["rejected_at"] = f"{primary[0]}:{primary[1]}"
            row["op"] = primary[2]
            row["rejected_by"] = "+".join(b for b in BACKENDS if b in rej_at)
            row["elsewhere"] = "+".join(b for b in BACKENDS if b in rej_else - rej_at)
        # lint the mutant file
        src = open(os.path.join(tree, "src", mf)).read()
        mutated = delete_contiguous(src, ml, mc)
        if mutated is None:
            row["note"] = "could not delete the call textually"
        else:
            path = os.path.join(tmp, "src", mf)
            if mf not in single_base:
                single_base[mf] = lint(a.bin, [path])
            open(path, "w").write(mutated)
            mfind = lint(a.bin, [path])
            open(path, "w").write(src)
            if new_copies:
                got = sum(1 for f, ln in new_copies if any(
                    g["code"] == "SL002" and rel(g["filename"], tmp) == f and covers(g, ln) for g in mfind))
                row["sl002"] = f"{got}/{len(new_copies)}"
            if primary is not None:
                if primary[0] != mf:
                    row["note"] = "rejected in another file"
                hits = [f for f in mfind if f["code"] in ("SL005", "SL006") and rel(f["filename"], tmp) == primary[0]
                        and covers(f, primary[1])]
                if hits:
                    named = set().union(*(named_backends(f) for f in hits))
                    row["code"] = "+".join(sorted({f["code"] for f in hits}))
                    row["named"] = "+".join(b for b in BACKENDS if b in named)
                    row["found"] = "y"
                    row["agree"] = "y" if named == rej_at else "n"
                    pre = [f for f in single_base[mf] if f["code"] in ("SL005", "SL006") and covers(f, primary[1])]
                    if pre:
                        row["note"] = (row["note"] + "; " if row["note"] else "") + "finding already on the unmodified file"
                else:
                    row["found"] = "n"
                    near = [f for f in mfind if f["code"] in ("SL005", "SL006")
                            and f not in single_base[mf]]
                    if near:
                        row["note"] = (row["note"] + "; " if row["note"] else "") + "new finding at line " + ",".join(
                            str(f["location"]["row"]) for f in near)
            else:
                new = [f for f in mfind if f["code"] in ("SL005", "SL006")
                       and not any(g["code"] == f["code"] and g["location"] == f["location"] for g in single_base[mf])]
                if new:
                    row["code"] = "+".join(sorted({f["code"] for f in new}))
                    row["note"] = "finding on a mutant no backend rejects, line " + ",".join(
                        str(f["location"]["row"]) for f in new)
        mut_rows.append(row)
    shutil.rmtree(tmp)

    # ---------------------------------------------------------------- SL002 against copies
    sl002 = [f for f in findings if f["code"] == "SL002"]
    copy_rows = []
    def covered(g, f, ln, op):
        # A finding spans its whole call chain (`x.reshape(..)?.transpose(..)?.flatten_from(..)`):
        # it is about the site of its own op, named in its subject.
        subject_op = (g.get("subject") or {}).get("op")
        return g["rel"] == f and covers(g, ln) and subject_op in (None, op)

    def own_site(g):
        # The chain ends at the finding's own call, so of the sites of its op the chain covers
        # (marian's `.reshape(..)?.transpose(1, 2)?.reshape(..)`) it is the last one.
        at = [(ln, col) for (f, ln, col), (_, _, outer) in reshape_sites.items()
              if covered(g, f, ln, outer)]
        return max(at) if at else None

    own = {id(g): own_site(g) for g in sl002}

    def reports(g, f, ln, op, col=None):
        if not covered(g, f, ln, op):
            return False
        return col is None or own[id(g)] is None or own[id(g)] == (ln, col)

    for (f, ln, col), (ex, cp, outer) in sorted(reshape_sites.items()):
        hit = any(reports(g, f, ln, outer, col) for g in sl002)
        copy_rows.append({"file": f, "line": ln, "col": col, "op": outer, "runs": ex, "copied": cp,
                          "sl002": "y" if hit else "n"})
    reshape_lines = {(r["file"], r["line"]) for r in copy_rows}
    executed_lines = {(k[0], k[1]) for k in calls} | reshape_lines
    sl002_other = []
    for g in sl002:
        at = [r for r in copy_rows if reports(g, r["file"], r["line"], r["op"], r["col"])]
        if not at:
            sl002_other.append((g["rel"], g["location"]["row"],
                                "executed" if any(g["rel"] == k[0] and covers(g, k[1]) for k in executed_lines)
                                else "unexecuted"))
    tp = sum(1 for r in copy_rows if r["copied"] and r["sl002"] == "y")
    fn = sum(1 for r in copy_rows if r["copied"] and r["sl002"] == "n")
    fp = sum(1 for r in copy_rows if not r["copied"] and r["sl002"] == "y")

    # ---------------------------------------------------------------- causes of the misses
    # scripts/candle_real/causes.csv: a hand classification of each missed mutation (what the
    # analysis would need; README §5); a miss not listed there is "unclassified".
    causes = {}
    cpath = os.path.join(ROOT, "scripts/candle_real/causes.csv")
    if os.path.exists(cpath):
        for c in csv.DictReader(open(cpath)):
            causes[(c["file"], int(c["line"]), int(c["col"]))] = c["cause"]
    for r in mut_rows:
        r["cause"] = ""
        if r["rejected_by"] and r["found"] != "y":
            r["cause"] = causes.get((r["file"], r["line"], r["col"]), "unclassified")

    # ---------------------------------------------------------------- figures
    rejected = [r for r in mut_rows if r["rejected_by"]]
    found = [r for r in rejected if r["found"] == "y"]
    agree = [r for r in found if r["agree"] == "y"]
    false_alarms = [x for x in alarms if x["kind"] == "false"]
    ops_count = collections.Counter()
    for (f, ln, col, op), c in calls.items():
        ops_count[op] += 1
    figures = {
        "models_run": len(models),
        "models_ok": sum(1 for m in models if status[m] == "ok"),
        "models_failing_unmodified": {m: status[m] for m in models if status[m] != "ok"},
        "call_sites": len(calls),
        "call_sites_per_op": dict(sorted(ops_count.items())),
        "records": sum(len(v) for v in base.values()),
        "base_rejected_lines": len(base_rejected_lines),
        "mutations": len(mut_rows),
        "mutations_rejected": len(rejected),
        "mutations_rejected_by": dict(sorted(collections.Counter(r["rejected_by"] for r in rejected).items())),
        "mutations_no_effect": sum(1 for r in mut_rows if not r["rejected_by"]),
        "mutations_metal_silent": sum(1 for r in mut_rows if r["metal_silent"] == "y"),
        "mutations_found": len(found),
        "mutations_found_backends_agree": len(agree),
        "found_by_op": {op: f"{sum(1 for r in found if r['op'] == op)}/{n}" for op, n in
                        sorted(collections.Counter(r["op"] for r in rejected).items())},
        "misses_by_cause": dict(sorted(collections.Counter(r["cause"] for r in mut_rows if r["cause"]).items())),
        "sl005_sl006_recall": round(len(found) / len(rejected), 4) if rejected else None,
        "sl005_sl006_recall_with_backends": round(len(agree) / len(rejected), 4) if rejected else None,
        "mutations_new_copy": sum(1 for r in mut_rows if r["copy_at"]),
        "new_copy_sites": sum(int(r["sl002"].split("/")[1]) for r in mut_rows if r["sl002"]),
        "new_copy_sites_sl002": sum(int(r["sl002"].split("/")[0]) for r in mut_rows if r["sl002"]),
        "alarms_unmodified": len(alarms),
        "alarms_true": sum(1 for x in alarms if x["kind"] == "true"),
        "false_alarms": len(false_alarms),
        "alarms_outside_condition": sum(1 for x in alarms if x["kind"] == "outside"),
        "alarms_unexecuted": sum(1 for x in alarms if x["kind"] == "unexecuted"),
        "reshape_sites": len(copy_rows),
        "reshape_sites_copying": tp + fn,
        "sl002_tp": tp, "sl002_fn": fn, "sl002_fp": fp,
        "sl002_recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "sl002_precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "sl002_elsewhere_executed": sum(1 for x in sl002_other if x[2] == "executed"),
        "sl002_elsewhere_unexecuted": sum(1 for x in sl002_other if x[2] == "unexecuted"),
    }

    # ---------------------------------------------------------------- write
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "calls.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["file", "line", "col", "op", "direct", "runs", "models", "cpu_err", "mkl_err", "cuda_err",
                    "metal_err", "metal_silent", "copied"])
        for (f, ln, col, op), c in sorted(calls.items()):
            w.writerow([f, ln, col, op, "y" if c["direct"] else "n", c["runs"], len(c["models"]),
                        c["cpu"], c["mkl"], c["cuda"], c["metal"], c["metal_silent"],
                        c["copied"] if op in ("reshape", "contiguous") else ""])
    cols = ["id", "file", "line", "col", "models", "skipped", "rejected_at", "op", "rejected_by", "elsewhere",
            "metal_silent", "code", "named", "found", "agree", "cause", "copy_at", "sl002", "note"]
    with open(os.path.join(a.out, "mutations.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, cols, lineterminator="\n")
        w.writeheader()
        for r in sorted(mut_rows, key=lambda r: (r["file"], r["line"], r["col"])):
            w.writerow(r)
    with open(os.path.join(a.out, "copies.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, ["file", "line", "col", "op", "runs", "copied", "sl002"], lineterminator="\n")
        w.writeheader()
        for r in copy_rows:
            w.writerow(r)
    with open(os.path.join(a.out, "alarms.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, ["file", "line", "code", "kind", "rejected", "named", "why"], lineterminator="\n")
        w.writeheader()
        for r in alarms:
            w.writerow(r)
    meta = {
        "candle": "candle-core / candle-nn / candle-transformers 0.11.1 (cargo registry), CPU build",
        # the analysis measured: the last commit that touched src/ or rules/
        "stridelint": subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h", "--", "src", "rules"],
                                     capture_output=True, text=True).stdout.strip(),
        "batch": 2, "seq": 6, "decode_step": True,
        "models": models,
        **figures,
    }
    with open(os.path.join(a.out, "META.json"), "w") as fh:
        json.dump(meta, fh, indent=1, sort_keys=False)
        fh.write("\n")

    for k, v in figures.items():
        print(f"{k}: {v}")
    if a.misses:
        print("\n# mutations some backend rejects, not found")
        for r in sorted(rejected, key=lambda r: (r["file"], r["line"])):
            if r["found"] != "y":
                print(f"  {r['id']} {r['file']}:{r['line']}:{r['col']} -> {r['rejected_at']} {r['op']} "
                      f"[{r['rejected_by']}] {r['cause']} {r['note']}")
        print("\n# found with other backends")
        for r in found:
            if r["agree"] != "y":
                print(f"  {r['id']} {r['rejected_at']} {r['op']} rejected [{r['rejected_by']}] named [{r['named']}]")
        print("\n# mutants without effect but a new finding")
        for r in mut_rows:
            if not r["rejected_by"] and r["code"]:
                print(f"  {r['id']} {r['file']}:{r['line']} {r['code']} {r['note']}")
        print("\n# alarms on the unmodified tree")
        for x in alarms:
            print(f"  {x['kind']:10} {x['file']}:{x['line']} {x['code']} rejected [{x['rejected']}] named [{x['named']}]"
                  + (f" (outside the condition the finding states: {x['why']})" if x["why"] else ""))
        print("\n# lines some backend rejects in the unmodified runs")
        for f, ln in base_rejected_lines:
            v = line_verdicts[(f, ln)]
            hit = any(x["file"] == f and x["line"] == ln for x in alarms)
            print(f"  {f}:{ln} {sorted(v['ops'])} [{'+'.join(b for b in BACKENDS if b in v['rej'])}] "
                  f"{'found' if hit else 'missed'}")
        print("\n# SL002 misses (copying reshape sites without a finding)")
        for r in copy_rows:
            if r["copied"] and r["sl002"] == "n":
                print(f"  {r['file']}:{r['line']}:{r['col']} {r['op']} copied {r['copied']}/{r['runs']}")
        print("\n# SL002 false positives (executed, never copied)")
        for r in copy_rows:
            if not r["copied"] and r["sl002"] == "y":
                print(f"  {r['file']}:{r['line']}:{r['col']} {r['op']} runs {r['runs']}")
        print("\n# SL002 at other lines")
        for x in sl002_other:
            print(f"  {x[0]}:{x[1]} {x[2]}")


if __name__ == "__main__":
    main()
