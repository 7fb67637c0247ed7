#!/usr/bin/env python3
"""Score a stridelint binary against the real-code truth tables.

    python3 scripts/realcode/score.py [--bin target/release/stridelint] [--tree target/realcode/src] [--json]
    python3 scripts/realcode/score.py --tree2     # the second tree: tests/data/realcode2, target/realcode/src2
    python3 scripts/realcode/score.py --tree3     # the third (held out): tests/data/realcode3, target/realcode/src3

Needs only Python 3 and the tree (no torch). Matching is exact on file (relative to the tree)
+ start row/column + end row/column, in stridelint's JSON convention (rows 1-based, columns
1-based characters, end exclusive), which is what tests/data/realcode/*.jsonl record.

(a) Unmodified tree: `check TREE --no-cache --output-format json --exit-zero`.
    SL002 at an executed site that copied at least once: true positive; at an executed site
    that never copied: false positive, except when a dim the finding merges (for a block-count
    finding, any dim) had size 1 or 0 in the site's recorded run (the finding holds for named
    sizes >= 2, as its note says), or when the finding's note names the SDPA kernel it holds
    for (the run chose its kernel itself); both listed apart in sl002_outside_sizes.jsonl, as
    for SL001 below; recall = TP / executed reshape-family sites (reshape,
    reshape_as, flatten, ravel, rearrange, and the einops layer `Rearrange` at the call of the
    layer or of the nn.Sequential holding it) that copied, precision = TP / (TP + FP). SL002 at
    positions no model executed: listed apart (truth unknown). SL001 at executed sites: listed
    (false alarms; an SL001 at a site where torch raised "view size is not compatible" is counted
    apart, as a true finding). Findings that miss
    every site exactly but share a line with an executed site of the same kind are listed as
    "line only" (a sign of position bugs).
    SL009 (a `.contiguous()` that returns its input) at an executed `contiguous` site that never
    copied: true; at one that copied in some run: false. Its recall is counted against the
    executed sites that never copied, most of which no rule that stays certain can claim (the
    layout comes from an argument or an unknown call).

(b) Mutations (tests/data/realcode/mutations.jsonl): the edits are put into batches with at
    most one edit per file, one overlay tree per batch (hardlinks of the tree, the edited files
    replaced by the original bytes minus the deleted `.contiguous()`), one lint run per batch.
    SL001 recall = mutations that raised and got an SL001 at the mutated view / mutations that
    raised, in total and per form (A `chain`, B `assign`/`return`, C a reshape written as a
    view, F a flatten written as a view; `mutations.FORMS`). False alarms = SL001 at the
    mutated view of a mutation that was executed but did not raise (in runs that all ended ok;
    `runs` in a row says where one did not: then the SL001 is listed with the unreached ones,
    truth unknown; and except when a dim the finding names as unmergeable had size 1 in the
    recorded run: every finding holds for named sizes >= 2, as its note says, so that run is
    outside its claim; so is a run outside a kernel or memory-format condition the finding's
    note states; listed apart in sl001_outside_sizes.jsonl), plus SL001 anywhere in a
    batch run that is neither in the unmodified run (positions in an edited file mapped through
    the edit) nor at a raising mutated view. An edit that rewrites a call (forms C, F) replaces
    its bytes; the others delete `.contiguous()`.

Why batching does not change the linter's verdicts. stridelint analyses each file on its own:
its interpreter follows only calls it can resolve inside the file (`f(x)`, `self.m(x)`), and
imported functions are unknown calls with unknown layouts. Under that assumption a file's
findings depend only on its own bytes, and an edit in another file cannot change them; so one
edit per file per batch gives, for each edited file, exactly the findings of a run with that
edit alone, and unedited files give the unmodified findings. The assumption would break if the
analysis started to follow calls across files: then two edits interact only if a function in
one edited file calls (directly or through others) one in the other. `--check-batching N`
tests the assumption: it lints N mutations alone and compares each edited file's findings with
its batch run's (and reports any difference).
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import mutations as mut  # noqa: E402  (pure Python, no torch)
import trees  # noqa: E402

RESHAPE_OPS = ("reshape", "reshape_as", "flatten", "ravel", "rearrange", "Rearrange")
VIEW_OPS = ("view", "view_as")


def lint(binary, tree):
    t = time.time()
    p = subprocess.run([binary, "check", tree, "--no-cache", "--output-format", "json", "--exit-zero"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1, 2):
        raise SystemExit("stridelint failed (%d): %s" % (p.returncode, p.stderr.decode()[-2000:]))
    findings = json.loads(p.stdout or b"[]")
    root = os.path.abspath(tree)
    for f in findings:
        fn = os.path.abspath(f["filename"])
        f["file"] = os.path.relpath(fn, root).replace(os.sep, "/")
        f["pos"] = cpython_position(fn, (f["location"]["row"], f["location"]["column"],
                                         f["end_location"]["row"], f["end_location"]["column"]))
    return findings, time.time() - t


_LINES = {}


def cpython_position(path, pos):
    """A finding's span in the position convention of CPython's call instructions, which the
    recorder saw: a method call whose name is on a later line than the start of its receiver
    (`x.view(...)` then, on the next line, `.reshape(...)`) starts at the method name there.
    Other spans are unchanged. (row, column, end row, end column): 1-based, end exclusive."""
    row, col, erow, ecol = pos
    if erow == row:
        return pos
    if path not in _LINES:
        try:
            with open(path, encoding="utf-8") as fh:
                _LINES[path] = fh.read().split("\n")
        except OSError:
            _LINES[path] = None
    lines = _LINES[path]
    if not lines or erow > len(lines):
        return pos
    # Walk back from the closing parenthesis to its opening one, then over the name.
    r, c = erow - 1, ecol - 2
    if c < 0 or c >= len(lines[r]) or lines[r][c] != ")":
        return pos
    depth = 0
    while r >= row - 1:
        ch = lines[r][c] if 0 <= c < len(lines[r]) else "\n"
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                break
        c -= 1
        if c < 0:
            r -= 1
            if r < 0:
                return pos
            c = len(lines[r]) - 1
    else:
        return pos
    end = c
    c -= 1
    while c >= 0 and (lines[r][c].isalnum() or lines[r][c] == "_"):
        c -= 1
    name_start = c + 1
    if name_start >= end or r + 1 == row:
        return pos
    before = lines[r][:name_start].rstrip()
    if not before.endswith("."):
        return pos
    return (r + 1, name_start + 1, erow, ecol)


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pkg(rel):
    return rel.split("/")[0]


def brief(f):
    return dict(file=f["file"], line=f["pos"][0], col=f["pos"][1], end_line=f["pos"][2], end_col=f["pos"][3],
                code=f["code"], message=f["message"])


def score_unmodified(findings, sites):
    by_pos = {(s["file"], s["line"], s["col"], s["end_line"], s["end_col"]): s for s in sites}
    by_line = collections.defaultdict(list)
    for s in sites:
        by_line[(s["file"], s["line"])].append(s)
    copying = {k for k, s in by_pos.items() if s["op"] in RESHAPE_OPS and s["copied"]}
    tp, fp, outside, unexec, line_only, sl001, sl001_raising = [], [], [], [], [], [], []
    sl001_unexec = 0
    sl009 = dict(tp=[], fp=[], unexecuted=0)
    found = set()
    for f in findings:
        key = (f["file"],) + f["pos"]
        s = by_pos.get(key)
        if f["code"] == "SL002":
            if s is not None:
                found.add(key)
                row = dict(brief(f), op=s["op"], executed=s["executed"], copied=s["copied"],
                           example=s["example"], models=s["models"])
                why = None if s["copied"] else (
                    outside_size_condition(said(f), s)
                    or outside_kernel_condition(f.get("notes") or []))
                if why:
                    outside.append(dict(row, why=why))
                else:
                    (tp if s["copied"] else fp).append(row)
            else:
                near = [x for x in by_line.get((f["file"], f["pos"][0]), []) if x["op"] in RESHAPE_OPS]
                if near:
                    line_only.append(dict(brief(f), sites=[[x["line"], x["col"], x["end_line"], x["end_col"], x["op"],
                                                           x["copied"]] for x in near]))
                else:
                    unexec.append(brief(f))
        elif f["code"] == "SL009":
            if s is not None and s["op"] == "contiguous":
                row = dict(brief(f), executed=s["executed"], copied=s["copied"], example=s["example"])
                (sl009["fp"] if s["copied"] else sl009["tp"]).append(row)
            else:
                sl009["unexecuted"] += 1
        elif f["code"] == "SL001":
            if s is not None and "view size is not compatible" in (s["message"] or ""):
                sl001_raising.append(dict(brief(f), op=s["op"], raised=s["raised"], site_message=s["message"]))
            elif s is not None:
                sl001.append(dict(brief(f), op=s["op"], executed=s["executed"], raised=s["raised"],
                                  site_message=s["message"], example=s["example"]))
            else:
                sl001_unexec += 1
                near = [x for x in by_line.get((f["file"], f["pos"][0]), []) if x["op"] in VIEW_OPS]
                if near:
                    line_only.append(dict(brief(f), sites=[[x["line"], x["col"], x["end_line"], x["end_col"], x["op"],
                                                           x["raised"]] for x in near]))
    missed = [by_pos[k] for k in sorted(copying - found)]
    sl009["no_op_sites"] = sum(1 for s in sites if s["op"] == "contiguous" and s["executed"] and not s["copied"])
    return dict(sl009=sl009, tp=tp, fp=fp, outside=outside, unexecuted=unexec, line_only=line_only, sl001_executed=sl001,
                sl001_raising=sl001_raising,
                sl001_unexecuted=sl001_unexec, missed=missed, copying=len(copying))


def edit_key(r):
    """(file, byte_start, byte_end, inserted text) of a mutation row."""
    return (r["file"],) + mut.row_edit(r)


def make_batches(rows):
    """Edits (file, byte_start, byte_end, inserted) -> batches with at most one edit per file."""
    edits = sorted({edit_key(r) for r in rows})
    batches = []
    for e in edits:
        for b in batches:
            if e[0] not in b:
                b[e[0]] = e
                break
        else:
            batches.append({e[0]: e})
    return batches


class Overlay:
    """One hardlink copy of the tree; files are replaced for a batch and linked back after."""

    def __init__(self, tree, path):
        self.tree, self.path = os.path.realpath(tree), path
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        mut.hardlink_copy(self.tree, path)
        self.changed = []

    def apply(self, batch):
        for rel, *edit in batch.values():
            with open(os.path.join(self.tree, rel), "rb") as f:
                data = f.read()
            mut.replace_file(self.path, self.tree, rel, mut.apply(data, edit))
            self.changed.append(rel)

    def restore(self):
        for rel in self.changed:
            mut.restore_file(self.path, self.tree, rel)
        self.changed = []

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


def map_through(tree, rel, edit, pos):
    """A (row, col, end_row, end_col) of the original file, in the file after `edit`; None
    when it overlaps the deleted text."""
    with open(os.path.join(tree, rel), "rb") as f:
        data = f.read()
    try:
        s, e = mut.view_span(data, pos)
        ns, ne = mut.moved(data, edit, (s, e))
    except (AssertionError, IndexError):
        return None
    t = mut.Text(mut.apply(data, edit))
    return t.pos(ns) + t.pos(ne)


def complete(r):
    """A non-raising mutation's verdict covers every model it ran to the end (mutate.py gives
    `runs` where one did not end ok, e.g. when another view of the same edit raised first)."""
    return all(v.get("status") == "ok" for v in (r.get("runs") or {}).values())



BLOCKS = "blocks of memory that no view can merge"
MERGED_DIMS = re.compile(r"dims (\d+) \([^()]*(?:\([^()]*\)[^()]*)*\) and (\d+) \(")


KERNEL_CONDITION = re.compile(r"`scaled_dot_product_attention` runs its ([\w/-]+) kernel")


def outside_kernel_condition(notes):
    """Why a run of a mutated view that did not raise lies outside a finding that holds only
    for one kernel of `F.scaled_dot_product_attention`, or None.

    Such a finding's note says "holds on the path where `scaled_dot_product_attention` runs
    its math kernel": the kernel is chosen at run time (device, mask, dropout, dtype), and the
    math kernel's output is contiguous, so a view of it that fails with that kernel and ran
    without error ran another kernel (on CPU, the flash kernel, whose output is laid out like
    the query). The run is no evidence against the finding, nor for it."""
    for note in notes:
        m = KERNEL_CONDITION.search(note)
        if m:
            return "the view ran with another kernel than the %s kernel its finding names" % m.group(1)
    return None


FORMAT_CONDITION = re.compile(r"`[\w.]+` has the default memory format")


def outside_format_condition(notes, inputs):
    """Why a run of a mutated view that did not raise lies outside a finding that holds only
    when a 4-d parameter has the default memory format, or None.

    Such a finding's note says "holds on the path where `z` has the default memory format
    (channels-last would make the permute contiguous)": the `permute(0, 2, 3, 1)` it rests
    on is contiguous when `z` is channels-last. `inputs` are the run's recordings of the
    tensor the mutated view took (the input of the deleted `.contiguous()`, or of the
    `reshape`/`flatten` rewritten): contiguous in every run means `z` was channels-last there.
    The run is no evidence against the finding, nor for it."""
    if not any(FORMAT_CONDITION.search(n) for n in notes):
        return None
    examples = [s.get("example") or {} for s in inputs]
    if examples and all(e.get("contiguous") for e in examples):
        return "the tensor the view took was contiguous in the run (a channels-last parameter), outside its finding's default-format condition"
    return None


def said(finding):
    """What a finding says: its first line and its notes (the arithmetic is in a note)."""
    return "\n".join([finding["message"], *(finding.get("notes") or [])])


def outside_size_condition(finding, site):
    """Why a run of a mutated view that did not raise lies outside what `finding` claims, or None.

    Every finding holds for named sizes >= 2 (its note lists them); the recorded run of the
    site (`example.input` = shape, strides, offset of the view's input, which the mutation
    leaves unchanged in shape) shows the sizes torch saw. When a dim the finding names as not
    mergeable had size 1 (or 0) there, the view could not fail in that run, and the finding's
    condition did not hold: such a run is no evidence against it (nor for it)."""
    example = (site or {}).get("example") or {}
    shape = (example.get("input") or [None])[0]
    m = MERGED_DIMS.search(finding or "")
    if shape and not m and BLOCKS in (finding or ""):
        # "its dims lie in N blocks of memory": every block must hold >= 2 elements, so
        # any dim of size 1 (or 0) may have joined two blocks in that run.
        ones = [i for i, n in enumerate(shape) if n <= 1]
        return ("outside the finding's sizes: dim %d had size %d in the run %s" % (ones[0], shape[ones[0]], shape)
                if ones else None)
    if not shape or not m:
        return None
    ones = [int(i) for i in m.groups() if int(i) < len(shape) and shape[int(i)] <= 1]
    if not ones:
        return None
    return "outside the finding's sizes: dim %d had size %d in the run %s" % (ones[0], shape[ones[0]], shape)


def score_mutations(binary, tree, rows, base_findings, work, check_batching=0, sites=()):
    site_at = {(s["file"], s["line"], s["col"], s["end_line"], s["end_col"], s["op"]): s for s in sites}
    sites_on_line = {(s["file"], s["line"], s["op"]): s for s in sites}
    batches = make_batches(rows)
    by_edit = collections.defaultdict(list)
    for r in rows:
        by_edit[edit_key(r)].append(r)
    base_sl001 = collections.defaultdict(set)
    for f in base_findings:
        if f["code"] == "SL001":
            base_sl001[f["file"]].add(f["pos"])
    ov = Overlay(tree, os.path.join(work, "overlay"))
    detected, missed, alarms, unknown_hits, outside = [], [], [], [], []
    per_batch = []
    batch_findings = {}
    lint_s = 0.0
    try:
        for i, b in enumerate(batches):
            ov.apply(b)
            try:
                fs, dt = lint(binary, ov.path)
            finally:
                ov.restore()
            lint_s += dt
            sl001 = collections.defaultdict(list)
            for f in fs:
                if f["code"] == "SL001":
                    sl001[f["file"]].append(f)
            for rel, e in b.items():
                batch_findings[e] = sorted((f["code"],) + f["pos"] for f in fs if f["file"] == rel)
            raising_sites = set()
            for e in b.values():
                for r in by_edit[e]:
                    mv = r["mutated_view"]
                    key = (mv["line"], mv["col"], mv["end_line"], mv["end_col"])
                    hit = [f for f in sl001.get(r["file"], []) if f["pos"] == key]
                    item = dict(file=r["file"], pattern=r["pattern"], form=mut.row_form(r), view=r["view"],
                                mutated_view=mv,
                                edit=r["edit"], raised=r["raised"], reached=r["reached"], models=r["models"][:3],
                                message=r.get("message"), finding=hit[0]["message"] if hit else None)
                    if r["raised"]:
                        raising_sites.add((r["file"],) + key)
                        (detected if hit else missed).append(item)
                    elif hit and r["reached"] and complete(r):
                        v = r["view"]
                        site = site_at.get((r["file"], v["line"], v["col"], v["end_line"], v["end_col"], v["op"]))
                        taken = [x for x in (sites_on_line.get((r["file"], r["edit"]["line"], "contiguous")),
                                             site if r["edit"].get("removed") != ".contiguous()" else None) if x]
                        why = (outside_size_condition(said(hit[0]), site)
                               or outside_kernel_condition(hit[0].get("notes") or [])
                               or outside_format_condition(hit[0].get("notes") or [], taken))
                        if why:
                            outside.append(dict(item, kind=why))
                        else:
                            alarms.append(dict(item, kind="mutated view did not raise"))
                    elif hit:
                        unknown_hits.append(item)
            # SL001 anywhere else that is new in this batch
            for rel, fl in sl001.items():
                e = b.get(rel)
                base = base_sl001.get(rel, set())
                if e is not None:
                    base = {map_through(tree, rel, e[1:], p) for p in base}
                for f in fl:
                    if f["pos"] in base or (rel,) + f["pos"] in raising_sites:
                        continue
                    mine = e is not None and any(
                        (r["mutated_view"]["line"], r["mutated_view"]["col"], r["mutated_view"]["end_line"],
                         r["mutated_view"]["end_col"]) == f["pos"] for r in by_edit[e])
                    if mine:
                        continue  # counted above (did not raise, or unknown)
                    alarms.append(dict(brief(f), kind="new SL001 elsewhere", batch=i,
                                       edited_file=rel if e is not None else None))
            per_batch.append(len(b))
        checked = []
        if check_batching:
            sample = sorted(batch_findings)[:: max(1, len(batch_findings) // check_batching)][:check_batching]
            for e in sample:
                ov.apply({e[0]: e})
                try:
                    fs, dt = lint(binary, ov.path)
                finally:
                    ov.restore()
                alone = sorted((f["code"],) + f["pos"] for f in fs if f["file"] == e[0])
                checked.append(dict(file=e[0], byte_start=e[1], same=alone == batch_findings[e]))
    finally:
        ov.close()
    return dict(batches=len(batches), edits=sum(per_batch), detected=detected, missed=missed, alarms=alarms,
                unknown_hits=unknown_hits, outside=outside, lint_seconds=round(lint_s, 1), batching_check=checked)


def ratio(a, b):
    return round(a / b, 4) if b else None


def per_form(rows, b):
    """SL001 mutation figures per form (A, B, C, F)."""
    out = {}
    for f in sorted({mut.row_form(r) for r in rows}):
        mine = [r for r in rows if mut.row_form(r) == f]
        d = sum(x["form"] == f for x in b["detected"])
        m = sum(x["form"] == f for x in b["missed"])
        out[f] = dict(mutations=len(mine), executed=sum(1 for r in mine if r["models"]), raised=d + m, detected=d,
                      recall=ratio(d, d + m),
                      false_alarms=sum(x.get("form") == f and x["kind"] == "mutated view did not raise"
                                       for x in b["alarms"]))
    return out


def per_op(a, sites):
    """SL002 TP / FP / copying sites per reshape-family op (the second tree's einops ops)."""
    out = {}
    for op in RESHAPE_OPS:
        c = sum(1 for s in sites if s["op"] == op and s["copied"])
        tp, fp = sum(x["op"] == op for x in a["tp"]), sum(x["op"] == op for x in a["fp"])
        if c or tp or fp:
            out[op] = dict(tp=tp, fp=fp, copying_sites=c, recall=ratio(tp, c), precision=ratio(tp, tp + fp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/stridelint"))
    trees.add_tree_options(ap, "tree", "data", "out")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--no-mutations", action="store_true")
    ap.add_argument("--check-batching", type=int, default=0, metavar="N")
    args = ap.parse_args()
    paths = trees.resolve(args, dict(tree="tree", data="data", out="score"), env=())
    tree = os.path.realpath(args.tree)
    if not os.path.isdir(tree):
        sys.exit("no tree at %s" % tree)
    t0 = time.time()
    sites = load_jsonl(os.path.join(args.data, "sites.jsonl"))
    findings, lint_s = lint(args.bin, tree)
    a = score_unmodified(findings, sites)
    os.makedirs(args.out, exist_ok=True)

    def dump(name, rows):
        with open(os.path.join(args.out, name), "w") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")

    dump("sl002_tp.jsonl", a["tp"])
    dump("sl002_fp.jsonl", a["fp"])
    dump("sl002_outside_sizes.jsonl", a["outside"])
    dump("sl002_missed.jsonl", a["missed"])
    dump("sl002_unexecuted.jsonl", a["unexecuted"])
    dump("line_only.jsonl", a["line_only"])
    dump("sl001_unmodified_executed.jsonl", a["sl001_executed"])
    dump("sl009_tp.jsonl", a["sl009"]["tp"])
    dump("sl009_fp.jsonl", a["sl009"]["fp"])
    tp, fp = len(a["tp"]), len(a["fp"])
    summary = dict(
        binary=args.bin, findings=len(findings), lint_seconds=round(lint_s, 1),
        sl002=dict(tp=tp, fp=fp, copying_sites=a["copying"], missed=len(a["missed"]),
                   recall=ratio(tp, a["copying"]), precision=ratio(tp, tp + fp),
                   unexecuted=len(a["unexecuted"]), outside_sizes=len(a["outside"])),
        sl001_unmodified=dict(at_executed_sites=len(a["sl001_executed"]), at_unexecuted=a["sl001_unexecuted"],
                              at_sites_that_raised=len(a["sl001_raising"])),
        line_only=len(a["line_only"]),
        sl009=dict(tp=len(a["sl009"]["tp"]), fp=len(a["sl009"]["fp"]), unexecuted=a["sl009"]["unexecuted"],
                   no_op_sites=a["sl009"]["no_op_sites"],
                   precision=ratio(len(a["sl009"]["tp"]), len(a["sl009"]["tp"]) + len(a["sl009"]["fp"]))),
        per_package={},
    )
    for p in sorted({pkg(s["file"]) for s in sites}):
        ptp = sum(pkg(x["file"]) == p for x in a["tp"])
        pfp = sum(pkg(x["file"]) == p for x in a["fp"])
        pc = sum(1 for s in sites if pkg(s["file"]) == p and s["op"] in RESHAPE_OPS and s["copied"])
        summary["per_package"][p] = dict(sl002_tp=ptp, sl002_fp=pfp, copying_sites=pc, recall=ratio(ptp, pc),
                                         precision=ratio(ptp, ptp + pfp))
    mpath = os.path.join(args.data, "mutations.jsonl")
    if not args.no_mutations and os.path.exists(mpath):
        rows = load_jsonl(mpath)
        b = score_mutations(args.bin, tree, rows, findings, paths["score_work"],
                            args.check_batching, sites)
        dump("sl001_detected.jsonl", b["detected"])
        dump("sl001_missed.jsonl", b["missed"])
        dump("sl001_false_alarms.jsonl", b["alarms"])
        dump("sl001_unreached_hits.jsonl", b["unknown_hits"])
        dump("sl001_outside_sizes.jsonl", b["outside"])
        raised = len(b["detected"]) + len(b["missed"])
        summary["sl001_mutations"] = dict(
            mutations=len(rows), raised=raised, detected=len(b["detected"]), missed=len(b["missed"]),
            recall=ratio(len(b["detected"]), raised), false_alarms=len(b["alarms"]),
            false_alarms_at_mutated_views=sum(x["kind"] == "mutated view did not raise" for x in b["alarms"]),
            hits_at_unreached_views=len(b["unknown_hits"]), outside_sizes=len(b["outside"]), batches=b["batches"], lint_seconds=b["lint_seconds"],
            batching_check=dict(checked=len(b["batching_check"]),
                                same=sum(x["same"] for x in b["batching_check"])) if b["batching_check"] else None,
        )
        for p in summary["per_package"]:
            d = sum(pkg(x["file"]) == p for x in b["detected"])
            m = sum(pkg(x["file"]) == p for x in b["missed"])
            summary["per_package"][p].update(sl001_raised=d + m, sl001_detected=d, sl001_recall=ratio(d, d + m))
        summary["sl001_mutations"]["per_form"] = per_form(rows, b)
    summary["sl002_per_op"] = per_op(a, sites)
    summary["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return
    s2 = summary["sl002"]
    print("stridelint %s: %d findings on the unmodified tree (%.1f s)" % (args.bin, len(findings), lint_s))
    print("SL002: TP %d  FP %d  missed %d of %d copying sites  recall %s  precision %s  (+%d at unexecuted sites)" % (
        s2["tp"], s2["fp"], s2["missed"], s2["copying_sites"], s2["recall"], s2["precision"], s2["unexecuted"]))
    s9 = summary["sl009"]
    print("SL009: %d at executed contiguous sites that never copied, %d at ones that copied (precision %s); "
          "%d executed sites never copied; +%d at unexecuted sites" % (
              s9["tp"], s9["fp"], s9["precision"], s9["no_op_sites"], s9["unexecuted"]))
    print("SL002 at %d sites that never copied because a dim the finding merges had size 1 in the run, "
          "or SDPA ran another kernel than the one its note names "
          "(not counted either way; sl002_outside_sizes.jsonl)" % s2["outside_sizes"])
    print("SL001 on the unmodified tree: %d at executed sites, %d elsewhere" % (
        summary["sl001_unmodified"]["at_executed_sites"], summary["sl001_unmodified"]["at_unexecuted"]))
    print("findings matching an executed site on the line only: %d" % summary["line_only"])
    if "sl001_mutations" in summary:
        m = summary["sl001_mutations"]
        print("SL001 mutations: %d raised of %d, detected %d, recall %s, false alarms %d (%d at mutated views); "
              "%d batches" % (m["raised"], m["mutations"], m["detected"], m["recall"], m["false_alarms"],
                              m["false_alarms_at_mutated_views"], m["batches"]))
        if m["outside_sizes"]:
            print("SL001 at %d mutated views that did not raise outside the condition the finding states (a dim "
                  "it needs >= 2 was 1 in the run, SDPA ran another kernel than the one it names, or a "
                  "permuted parameter was channels-last; not "
                  "counted either way; sl001_outside_sizes.jsonl)" % m["outside_sizes"])
        if m["batching_check"]:
            print("batching check: %d of %d edits give the same findings alone as in their batch" % (
                m["batching_check"]["same"], m["batching_check"]["checked"]))
    for f, d in summary.get("sl001_mutations", {}).get("per_form", {}).items():
        print("  form %s: %d candidates, %d ran, %d raised, detected %d (recall %s), false alarms at the view %d" % (
            f, d["mutations"], d["executed"], d["raised"], d["detected"], d["recall"], d["false_alarms"]))
    if "sl002_per_op" in summary:
        print("SL002 per op: " + ", ".join("%s TP %d FP %d of %d copying" % (op, d["tp"], d["fp"], d["copying_sites"])
                                           for op, d in summary["sl002_per_op"].items()))
    print("per package:")
    for p, d in summary["per_package"].items():
        print("  %-13s SL002 TP %4d FP %4d of %4d copying (recall %s, precision %s)%s" % (
            p, d["sl002_tp"], d["sl002_fp"], d["copying_sites"], d["recall"], d["precision"],
            "  SL001 %d/%d" % (d["sl001_detected"], d["sl001_raised"]) if "sl001_raised" in d else ""))
    print("lists in %s (%.0f s)" % (args.out, summary["seconds"]))


if __name__ == "__main__":
    main()
