"""Prove the `# expect:` markers of fixtures/python/*.py with real torch.

Every fixture is ordinary model code whose lines that must produce a finding end with
`# expect: SL001` (or several codes). The Rust test `tests/it/fixtures.rs` checks that the
linter reports exactly those; this script checks that the markers are *true*: it runs
each fixture's `_oracle_run()` under real torch and watches every layout call the fixture
makes.

How a call is judged: by the `judge: Judge::Torch(...)` of each rule in the registry,
src/lints/mod.rs (`--judges` prints what this script read there). A judge is a list of
(kind, what) pairs of one of the JUDGE_KINDS:
  * ("raises", needle): the call raises an error whose message contains `needle`
    (SL001: "view size is not compatible", SL003, SL004, ...);
  * ("raises-in-backward", needle): as "raises", for a call made in a function named
    `backward` (autograd runs it with the gradient the graph made; SL011), which it judges
    before the "raises" rules;
  * ("copies", ops): a call of one of these ops (space-separated) returns a tensor that
    does not share storage with its input: it copied (SL002);
  * ("discarded", ops): a call of one of these ops whose result the calling statement
    throws away (the next instruction pops it), with the receiver's layout unchanged
    afterwards: the statement did nothing (SL007);
  * ("writes", ops): an in-place write by one of these methods (`copy_`, `add_`, …,
    `__setitem__` for `t[...] = v`, `__iadd__` for `t += v`) into a tensor whose memory is
    a copy that a copying call (the SL002 ops or `.contiguous()`) made, which leaves that
    call's input unchanged, and whose copy is gone once the function that wrote it has
    returned: the write was lost (SL010);
  * ("returns-input", ops): a call of one of these ops that returned its input itself
    (`x.contiguous()` on a tensor that already is contiguous: the call did nothing, SL009).
    One way only: a marker must be confirmed, but a call torch finds to be a no-op needs
    no marker (the rule reports only the calls whose layout the code itself fixes, never
    one that rests on a parameter's layout);
  * ("copy-for-sdpa", ops): a call of one of these ops (`.contiguous()`) that copied a
    tensor whose last dim has stride 1, and whose copy `F.scaled_dot_product_attention` then
    read as query, key or value, giving the same output as with the tensor before the copy
    (SL009; one way, as "returns-input": a copy also read elsewhere is not reported);
  * ("attention", ops): a call of one of these ops (`matmul`, `@`, `bmm`) whose first
    operand autograd shows to be attention weights: dropout, copies or dtype conversions
    after a softmax over the last dim, whose input is a product (`bmm`, `mm`, `baddbmm`) seen
    through scales by a number, additive masks or biases, `masked_fill`, copies and
    conversions (SL008; the
    fixture runs with gradients on, so every step leaves its node). One way, as
    "returns-input": the rule also stays silent where the weights are used besides the
    product or the function calls the fused kernel, which the graph does not show;
  * anything else that succeeds -> ok.

The unit of judgement is a *call site* (source line plus bytecode offset, so the two
calls in `x.transpose(1, 2).view(...)` are told apart). The linter reports a finding
only when it is certain on every path and for every size, so a site yields a code only
when *every* one of its executions produced that code; a site that sometimes succeeds
(another branch, another size, a backend-dependent layout) is "mixed" and must carry no
marker. Each `_oracle_run()` therefore runs its code with several size configurations
and, where it matters, along every branch.

Sizes: the linter assumes every symbolic size is at least 2, and the fixtures read that as
covering derived dimensions too (`C // n_head`, `W // window_size`): with a head size or a
window-column count of 1 several classic bugs disappear (the dims they merge collapse).
The `_oracle_run()` configurations therefore keep every dimension, derived ones included,
at 2 or more.

A line carrying a suppression comment (`# noqa`, `# noqa: SL001`,
`# stridelint: ignore[SL001]`) must fail at run time, and its markers must list exactly
the codes torch confirms that the comment does *not* cover: a plain `# noqa` line carries
no marker, while `# expect: SL001  # noqa: SL002` checks that suppressing another code
leaves SL001 reported.

A finding the linter reports for one named path of a function (a branch whose test it can
name, "on the path where `channels_first` is true") is marked `# expect-on-path: SL001`:
torch must produce that code in some executions of the site and not in all of them (a site
that always fails is marked `# expect:`).

Every layout call written in a fixture (found with `tokenize`, so comments and strings do
not count) must actually run; a call the oracle never reached cannot be confirmed and is
reported as a disagreement.

Usage: .venv-oracle/bin/python scripts/oracle/check_fixtures.py [fixture.py ...]
       python3 scripts/oracle/check_fixtures.py --judges   (no torch needed)
Exit status 0 when there are no disagreements, 1 otherwise.
"""

