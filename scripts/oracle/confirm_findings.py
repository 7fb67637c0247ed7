"""Confirm stridelint's SL001 / SL002 findings with real torch.

stridelint states its findings symbolically: "`reshape` to (B, S, H·D) copies ... of
(B, S, H, D) strides (H·S·D, D, S·D, 1)" must hold for *every* size that satisfies the
finding's assumptions. This script takes a sample of findings from the JSON report
(`stridelint check TREE --output-format json`), turns each finding's `subject` into concrete
numbers, rebuilds that exact layout in torch and runs the op:

* SL001 (`view` must fail)  ⇒ torch must raise "view size is not compatible ...";
* SL002 (hidden copy)        ⇒ the result must live in a different storage than the input.

Each finding is tried at two size assignments that satisfy what the finding assumes (its
notes, plus stridelint's defaults: named sizes ≥ 2, exact quotients ≥ 2): a small one
(divisors 2, every other size raised only as far as a broken assumption requires) and a
random larger one. One failure at either assignment refutes the finding.

Usage (from the repository root):

    .venv-oracle/bin/python scripts/oracle/confirm_findings.py FINDINGS.json \
        [--sample 20] [--seed 0] [--all] [--root DIR] [--verbose] [--cited-only]

Exit status: 0 when nothing is refuted, 1 on any refutation, 2 on bad input.

Why these choices:
* The input is `torch.empty(n, dtype=uint8).as_strided(shape, strides)`: the layout is
  exactly the subject's, and view/reshape decisions never depend on the dtype, so the
  smallest one keeps 8-D patchify layouts cheap.
* "A copy happened" is storage identity (`layouts.shares_storage`), the same convention as
  the oracle tables (README.md, "Copy or view").
* `flatten` findings carry no target shape (the dims to merge are arguments, not a shape),
  so start/end dims are read back from the call's source text at the finding's span with
  Python's own parser; a call whose dims are not integer literals is skipped with a reason.
  `einops.rearrange` is handled the same way (pattern and axis lengths from the source).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import random
import sys
from dataclasses import dataclass
from fractions import Fraction

import torch

from layouts import shares_storage, storage_extent

# The largest storage (in elements, one byte each) a single check may allocate.
MAX_STORAGE = 1 << 27
VIEW_INCOMPATIBLE = "view size is not compatible"
CHECKED_CODES = ("SL001", "SL002")


# --- symbolic sizes as stridelint prints them ------------------------------------------
#
# The grammar mirrors `Dim`'s Display (src/layout/dim.rs):
#     sum     := ['-'] modexpr ((' + ' | ' - ') modexpr)*
#     modexpr := term ((' // ' | ' % ') term)*          (opaque floor division / modulo)
#     term    := product ['/' product]                  ('/' is an exact quotient)
#     product := power ('·' power)*
#     power   := primary [superscript digits]           (T², patch_size³)
#     primary := integer | name | max(sum, sum) | min(sum, sum) | '(' sum ')'
# A name is a size variable as stridelint spells it: `head_dim`, `self.config.patch_size`,
# `latents[3]`, `x.shape[2]′` (primes mark a fresh size of the same name), or opaque source
# text such as `len(xs)`. Any parenthesised text that is not an expression is one name too.

SUPERSCRIPT_DIGITS = {c: str(i) for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}
SUPERSCRIPTS = set(SUPERSCRIPT_DIGITS) | {"⁻"}
NAME_STOPS = set(" ·/%+-(),⟨") | SUPERSCRIPTS


class SizeSyntaxError(ValueError):
    pass


class Unevaluable(ValueError):
    """A size stridelint could only summarise (a digest `⟨…⟩`): no value can be given."""


def tokenize(text: str) -> list:
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if c == " ":
            i += 1
        elif c == "/" and text.startswith("//", i):
            tokens.append(("op", "//"))
            i += 2
        elif c in "·/%+-(),":
            tokens.append(("op", c))
            i += 1
        elif c in SUPERSCRIPTS:
            j = i
            while j < len(text) and text[j] in SUPERSCRIPTS:
                j += 1
            digits = "".join("-" if ch == "⁻" else SUPERSCRIPT_DIGITS[ch] for ch in text[i:j])
            tokens.append(("pow", int(digits)))
            i = j
        elif c.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            tokens.append(("num", int(text[i:j])))
            i = j
        elif c == "⟨":
            j = text.find("⟩", i)
            tokens.append(("digest", text[i : j + 1 if j >= 0 else len(text)]))
            i = j + 1 if j >= 0 else len(text)
        else:
            i = _scan_name(text, i, tokens)
    return tokens


def _scan_name(text: str, i: int, tokens: list) -> int:
    """A name runs to the next operator; `[...]` and a directly following `(...)` (source
    text such as `len(xs)`) belong to it, except for `max(`/`min(`, which are evaluated."""
    j = i
    while j < len(text) and text[j] not in NAME_STOPS:
        if text[j] == "[":
            j = _matching(text, j, "[", "]")
        j += 1
    name = text[i:j]
    if j < len(text) and text[j] == "(":
        if name in ("max", "min"):
            tokens.append(("func", name))
            return j
        j = _matching(text, j, "(", ")") + 1
        name = text[i:j]
    if not name:
        raise SizeSyntaxError(f"unexpected {text[i]!r} in {text!r}")
    tokens.append(("name", name))
    return j


def _matching(text: str, open_at: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == open_ch:
            depth += 1
        elif text[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    raise SizeSyntaxError(f"unbalanced {open_ch!r} in {text!r}")


class SizeParser:
    """Parses one size into a tree of tuples: ("num", n), ("sym", name), (op, lhs, rhs)
    with op in + - * / // % max min, ("pow", base, k) and ("neg", x)."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def parse(self):
        tree = self.sum()
        if self.pos != len(self.tokens):
            raise SizeSyntaxError(f"trailing {self.tokens[self.pos]} in {self.text!r}")
        return tree

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            raise SizeSyntaxError(f"expected {value or kind} at {tok} in {self.text!r}")
        self.pos += 1
        return tok

    def sum(self):
        negate = self.peek() == ("op", "-")
        if negate:
            self.pos += 1
        tree = self.modexpr()
        if negate:
            tree = ("neg", tree)
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            tree = (op, tree, self.modexpr())
        return tree

    def modexpr(self):
        tree = self.term()
        while self.peek() in (("op", "//"), ("op", "%")):
            op = self.take()[1]
            tree = (op, tree, self.term())
        return tree

    def term(self):
        """`a·b/c` or `a/(b·c)`. Everything after the `/` is the divisor: `Dim` itself prints
        a product divisor in parentheses, but the notes' assumptions print the quotient
        `padded_feature_length/(2·config.n_window)` as `padded_feature_length/2·config.n_window`,
        and both readings agree on every form `Dim` prints."""
        tree = self.product()
        if self.peek() == ("op", "/"):
            self.pos += 1
            tree = ("/", tree, self.product())
        return tree

    def product(self):
        tree = self.power()
        while self.peek() == ("op", "·"):
            self.pos += 1
            tree = ("*", tree, self.power())
        return tree

    def power(self):
        base = self.primary()
        if self.peek()[0] == "pow":
            return ("pow", base, self.take()[1])
        return base

    def primary(self):
        kind, value = self.peek()
        if kind == "num":
            self.pos += 1
            return ("num", value)
        if kind == "name":
            self.pos += 1
            return ("sym", value)
        if kind == "digest":
            raise Unevaluable(f"stridelint summarised this size as {value}; it has no value")
        if kind == "func":
            self.pos += 1
            self.take("op", "(")
            lhs = self.sum()
            self.take("op", ",")
            rhs = self.sum()
            self.take("op", ")")
            return (value, lhs, rhs)
        if (kind, value) == ("op", "("):
            start = self.pos
            try:
                self.pos += 1
                inner = self.sum()
                self.take("op", ")")
                return inner
            except SizeSyntaxError:
                # Opaque source text in parentheses: one size of its own.
                self.pos = start
                return ("sym", self._raw_parenthesised())
        raise SizeSyntaxError(f"unexpected {value!r} in {self.text!r}")

    def _raw_parenthesised(self) -> str:
        depth, parts = 0, []
        while True:
            kind, value = self.take()
            parts.append(str(value))
            if (kind, value) == ("op", "("):
                depth += 1
            elif (kind, value) == ("op", ")"):
                depth -= 1
                if depth == 0:
                    return "".join(parts)


