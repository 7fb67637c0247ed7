"""Integer expressions that carry both a concrete value and a symbolic form.

The chain generator builds every size-valued argument (a `view` target, an `expand`
size, a tensor operand's shape and strides, ...) from the sizes of the chain's start
tensor. Each such number is an `Expr`: its `value` is what real torch is called with,
and its `json()` form records *how* the number was derived (e.g. "s0 * s1" rather than
12). `tests/it/oracle_symbolic.rs` rebuilds the arguments from that form, so it can replay
the chain with symbolic sizes, and at other size assignments, without torch.

JSON form (read by the Rust harness):
    int                     a literal
    "s3"                    a named start size
    ["+", a, b, ...]        sum
    ["-", a, b]             difference
    ["*", a, b, ...]        product
    ["//", a, b]            floor division (Python semantics)
"""

from __future__ import annotations

from typing import Union

Operand = Union["Expr", int]


class Expr:
    """An integer with its derivation. Arithmetic folds literals, so a chain whose start
    sizes are all literal produces plain ints in the JSON."""

    __slots__ = ("value", "form")

    def __init__(self, value: int, form):
        self.value = int(value)
        self.form = form

    @staticmethod
    def lit(value: int) -> "Expr":
        return Expr(value, int(value))

    @staticmethod
    def sym(name: str, value: int) -> "Expr":
        return Expr(value, name)

    @property
    def is_literal(self) -> bool:
        return isinstance(self.form, int)

    def json(self):
        return self.form

    def __repr__(self) -> str:
        return f"Expr({self.value}, {self.form!r})"

    # --- arithmetic -------------------------------------------------------------------

    def _binary(self, other: Operand, op: str, value: int) -> "Expr":
        other = as_expr(other)
        if self.is_literal and other.is_literal:
            return Expr.lit(value)
        # Identity elements keep the recorded forms short and readable.
        if op == "*":
            if other.is_literal and other.value == 1:
                return self
            if self.is_literal and self.value == 1:
                return other
            if (self.is_literal and self.value == 0) or (other.is_literal and other.value == 0):
                return Expr.lit(0)
        if op in ("+", "-") and other.is_literal and other.value == 0:
            return self
        if op == "+" and self.is_literal and self.value == 0:
            return other
        if op == "//" and other.is_literal and other.value == 1:
            return self
        return Expr(value, [op, self.form, other.form])

    def __add__(self, other: Operand) -> "Expr":
        return self._binary(other, "+", self.value + as_expr(other).value)

    def __radd__(self, other: Operand) -> "Expr":
        return as_expr(other) + self

    def __sub__(self, other: Operand) -> "Expr":
        return self._binary(other, "-", self.value - as_expr(other).value)

    def __rsub__(self, other: Operand) -> "Expr":
        return as_expr(other) - self

    def __mul__(self, other: Operand) -> "Expr":
        return self._binary(other, "*", self.value * as_expr(other).value)

    def __rmul__(self, other: Operand) -> "Expr":
        return as_expr(other) * self

    def __floordiv__(self, other: Operand) -> "Expr":
        divisor = as_expr(other).value
        if divisor == 0:
            raise ZeroDivisionError("Expr floor division by zero")
        return self._binary(other, "//", self.value // divisor)


def as_expr(x: Operand) -> Expr:
    return x if isinstance(x, Expr) else Expr.lit(int(x))


def product(xs) -> Expr:
    acc = Expr.lit(1)
    for x in xs:
        acc = acc * x
    return acc


def values(xs) -> list:
    return [as_expr(x).value for x in xs]


def forms(xs) -> list:
    return [as_expr(x).json() for x in xs]


def evaluate(form, env: dict) -> int:
    """Evaluate a JSON form under `env` (symbol -> int). Used by the self-check."""
    if isinstance(form, bool):
        raise TypeError("bool is not an expression")
    if isinstance(form, int):
        return form
    if isinstance(form, str):
        return env[form]
    op, *args = form
    vals = [evaluate(a, env) for a in args]
    if op == "+":
        return sum(vals)
    if op == "-":
        return vals[0] - vals[1]
    if op == "*":
        out = 1
        for v in vals:
            out *= v
        return out
    if op == "//":
        return vals[0] // vals[1]
    raise ValueError(f"unknown operator {op!r}")