from __future__ import annotations

import collections
import dataclasses
import dis
import functools
import importlib.util
import io
import json
import re
import sys
import tokenize
import weakref
from pathlib import Path

sys.dont_write_bytecode = True  # keep fixtures/python free of __pycache__

REPO = Path(__file__).resolve().parents[2]
FIXTURE_DIR = REPO / "fixtures" / "python"
REGISTRY = REPO / "src" / "lints" / "mod.rs"

# The judge kinds this script implements (tests/it/rules.rs reads this line).
JUDGE_KINDS = ("raises", "raises-in-backward", "copies", "discarded", "writes", "returns-input", "copy-for-sdpa", "attention")  # noqa: E501


def load_judges() -> dict[str, list[tuple[str, str]]]:
    """Rule code -> its torch judge, read from the registry's `judge: Judge::Torch(&[...])`."""
    text = REGISTRY.read_text()
    judges: dict[str, list[tuple[str, str]]] = {}
    for entry in re.finditer(r'code:\s*"(SL\d{3})"(.*?)(?=code:\s*"SL\d{3}"|\Z)', text, re.S):
        code, body = entry.groups()
        judge = re.search(r"judge:\s*Judge::Torch\(\s*&\[(.*?)\]\s*\)", body, re.S)
        if judge:
            judges[code] = re.findall(r'\(\s*"([\w-]+)",\s*"([^"]*)",?\s*\)', judge.group(1))
    unknown = sorted({kind for pairs in judges.values() for kind, _ in pairs} - set(JUDGE_KINDS))
    if not judges or unknown:
        raise SystemExit(f"{REGISTRY}: no torch judges read, or unknown judge kinds {unknown}")
    return judges


if __name__ == "__main__" and sys.argv[1:] == ["--judges"]:
    print(json.dumps(load_judges()))
    sys.exit(0)

import einops  # noqa: E402  (after dont_write_bytecode on purpose)
import torch  # noqa: E402

JUDGES = load_judges()
ERROR_CODES = tuple(
    (needle, code) for code, pairs in JUDGES.items() for kind, needle in pairs if kind == "raises"
)
BACKWARD_ERROR_CODES = tuple(
    (needle, code) for code, pairs in JUDGES.items() for kind, needle in pairs if kind == "raises-in-backward"
)
COPY_CODES = {op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "copies" for op in ops.split()}
DISCARD_CODES = {op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "discarded" for op in ops.split()}
WRITE_CODES = {op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "writes" for op in ops.split()}
RETURNS_INPUT_CODES = {
    op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "returns-input" for op in ops.split()
}
COPY_FOR_SDPA_CODES = {
    op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "copy-for-sdpa" for op in ops.split()
}
ATTENTION_CODES = {
    op: code for code, pairs in JUDGES.items() for kind, ops in pairs if kind == "attention" for op in ops.split()
}
# Rules whose judge confirms markers but does not ask for one at every call it matches.
ONE_WAY_CODES = set(RETURNS_INPUT_CODES.values()) | set(COPY_FOR_SDPA_CODES.values()) | set(ATTENTION_CODES.values())