def parse_size(text: str):
    return SizeParser(text).parse()


def symbols(tree) -> set:
    if tree[0] == "sym":
        return {tree[1]}
    if tree[0] == "num":
        return set()
    return set().union(*(symbols(t) for t in tree[1:] if isinstance(t, tuple)))


def divisions(tree) -> list:
    """Every (dividend, divisor) pair of `/`, `//` and `%` in the tree."""
    if tree[0] in ("sym", "num"):
        return []
    found = [(tree[1], tree[2])] if tree[0] in ("/", "//", "%") else []
    for t in tree[1:]:
        if isinstance(t, tuple):
            found += divisions(t)
    return found


class NotExact(ValueError):
    pass


def evaluate(tree, env: dict) -> Fraction:
    op = tree[0]
    if op == "num":
        return Fraction(tree[1])
    if op == "sym":
        return Fraction(env[tree[1]])
    if op == "neg":
        return -evaluate(tree[1], env)
    if op == "pow":
        return evaluate(tree[1], env) ** tree[2]
    lhs, rhs = evaluate(tree[1], env), evaluate(tree[2], env)
    if op == "+":
        return lhs + rhs
    if op == "-":
        return lhs - rhs
    if op == "*":
        return lhs * rhs
    if op == "max":
        return max(lhs, rhs)
    if op == "min":
        return min(lhs, rhs)
    if rhs == 0:
        raise NotExact("division by zero")
    if op == "/":
        quotient = lhs / rhs
        if quotient.denominator != 1:
            raise NotExact(f"{lhs}/{rhs} is not exact")
        return quotient
    if lhs.denominator != 1 or rhs.denominator != 1:
        raise NotExact("floor division of a fraction")
    return Fraction(int(lhs) // int(rhs) if op == "//" else int(lhs) % int(rhs))


# --- size assignments ------------------------------------------------------------------
#
# What a finding claims is stated in its notes: "holds for all sizes with batch ≥ 2,
# head_dim ≥ 2, n_head divides C". stridelint's design adds two defaults that the notes
# cite only when a decision used them (src/layout/size.rs, `Assumptions`): every named size
# is ≥ 2, and every exact quotient the code computed (`C // n_head`) is a size ≥ 2 too.
# By default an assignment must satisfy all of these; with `--cited-only` only the notes'
# assumptions (and named sizes ≥ 2), which audits whether the notes name everything the
# finding rests on.

CITED_PREFIX = "holds for all sizes with "


@dataclass
class Subject:
    """A finding's layout and target, parsed: entries are trees, or the literal -1."""

    op: str
    shape: list
    strides: list
    target: list | None

    @staticmethod
    def parse(raw: dict) -> Subject:
        def trees(xs):
            return [-1 if x.strip() == "-1" else parse_size(x) for x in xs]

        return Subject(
            op=raw["op"],
            shape=trees(raw["shape"]),
            strides=trees(raw["strides"]),
            target=trees(raw["target"]) if raw.get("target") is not None else None,
        )

    def trees(self) -> list:
        return [t for t in self.shape + self.strides + (self.target or []) if t != -1]


@dataclass
class Constraints:
    """`at_least`: (tree, k) pairs, tree ≥ k; `divides`: (divisor, dividend) tree pairs."""

    at_least: list
    divides: list

    @staticmethod
    def of(subject: Subject, notes: list, cited_only: bool) -> Constraints:
        at_least, divides = [], []
        for note in notes:
            if not note.startswith(CITED_PREFIX):
                continue
            for item in note[len(CITED_PREFIX) :].split(", "):
                if " ≥ " in item:
                    size, bound = item.rsplit(" ≥ ", 1)
                    at_least.append((parse_size(size), int(bound)))
                elif " divides " in item:
                    divisor, dividend = item.split(" divides ", 1)
                    divides.append((parse_size(divisor), parse_size(dividend)))
                else:
                    raise SizeSyntaxError(f"unknown assumption {item!r}")
        # An assumption about sizes the layout does not mention (the notes list every
        # divisibility the function's code implies) cannot change the verdict; drop it.
        relevant = set().union(*(symbols(t) for t in subject.trees()))
        at_least = [(t, k) for t, k in at_least if symbols(t) & relevant]
        divides = [(d, n) for d, n in divides if (symbols(d) | symbols(n)) & relevant]
        if not cited_only:
            at_least += [(q, 2) for t in subject.trees() for q in quotients(t)]
        return Constraints(at_least, divides)

    def trees(self) -> list:
        return [t for t, _ in self.at_least] + [t for pair in self.divides for t in pair]

    def division_pairs(self) -> list:
        """(dividend, divisor) pairs the assignment must make exact."""
        return [(dividend, divisor) for divisor, dividend in self.divides]

    def violated(self, env: dict) -> list:
        """The trees whose constraint `env` breaks (a non-exact quotient counts as broken)."""
        broken = []
        for tree, bound in self.at_least:
            try:
                if evaluate(tree, env) < bound:
                    broken.append(tree)
            except NotExact:
                broken.append(tree)
        for divisor, dividend in self.divides:
            try:
                quotient = evaluate(dividend, env) / evaluate(divisor, env)
                if quotient.denominator != 1:
                    broken.append(dividend)
            except (NotExact, ZeroDivisionError):
                broken.append(dividend)
        return broken


def quotients(tree) -> list:
    """Every exact quotient `a/b` (not `//` or `%`) in the tree, as a tree itself."""
    if tree[0] in ("sym", "num"):
        return []
    found = [tree] if tree[0] == "/" else []
    for t in tree[1:]:
        if isinstance(t, tuple):
            found += quotients(t)
    return found


@dataclass
class Concrete:
    env: dict
    shape: list
    strides: list
    target: list | None


def instantiate(subject: Subject, constraints: Constraints, env: dict) -> Concrete | None:
    """The subject at one assignment, or None when the assignment breaks a constraint, a
    size is not a positive integer (strides may be 0) or a quotient is not exact."""

    def values(trees, minimum):
        out = []
        for t in trees:
            if t == -1:
                out.append(-1)
                continue
            v = evaluate(t, env)
            if v.denominator != 1 or v < minimum:
                raise NotExact(f"{v} is not an integer ≥ {minimum}")
            out.append(int(v))
        return out

    if constraints.violated(env):
        return None
    try:
        shape = values(subject.shape, 1)
        strides = values(subject.strides, 0)
        target = values(subject.target, 1) if subject.target is not None else None
    except NotExact:
        return None
    if storage_extent(shape, strides, 0) > MAX_STORAGE:
        return None
    return Concrete(env, shape, strides, target)


class Assigner:
    """Draws values for a subject's size variables. Divisors (sizes under a `/`, `//`, `%`,
    or cited as dividing something) get small values; every other size is a multiple of what
    it is divided by, so quotients come out exact."""

    def __init__(self, subject: Subject, constraints: Constraints):
        trees = subject.trees() + constraints.trees()
        self.names = sorted(set().union(*(symbols(t) for t in trees))) if trees else []
        self.pairs = [p for t in trees for p in divisions(t)] + constraints.division_pairs()
        self.divisors = set().union(*(symbols(d) for _, d in self.pairs)) if self.pairs else set()

    def assign(self, divisor_value, multiplier) -> dict:
        env = {name: divisor_value(name) for name in self.names if name in self.divisors}
        for name in self.names:
            if name not in self.divisors:
                need = self._step(name, env)
                env[name] = need * max(multiplier(name), -(-2 // need))
        return env

    def _step(self, name: str, divisor_env: dict) -> int:
        """The least common multiple of the divisors `name` is divided by."""
        step = 1
        ones = {n: 1 for n in self.names if n not in divisor_env}
        for dividend, divisor in self.pairs:
            if name in symbols(dividend):
                try:
                    d = evaluate(divisor, {**ones, **divisor_env})
                except NotExact:
                    continue
                if d.denominator == 1 and d > 0:
                    step = math.lcm(step, int(d))
        return step

    def small(self, constraints: Constraints) -> dict:
        """Divisors 2 and dividends small: a dividend is only raised (doubled) while a
        constraint that mentions it is broken, so the sizes no constraint bounds stay at their
        least value (e.g. a quotient that may be 1 under `--cited-only`). Divisors are never
        raised, so a constraint on a divisor alone may stay broken; the random draws follow."""
        multipliers = {name: 1 for name in self.names}
        env = self.assign(lambda _: 2, multipliers.__getitem__)
        for _ in range(16):
            broken = constraints.violated(env)
            if not broken:
                break
            for name in set().union(*(symbols(tree) for tree in broken)) - self.divisors:
                multipliers[name] *= 2
            env = self.assign(lambda _: 2, multipliers.__getitem__)
        return env

    def random(self, rng: random.Random) -> dict:
        return self.assign(lambda _: rng.choice([2, 2, 3, 4]), lambda _: rng.choice([1, 2, 3, 4]))


def two_assignments(subject: Subject, constraints: Constraints, seed: int) -> list:
    """The small assignment and a different random one (re-drawn until every constraint
    holds); fewer when no valid assignment turns up."""
    assigner = Assigner(subject, constraints)
    found = []
    first = instantiate(subject, constraints, assigner.small(constraints))
    if first:
        found.append(first)
    rng = random.Random(seed)
    for _ in range(400):
        if len(found) == 2:
            break
        candidate = instantiate(subject, constraints, assigner.random(rng))
        if candidate and all(candidate.env != f.env for f in found):
            found.append(candidate)
    return found


# --- reading the call back from the source ---------------------------------------------


def call_source(finding: dict, root: str | None) -> str:
    path = finding["filename"]
    if root and not os.path.isabs(path):
        path = os.path.join(root, path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start, end = finding["location"], finding["end_location"]
    # Rows and columns are 1-based; columns count Unicode scalar values (Python str indices).
    if start["row"] == end["row"]:
        return lines[start["row"] - 1][start["column"] - 1 : end["column"] - 1]
    parts = [lines[start["row"] - 1][start["column"] - 1 :]]
    parts += lines[start["row"] : end["row"] - 1]
    parts.append(lines[end["row"] - 1][: end["column"] - 1])
    return "\n".join(parts)


def parsed_call(source: str) -> ast.Call:
    node = ast.parse("(" + source + ")", mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"the finding's span is not a call: {source!r}")
    return node


def is_function_call(call: ast.Call) -> bool:
    """`torch.flatten(x, ...)` / `einops.rearrange(x, ...)` / bare `rearrange(x, ...)`,
    as opposed to the method form `x.flatten(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return True
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("torch", "einops")


def int_literal(node: ast.AST) -> int:
    value = ast.literal_eval(node)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"`{ast.unparse(node)}` is not an integer literal")
    return value


def flatten_dims(call: ast.Call) -> tuple:
    args = call.args[1:] if is_function_call(call) else call.args
    dims = {"start_dim": 0, "end_dim": -1}
    for name, arg in zip(("start_dim", "end_dim"), args):
        dims[name] = int_literal(arg)
    for kw in call.keywords:
        if kw.arg in dims:
            dims[kw.arg] = int_literal(kw.value)
    return dims["start_dim"], dims["end_dim"]


def rearrange_arguments(call: ast.Call, env: dict) -> tuple:
    """The pattern and the axis lengths whose source text is a size stridelint named (or an
    integer literal); other lengths are left for einops to infer."""
    if not is_function_call(call) or len(call.args) < 2:
        raise ValueError("not a `rearrange(tensor, pattern, ...)` call")
    pattern = ast.literal_eval(call.args[1])
    lengths = {}
    for kw in call.keywords:
        text = ast.unparse(kw.value)
        if text in env:
            lengths[kw.arg] = env[text]
        elif isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int):
            lengths[kw.arg] = kw.value.value
    return pattern, lengths


# --- running the op --------------------------------------------------------------------


def op_runner(finding: dict, root: str | None):
    """A function tensor, concrete -> result for the finding's op, or a skip reason."""
    op = finding["subject"]["op"].split(".")[-1]
    if op in ("view", "view_as"):
        return lambda x, c: x.view(c.target) if c.target is not None else None
    if op in ("reshape", "reshape_as"):
        return lambda x, c: x.reshape(c.target) if c.target is not None else None
    if op == "ravel":
        return lambda x, c: x.ravel()
    if op == "flatten":
        start, end = flatten_dims(parsed_call(call_source(finding, root)))
        return lambda x, c: x.flatten(start, end)
    if op == "rearrange":
        import einops

        call = parsed_call(call_source(finding, root))

        def run(x, c):
            pattern, lengths = rearrange_arguments(call, c.env)
            return einops.rearrange(x, pattern, **lengths)

        return run
    raise ValueError(f"op `{op}` is not supported by this script")


@dataclass
class Trial:
    concrete: Concrete
    confirmed: bool
    detail: str


def run_trial(code: str, runner, concrete: Concrete) -> Trial:
    x = torch.empty(storage_extent(concrete.shape, concrete.strides, 0), dtype=torch.uint8)
    x = x.as_strided(concrete.shape, concrete.strides)
    try:
        result = runner(x, concrete)
    except RuntimeError as exc:
        message = str(exc).split("\n")[0]
        if code == "SL001" and VIEW_INCOMPATIBLE in message:
            return Trial(concrete, True, "view raised 'view size is not compatible'")
        return Trial(concrete, False, f"raised: {message}")
    if result is None:
        raise ValueError("the finding has no target shape")
    if code == "SL001":
        return Trial(concrete, False, f"view succeeded: {tuple(result.shape)} strides {result.stride()}")
    if shares_storage(x, result):
        return Trial(
            concrete,
            False,
            f"no copy: result {tuple(result.shape)} strides {result.stride()} shares the input's storage",
        )
    return Trial(concrete, True, f"copied into a new storage, result {tuple(result.shape)}")


@dataclass
class Outcome:
    finding: dict
    verdict: str  # confirmed | refuted | skipped
    trials: list
    reason: str = ""


def check_finding(finding: dict, seed: int, root: str | None, cited_only: bool) -> Outcome:
    code = finding["code"]
    raw = finding.get("subject")
    if raw is None:
        return Outcome(finding, "skipped", [], "the finding has no `subject`")
    try:
        subject = Subject.parse(raw)
        constraints = Constraints.of(subject, finding.get("notes", []), cited_only)
        runner = op_runner(finding, root)
    except (SizeSyntaxError, Unevaluable, ValueError, SyntaxError, OSError) as exc:
        return Outcome(finding, "skipped", [], str(exc))
    if subject.target is None and subject.op.split(".")[-1] in ("view", "view_as", "reshape", "reshape_as"):
        return Outcome(finding, "skipped", [], "the finding has no target shape")
    concretes = two_assignments(subject, constraints, seed)
    if not concretes:
        return Outcome(finding, "skipped", [], "no size assignment satisfies the assumptions")
    try:
        trials = [run_trial(code, runner, c) for c in concretes]
    except ValueError as exc:
        return Outcome(finding, "skipped", [], str(exc))
    verdict = "confirmed" if all(t.confirmed for t in trials) else "refuted"
    reason = "" if len(trials) == 2 else "only one size assignment exists"
    return Outcome(finding, verdict, trials, reason)


# --- report ----------------------------------------------------------------------------


def location(finding: dict, root: str | None) -> str:
    path = finding["filename"]
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1 :]
    return f"{path}:{finding['location']['row']}"


def describe(c: Concrete) -> str:
    """`(shape)/(strides)→(target)` in numbers."""

    def tup(xs) -> str:
        return "(" + ",".join(map(str, xs)) + ")"

    arrow = f"→{tup(c.target)}" if c.target is not None else ""
    return f"{tup(c.shape)}/{tup(c.strides)}{arrow}"


def print_table(outcomes: list, root: str | None, verbose: bool) -> None:
    print("| finding | op | sizes: shape/strides→target at each assignment | verdict |")
    print("|---|---|---|---|")
    for o in outcomes:
        f = o.finding
        op = f.get("subject", {}).get("op", "?")
        sizes = "; ".join(describe(t.concrete) for t in o.trials) or "—"
        verdict = o.verdict if not o.reason else f"{o.verdict} ({o.reason})"
        if o.verdict == "refuted":
            verdict += ": " + "; ".join(t.detail for t in o.trials if not t.confirmed)
        print(f"| {location(f, root)} | {f['code']} `{op}` | {sizes} | {verdict} |")
        if verbose:
            for i, t in enumerate(o.trials, 1):
                env = ", ".join(f"{k}={v}" for k, v in sorted(t.concrete.env.items()))
                print(f"|   | assignment {i} | {env or '(no size variables)'} | {t.detail} |")


def select(findings: list, sample: int, seed: int, everything: bool) -> list:
    """Every SL001/SL002 finding with `everything`; otherwise up to `sample` findings of each
    code, drawn with a seeded RNG from the report's findings in (file, row) order."""
    chosen = []
    for code in CHECKED_CODES:
        of_code = sorted(
            (f for f in findings if f["code"] == code),
            key=lambda f: (f["filename"], f["location"]["row"], f["location"]["column"]),
        )
        if everything or len(of_code) <= sample:
            chosen += of_code
        else:
            picked = random.Random(f"{seed}:{code}").sample(range(len(of_code)), sample)
            chosen += [of_code[i] for i in sorted(picked)]
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("findings", help="the JSON report of `stridelint check --output-format json`")
    parser.add_argument("--sample", type=int, default=20, help="findings per code (SL001, SL002) to check")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--all", action="store_true", help="check every SL001/SL002 finding")
    parser.add_argument("--root", help="strip this prefix from paths in the table (and resolve relative ones)")
    parser.add_argument("--verbose", action="store_true", help="print each size assignment")
    parser.add_argument(
        "--cited-only",
        action="store_true",
        help="assume only what the notes cite (drop the default: exact quotients are ≥ 2)",
    )
    args = parser.parse_args()
    try:
        with open(args.findings, encoding="utf-8") as f:
            findings = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read {args.findings}: {exc}", file=sys.stderr)
        return 2
    chosen = select(findings, args.sample, args.seed, args.all)
    outcomes = [check_finding(f, args.seed * 1_000_003 + i, args.root, args.cited_only) for i, f in enumerate(chosen)]
    print_table(outcomes, args.root, args.verbose)
    counts = {v: sum(o.verdict == v for o in outcomes) for v in ("confirmed", "refuted", "skipped")}
    total = {code: sum(f["code"] == code for f in findings) for code in CHECKED_CODES}
    print(
        f"\nchecked {len(chosen)} of {total['SL001']} SL001 + {total['SL002']} SL002 findings "
        f"(torch {torch.__version__}, seed {args.seed})"
    )
    print(f"{counts['confirmed']} confirmed, {counts['refuted']} refuted, {counts['skipped']} skipped")
    return 1 if counts["refuted"] else 0


if __name__ == "__main__":
    sys.exit(main())