# Tensor methods (and same-named torch functions) whose calls are recorded: the ops the
# judges name, the view family and the permutations (the calls SL001/SL003/SL004 raise in).
RESHAPE_FAMILY = tuple(op for op in COPY_CODES if op != "rearrange")
VIEW_FAMILY = ("view", "view_as")
DIM_FAMILY = ("transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis")
TRACKED_METHODS = tuple(
    dict.fromkeys(
        VIEW_FAMILY + RESHAPE_FAMILY + DIM_FAMILY + tuple(DISCARD_CODES) + tuple(RETURNS_INPUT_CODES)
        + tuple(ATTENTION_CODES) + ("contiguous",)
    )
)
TRACKED_TORCH_FUNCTIONS = ("reshape", "flatten", "ravel") + DIM_FAMILY + tuple(
    op for op in ATTENTION_CODES if not op.startswith("__")
)
OK = "ok"
EXPECT_RE = re.compile(r"#\s*expect:\s*([^#]*)")
EXPECT_ON_PATH_RE = re.compile(r"#\s*expect-on-path:\s*([^#]*)")
CODE_RE = re.compile(r"^SL\d{3}$")
NOQA_RE = re.compile(r"#\s*noqa(?P<colon>\s*:\s*(?P<codes>[A-Za-z0-9,\s]*))?", re.IGNORECASE)
IGNORE_RE = re.compile(r"stridelint:\s*ignore\[(?P<codes>[^\]]*)\]", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class CallSite:
    line: int
    offset: int  # f_lasti: distinguishes several calls on one line


@dataclasses.dataclass
class SiteRecord:
    op: str
    outcomes: list  # one outcome (OK, a code, or "error: ...") per execution


class Recorder:
    """Outcomes of tracked calls, per fixture file and call site."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.sites: dict[str, dict[CallSite, SiteRecord]] = collections.defaultdict(dict)

    def add(self, path: str, site: CallSite, op: str, outcome: str) -> None:
        record = self.sites[path].setdefault(site, SiteRecord(op, []))
        record.outcomes.append(outcome)


RECORDER = Recorder()


def classify_error(exc: BaseException, caller=None) -> str:
    message = str(exc)
    in_backward = caller is not None and caller.f_code.co_name == "backward"
    for needle, code in (BACKWARD_ERROR_CODES if in_backward else ()) + ERROR_CODES:
        if needle in message:
            return code
    first_line = message.strip().splitlines()[0] if message.strip() else ""
    return f"error: {type(exc).__name__}: {first_line[:80]}"


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def result_is_discarded(frame) -> bool:
    """Does the calling statement throw the call's result away (`x.contiguous()` alone)?
    The instruction after the call pops it."""
    after = [i for i in dis.get_instructions(frame.f_code) if i.offset > frame.f_lasti and i.opname != "CACHE"]
    return bool(after) and after[0].opname == "POP_TOP"


def stacked_source(arg):
    """The tensor a copy is judged against: the argument, or a list's first tensor."""
    if isinstance(arg, list):
        return next((t for t in arg if isinstance(t, torch.Tensor)), None)
    return arg


def classify_result(op: str, args: tuple, result, discarded: bool = False, before=None) -> str:
    """Judge a call that succeeded: a copying op whose result does not share its input's
    storage copied; a discarded call that left its receiver as it was did nothing."""
    tensors = args and isinstance(args[0], torch.Tensor) and isinstance(result, torch.Tensor)
    if op in COPY_CODES and isinstance(result, torch.Tensor):
        # einops stacks a list input first: compared with its first tensor, as the
        # real-code recorder does.
        source = stacked_source(args[0]) if args else None
        if isinstance(source, torch.Tensor):
            return OK if shares_storage(source, result) else COPY_CODES[op]
    if op in DISCARD_CODES and tensors and discarded:
        after = (tuple(args[0].shape), args[0].stride(), args[0].storage_offset())
        return DISCARD_CODES[op] if after == before else OK
    if op in RETURNS_INPUT_CODES and tensors:
        return RETURNS_INPUT_CODES[op] if result is args[0] else OK
    if op in ATTENTION_CODES and tensors:
        return ATTENTION_CODES[op] if is_attention_weights(args[0]) else OK
    return OK


# --- SL009: a copy only SDPA reads ----------------------------------------------------

# id(copy) -> (the copy, held weakly; the tensor copied; the site's record; its outcome index).
SDPA_COPIES: dict = {}


def note_copy_for_sdpa(op: str, args: tuple, result, path: str, site: CallSite) -> None:
    """Remember a copy of a tensor whose last dim has stride 1, to judge at SDPA."""
    source = args[0] if args else None
    if not (isinstance(source, torch.Tensor) and isinstance(result, torch.Tensor)):
        return
    if result is source or source.dim() == 0 or source.stride(-1) != 1:
        return
    record = RECORDER.sites[path][site]
    SDPA_COPIES[id(result)] = (weakref.ref(result), source, record, len(record.outcomes) - 1, COPY_FOR_SDPA_CODES[op])


def judging_sdpa(original):
    """Wrap SDPA: for each of q, k, v that is a remembered copy, run SDPA again on the tensor
    before the copy; the same output makes the copy's outcome the rule's code."""

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        out = original(*args, **kwargs)
        for i, arg in enumerate(args[:3]):
            entry = SDPA_COPIES.get(id(arg))
            if entry is None or entry[0]() is not arg:
                continue
            _, source, record, index, code = entry
            replaced = list(args)
            replaced[i] = source
            if torch.allclose(original(*replaced, **kwargs), out, atol=1e-6):
                record.outcomes[index] = code
        return out

    return wrapper


# --- SL008: attention weights, as autograd recorded them -------------------------------


# The graph walk is shared with the real-run check (scripts/realcode/check_attention.py).
from attention_graph import is_attention_weights  # noqa: E402


def recording(op: str, original):
    """Wrap `original` so that calls made *directly from a fixture file* are recorded.

    Calls from anywhere else (torch internals, einops calling `reshape` inside
    `rearrange`) pass through unrecorded, so nested calls are never counted twice."""

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        caller = sys._getframe(1)
        path = caller.f_code.co_filename
        if path not in RECORDER.files:
            return original(*args, **kwargs)
        site = CallSite(caller.f_lineno, caller.f_lasti)
        before = None
        if args and isinstance(args[0], torch.Tensor):
            before = (tuple(args[0].shape), args[0].stride(), args[0].storage_offset())
        try:
            result = original(*args, **kwargs)
        except Exception as exc:
            RECORDER.add(path, site, op, classify_error(exc, caller))
            raise
        discarded = op in DISCARD_CODES and result_is_discarded(caller)
        RECORDER.add(path, site, op, classify_result(op, args, result, discarded, before))
        if op in COPY_FOR_SDPA_CODES:
            note_copy_for_sdpa(op, args, result, path, site)
        if op in COPY_METHODS + ("rearrange",):
            note_copy(args, result)
        return result

    return wrapper


# In-place writes whose target is judged for SL010, and the copies they may land in.
WRITE_METHODS = tuple(WRITE_CODES)
COPY_METHODS = RESHAPE_FAMILY + ("contiguous",)


@dataclasses.dataclass
class Copy:
    result: "weakref.ref"  # the copy (dead once nothing holds it)
    storage: int
    original: torch.Tensor  # the input it was made from


# Storage pointer -> the copy made there by a copying call from a fixture file.
COPIES: dict[int, Copy] = {}


def note_copy(args: tuple, result) -> None:
    if args and isinstance(args[0], torch.Tensor) and isinstance(result, torch.Tensor):
        if not shares_storage(args[0], result):
            ptr = result.untyped_storage().data_ptr()
            COPIES[ptr] = Copy(weakref.ref(result), ptr, args[0])


def copy_of(target: torch.Tensor) -> Copy | None:
    """The live copy whose memory `target` is (the copy itself or a view of it)."""
    copy = COPIES.get(target.untyped_storage().data_ptr())
    if copy is None:
        return None
    if copy.result() is None and target._base is None:
        return None  # the pointer was reused by a new tensor
    return copy


@dataclasses.dataclass
class PendingWrite:
    """A write into a copy that left the original unchanged: it is SL010 if the copy is
    gone once the writing function has returned."""
    frame: int  # id() of the writing frame (the frame itself would keep its locals alive)
    copy: "weakref.ref"
    path: str
    site: CallSite
    op: str
    returned: bool = False


PENDING: list[PendingWrite] = []


def settle_pending(final: bool = False) -> None:
    for write in [w for w in PENDING if w.returned or final]:
        PENDING.remove(write)
        RECORDER.add(write.path, write.site, write.op, WRITE_CODES[write.op] if write.copy() is None else OK)


def profiler(frame, event, arg) -> None:
    """Marks the pending writes of a returning frame; settles them at the next event,
    when the frame's locals are gone."""
    if not PENDING:
        return
    settle_pending()
    if event == "return":
        for write in PENDING:
            if write.frame == id(frame):
                write.returned = True


def writing(op: str, original):
    """Wrap an in-place method so that writes made directly from a fixture file are judged."""

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        caller = sys._getframe(1)
        path = caller.f_code.co_filename
        target = args[0] if args else None
        if path not in RECORDER.files or not isinstance(target, torch.Tensor):
            del caller
            return original(*args, **kwargs)
        site = CallSite(caller.f_lineno, caller.f_lasti)
        frame = id(caller)
        del caller
        copy = copy_of(target)
        before = copy.original.detach().clone() if copy is not None else None
        try:
            result = original(*args, **kwargs)
        except Exception as exc:
            RECORDER.add(path, site, op, classify_error(exc))
            raise
        if copy is not None and torch.equal(before, copy.original) and copy.result() is not None:
            PENDING.append(PendingWrite(frame, copy.result, path, site, op))
        else:
            RECORDER.add(path, site, op, OK)
        return result

    return wrapper


def recording_layer(op: str, forward):
    """Wrap an einops layer's `forward` (`Rearrange`, `Reduce`): the call is recorded at the
    closest fixture frame up the stack — `self.to_patches(x)`, or the call of the
    `nn.Sequential` that holds the layer — as `op`, judged like the function."""

    @functools.wraps(forward)
    def wrapper(self, input, *args, **kwargs):
        caller = sys._getframe(1)
        while caller is not None and caller.f_code.co_filename not in RECORDER.files:
            caller = caller.f_back
        result = forward(self, input, *args, **kwargs)
        if caller is not None:
            site = CallSite(caller.f_lineno, caller.f_lasti)
            RECORDER.add(caller.f_code.co_filename, site, op, classify_result(op, (input,), result))
        return result

    return wrapper


def install_patches() -> None:
    """Patch before any fixture is imported: `from einops import rearrange` binds early."""
    for name in TRACKED_METHODS:
        setattr(torch.Tensor, name, recording(name, getattr(torch.Tensor, name)))
    for name in TRACKED_TORCH_FUNCTIONS:
        setattr(torch, name, recording(name, getattr(torch, name)))
    einops.rearrange = recording("rearrange", einops.rearrange)
    import einops.layers.torch as einops_layers
    einops_layers.Rearrange.forward = recording_layer("rearrange", einops_layers.Rearrange.forward)
    torch.nn.functional.scaled_dot_product_attention = judging_sdpa(torch.nn.functional.scaled_dot_product_attention)
    for name in WRITE_METHODS:
        setattr(torch.Tensor, name, writing(name, getattr(torch.Tensor, name)))


# --- reading the fixture text -------------------------------------------------------------


def expected_codes(line: str, pattern: re.Pattern = EXPECT_RE) -> set[str]:
    match = pattern.search(line)
    if not match:
        return set()
    codes = {c.strip() for c in match.group(1).split(",") if c.strip()}
    bad = [c for c in codes if not CODE_RE.match(c)]
    if bad:
        raise ValueError(f"malformed expect marker {bad!r} in: {line.strip()}")
    return codes


def suppressed_codes(line: str) -> set[str] | None:
    """Codes a suppression comment on the line covers; {"*"} for a blanket `# noqa`;
    None when there is no suppression comment."""
    match = IGNORE_RE.search(line)
    if match:
        codes = {c.strip().upper() for c in match.group("codes").split(",") if c.strip()}
        return codes or {"*"}
    match = NOQA_RE.search(line)
    if not match:
        return None
    if match.group("colon") is None:
        return {"*"}
    codes = {c.upper() for c in re.split(r"[,\s]+", match.group("codes")) if c}
    return codes or {"*"}


def tracked_call_counts(source: str) -> dict[int, int]:
    """Line -> number of tracked layout calls written on it (`.view(`, `rearrange(` …)."""
    counts: dict[int, int] = collections.Counter()
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    for prev, tok, nxt in zip(tokens, tokens[1:], tokens[2:]):
        is_call = tok.type == tokenize.NAME and nxt.string == "("
        if not is_call:
            continue
        if prev.string == "." and tok.string in TRACKED_METHODS:
            counts[tok.start[0]] += 1
        elif tok.string == "rearrange" and prev.string not in (".", "def"):
            counts[tok.start[0]] += 1
    return counts


# --- judging one fixture ------------------------------------------------------------------


@dataclasses.dataclass
class LineVerdict:
    line: int
    text: str
    expected: set
    oracle: set
    suppression: set | None
    outcomes: str
    mixed: bool  # some call on the line both failed and succeeded: not certain
    problems: list


def summarize(records: list[SiteRecord]) -> str:
    parts = []
    for rec in records:
        tally = collections.Counter(rec.outcomes)
        parts.append(rec.op + "[" + ",".join(f"{k}×{v}" for k, v in sorted(tally.items())) + "]")
    return " ".join(parts)


def path_codes(rec: SiteRecord) -> set[str]:
    """Codes some, but not all, executions of the site produced."""
    kinds = set(rec.outcomes)
    if len(kinds) < 2:
        return set()
    return {k for k in kinds if k.startswith("SL")}


def certain_code(rec: SiteRecord) -> str | None:
    """The code every execution of the site produced, if there is one."""
    kinds = set(rec.outcomes)
    if len(kinds) == 1:
        (only,) = kinds
        if only.startswith("SL"):
            return only
    return None


def judge(path: Path, run_error: str | None) -> list[LineVerdict]:
    source = path.read_text()
    lines = source.splitlines()
    sites = RECORDER.sites.get(str(path), {})
    by_line: dict[int, list[SiteRecord]] = collections.defaultdict(list)
    for site, rec in sorted(sites.items(), key=lambda kv: (kv[0].line, kv[0].offset)):
        by_line[site.line].append(rec)
    written = tracked_call_counts(source)

    verdicts = []
    for number, text in enumerate(lines, start=1):
        # Markers of rules torch has nothing to judge on (SL900's infos) are not checked here.
        expected = expected_codes(text) & set(JUDGES)
        expected_on_path = expected_codes(text, EXPECT_ON_PATH_RE)
        suppression = suppressed_codes(text)
        records = by_line.get(number, [])
        oracle = {c for c in (certain_code(r) for r in records) if c}
        on_some_paths = set().union(*(path_codes(r) for r in records)) if records else set()
        problems = []
        for code in sorted(expected_on_path):
            if code in oracle:
                problems.append(f"{code} always happens here: mark it `# expect:`, not `# expect-on-path:`")
            elif code not in on_some_paths:
                problems.append(f"path marker {code} not confirmed: no execution produced it")
        for rec in records:
            errors = sorted({o for o in rec.outcomes if o.startswith("error:")})
            if errors:
                problems.append(f"unexpected run-time error in {rec.op}: {errors[0]}")
        if written.get(number, 0) > len(records):
            problems.append(f"{written[number] - len(records)} layout call(s) never ran in _oracle_run")
        reported = oracle
        if suppression is not None:
            if not oracle:
                problems.append("suppressed line does not fail at run time")
            reported = set() if "*" in suppression else oracle - suppression
        missing = expected - reported
        extra = reported - expected - ONE_WAY_CODES
        if missing:
            problems.append(f"marker {sorted(missing)} not confirmed by torch")
        if extra:
            problems.append(f"torch always fails with {sorted(extra)} but the line has no marker")
        mixed = any(len(set(r.outcomes)) > 1 for r in records)
        if records or expected or expected_on_path or suppression is not None or problems:
            shown = expected | {f"{c}@path" for c in expected_on_path}
            verdicts.append(
                LineVerdict(number, text.strip(), shown, oracle, suppression, summarize(records), mixed, problems)
            )
    if run_error:
        verdicts.append(LineVerdict(0, "<_oracle_run>", set(), set(), None, "", False, [run_error]))
    return verdicts


def load_and_run(path: Path) -> str | None:
    """Import the fixture and call its `_oracle_run()`; returns an error text or None."""
    RECORDER.files.add(str(path))
    spec = importlib.util.spec_from_file_location(f"fixture_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken fixture is reported, the others still run
        return f"import failed: {type(exc).__name__}: {exc}"
    run = getattr(module, "_oracle_run", None)
    if run is None:
        return "fixture has no _oracle_run()"
    sys.setprofile(profiler)
    try:
        run()
    except Exception as exc:
        return f"_oracle_run() raised {type(exc).__name__}: {exc} (wrap failing calls)"
    finally:
        sys.setprofile(None)
        settle_pending(final=True)
        COPIES.clear()
    return None


def print_table(path: Path, verdicts: list[LineVerdict]) -> None:
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    print(f"\n== {shown}")
    print(f"{'line':>4}  {'expect':<12} {'torch':<12} {'status':<9} calls")
    for v in verdicts:
        if v.problems:
            status = "DISAGREE"
        elif v.suppression is not None:
            status = "noqa"
        else:
            status = "mixed" if v.mixed else "ok"
        expect = ",".join(sorted(v.expected)) or "-"
        oracle = ",".join(sorted(v.oracle)) or "-"
        print(f"{v.line:>4}  {expect:<12} {oracle:<12} {status:<9} {v.outcomes}")
        for problem in v.problems:
            print(f"{'':>4}  !! {problem}    | {v.text}")


def main(argv: list[str]) -> int:
    torch.manual_seed(0)
    install_patches()
    paths = [Path(a).resolve() for a in argv] or sorted(FIXTURE_DIR.glob("*.py"))
    total_problems = 0
    total_markers = 0
    total_sites = 0
    for path in paths:
        run_error = load_and_run(path)
        verdicts = judge(path, run_error)
        print_table(path, verdicts)
        total_problems += sum(len(v.problems) for v in verdicts)
        total_markers += sum(len(v.expected) for v in verdicts)
        total_sites += len(RECORDER.sites.get(str(path), {}))
    print(f"\n{len(paths)} fixtures, {total_sites} call sites observed, {total_markers} expected findings, "
          f"{total_problems} disagreement(s)  [torch {torch.__version__}, einops {einops.__version__}]")
    return 1 if total_problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
