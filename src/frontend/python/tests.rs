//! Tests of the Python frontend as a whole: source text in, IR out.
//!
//! Most assertions compare a compact rendering of the IR (Python-like text that shows the
//! structure: every operator is parenthesised, unknown values print as `?`) with what the
//! lowering rules in the module docs say the source must become.

use std::fmt::Write as _;

use proptest::prelude::*;

use super::*;
use crate::ir::{self, BinOp, Expr, ExprKind, Function, Module, Param, Stmt, Target};

// ----- rendering the IR -----

use super::super::ir_text::IrText;

const TEXT: IrText = IrText { arg_names: true };

fn show(expr: &Expr) -> String {
    TEXT.show(expr)
}

fn show_target(target: &Target) -> String {
    TEXT.show_target(target)
}

fn show_param(param: &Param) -> String {
    let mut text = if param.variadic {
        format!("*{}", param.name)
    } else {
        param.name.clone()
    };
    if let Some(dims) = &param.shape_annotation {
        write!(text, ": {dims:?}").unwrap();
    }
    if let Some(default) = &param.default {
        write!(text, "={}", show(default)).unwrap();
    }
    text
}

fn show_function(function: &Function, indent: usize, out: &mut String) {
    let params: Vec<String> = function.params.iter().map(show_param).collect();
    let kind = match (function.is_constructor, function.is_method) {
        (true, _) => "init",
        (false, true) => "method",
        (false, false) => "def",
    };
    writeln!(
        out,
        "{}{kind} {}({}):",
        "  ".repeat(indent),
        function.name,
        params.join(", ")
    )
    .unwrap();
    show_block(&function.body, indent + 1, out);
}

fn show_block(statements: &[Stmt], indent: usize, out: &mut String) {
    for statement in statements {
        show_stmt(statement, indent, out);
    }
}

fn show_stmt(statement: &Stmt, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    let block = |header: String, body: &[Stmt], out: &mut String| {
        writeln!(out, "{pad}{header}").unwrap();
        show_block(body, indent + 1, out);
    };
    match statement {
        Stmt::Assign { targets, value, .. } => {
            let targets: Vec<String> = targets.iter().map(show_target).collect();
            writeln!(out, "{pad}{} = {}", targets.join(" = "), show(value)).unwrap();
        }
        Stmt::AugAssign {
            target, op, value, ..
        } => {
            writeln!(out, "{pad}{} {op:?}= {}", show_target(target), show(value)).unwrap();
        }
        Stmt::Expr(expr) => writeln!(out, "{pad}{}", show(expr)).unwrap(),
        Stmt::Return {
            value: Some(value), ..
        } => writeln!(out, "{pad}return {}", show(value)).unwrap(),
        Stmt::Return { value: None, .. } => writeln!(out, "{pad}return").unwrap(),
        Stmt::If {
            test, body, orelse, ..
        } => {
            block(format!("if {}:", show(test)), body, out);
            if !orelse.is_empty() {
                block("else:".into(), orelse, out);
            }
        }
        Stmt::Loop {
            target,
            iter,
            body,
            orelse,
            ..
        } => {
            let header = match (target, iter) {
                (Some(target), Some(iter)) => {
                    format!("for {} in {}:", show_target(target), show(iter))
                }
                _ => "loop:".into(),
            };
            block(header, body, out);
            if !orelse.is_empty() {
                block("else:".into(), orelse, out);
            }
        }
        Stmt::With { items, body, .. } => {
            let items: Vec<String> = items
                .iter()
                .map(|(context, target)| match target {
                    Some(target) => format!("{} as {}", show(context), show_target(target)),
                    None => show(context),
                })
                .collect();
            block(format!("with {}:", items.join(", ")), body, out);
        }
        Stmt::Try(t) => {
            let ir::Try {
                body,
                handlers,
                orelse,
                finalbody,
                ..
            } = &**t;
            block("try:".into(), body, out);
            for handler in handlers {
                block("except:".into(), handler, out);
            }
            if !orelse.is_empty() {
                block("else:".into(), orelse, out);
            }
            if !finalbody.is_empty() {
                block("finally:".into(), finalbody, out);
            }
        }
        Stmt::Assert { test, .. } => writeln!(out, "{pad}assert {}", show(test)).unwrap(),
        Stmt::Raise { .. } => writeln!(out, "{pad}raise").unwrap(),
        Stmt::Import { module, alias, .. } => match alias {
            Some(alias) => writeln!(out, "{pad}import {module} as {alias}").unwrap(),
            None => writeln!(out, "{pad}import {module}").unwrap(),
        },
        Stmt::FunctionDef(function) => show_function(function, indent, out),
        Stmt::ClassDef(class) => {
            writeln!(
                out,
                "{pad}class {}({}):",
                class.name,
                class.bases.join(", ")
            )
            .unwrap();
            for method in &class.methods {
                show_function(method, indent + 1, out);
            }
        }
        Stmt::Jump { .. } => writeln!(out, "{pad}jump").unwrap(),
        Stmt::Other { .. } => writeln!(out, "{pad}other").unwrap(),
    }
}

/// The whole module: body, then functions, then classes with their methods.
fn show_module(module: &Module) -> String {
    let mut out = String::new();
    show_block(&module.body, 0, &mut out);
    for function in &module.functions {
        show_function(function, 0, &mut out);
    }
    for class in &module.classes {
        writeln!(out, "class {}({}):", class.name, class.bases.join(", ")).unwrap();
        for method in &class.methods {
            show_function(method, 1, &mut out);
        }
    }
    out
}

/// Parses `source`, which must be free of syntax errors, and renders it.
fn lower(source: &str) -> String {
    let outcome = parse_python(source);
    assert_eq!(
        outcome.errors,
        vec![],
        "unexpected syntax errors in:\n{source}"
    );
    show_module(&outcome.module)
}

fn dedent(text: &str) -> String {
    let mut lines: Vec<&str> = text
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .collect();
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    let margin = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in lines {
        out.push_str(line.get(margin..).unwrap_or("").trim_end());
        out.push('\n');
    }
    out
}

fn assert_lowers_to(source: &str, expected: &str) {
    assert_eq!(lower(&dedent(source)), dedent(expected));
}

// ----- real model code -----

const NANOGPT_ATTENTION: &str = r#"
import math
import torch
import torch.nn as nn
from torch.nn import functional as F

class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')

    def forward(self, x):
        B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)
        q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side
        return y
"#;

#[test]
fn nanogpt_attention_class() {
    assert_lowers_to(
        NANOGPT_ATTENTION,
        r#"
        import math
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class CausalSelfAttention(nn.Module):
          init __init__(config):
            super().__init__()
            assert ((config.n_embd % config.n_head) == 0)
            self.c_attn = nn.Linear(config.n_embd, (3 * config.n_embd), bias=config.bias)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
          method forward(x):
            (B, T, C) = x.size()
            (q, k, v) = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, (C // self.n_head)).transpose(1, 2)
            if self.flash:
              y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0, is_causal=True)
            else:
              att = ((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1))))
              att = F.softmax(att, dim=-1)
              y = (att @ v)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return y
        "#,
    );
}

#[test]
fn spans_are_byte_offsets_of_the_source() {
    let outcome = parse_python(NANOGPT_ATTENTION);
    let class = &outcome.module.classes[0];
    assert_eq!(
        &NANOGPT_ATTENTION[class.span.range()][..25],
        "class CausalSelfAttention"
    );
    let forward = &class.methods[1];
    assert_eq!(&NANOGPT_ATTENTION[forward.name_span.range()], "forward");
    let Stmt::Assign { value, span, .. } = &forward.body[2] else {
        panic!("{:?}", forward.body[2])
    };
    assert_eq!(
        &NANOGPT_ATTENTION[span.range()],
        "k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)"
    );
    let Some((func, _)) = value.kind.as_call() else {
        panic!()
    };
    let ExprKind::Attr {
        value: view_call, ..
    } = &func.kind
    else {
        panic!()
    };
    assert_eq!(
        &NANOGPT_ATTENTION[view_call.span.range()],
        "k.view(B, T, self.n_head, C // self.n_head)"
    );
    let Some((_, args)) = view_call.kind.as_call() else {
        panic!()
    };
    assert_eq!(
        &NANOGPT_ATTENTION[args[3].value().span.range()],
        "C // self.n_head"
    );
}

// ----- imports -----

#[test]
fn imports() {
    assert_lowers_to(
        r#"
        import torch.nn.functional as F, os
        import torch . nn
        from einops import rearrange, repeat as einops_repeat
        from torch import nn
        from . import utils
        from ..models.layers import Block
        from einops import *
        from __future__ import annotations
        def f():
            import numpy as np
        "#,
        r#"
        import torch.nn.functional as F
        import os
        import torch.nn
        import einops.rearrange as rearrange
        import einops.repeat as einops_repeat
        import torch.nn as nn
        import .utils as utils
        import ..models.layers.Block as Block
        other
        other
        def f():
          import numpy as np
        "#,
    );
}

// ----- functions, parameters, annotations -----

#[test]
fn parameters_defaults_variadics_and_keyword_only() {
    assert_lowers_to(
        r#"
        def f(a, b=2, *args, c, d: int = -1, **kwargs):
            pass
        def g(a, /, b, *, c=None):
            pass
        "#,
        r#"
        def f(a, b=2, *args, c, d=-1, *kwargs):
          other
        def g(a, b, c=None):
          other
        "#,
    );
}

#[test]
fn jaxtyping_annotations_name_the_dimensions() {
    assert_lowers_to(
        r#"
        def attend(
            q: Float[Tensor, "b t c"],
            k: Float[torch.Tensor, "batch seq dim"],
            mask: Int[Tensor, "b 1 t"],
            scale: float,
            pos: Optional[Int64[Tensor, "*batch seq"]] = None,
            bias: jaxtyping.Float[Tensor, "... d"] | None = None,
            scalar: Float[Tensor, ""] = None,
            plain: Tensor = None,
            other: List[Tensor, "b"] = None,
            *rest: Float[Tensor, "b"],
        ) -> Float[Tensor, "b t c"]:
            return q
        "#,
        r#"
        def attend(q: ["b", "t", "c"], k: ["batch", "seq", "dim"], mask: ["b", "1", "t"], scale, pos: ["*batch", "seq"]=None, bias: ["...", "d"]=None, scalar: []=None, plain=None, other=None, *rest):
          return q
        "#,
    );
}

#[test]
fn methods_constructors_nested_definitions_and_decorators() {
    assert_lowers_to(
        r#"
        @dataclass
        class Block(nn.Module, metaclass=Meta):
            size: int = 3
            def __init__(self, config):
                self.ln = LayerNorm(config.n_embd)
            @torch.no_grad()
            def forward(self, x):
                def helper(y):
                    return y.t()
                class Local:
                    pass
                return helper(x)
            @staticmethod
            def build(config):
                return Block(config)
            @classmethod
            def create(cls, n):
                return cls(n)
            async def stream(self):
                yield 1
            class Inner(Base):
                def go(self):
                    pass

        def free(x):
            return x
        "#,
        r#"
        def free(x):
          return x
        class Block.Inner(Base):
          method go():
            other
        class Block(nn.Module):
          init __init__(config):
            self.ln = LayerNorm(config.n_embd)
          method forward(x):
            def helper(y):
              return y.t()
            class Local():
            return helper(x)
          def build(config):
            return Block(config)
          method create(n):
            return cls(n)
          method stream():
            ?
        "#,
    );
}

// ----- assignments -----

#[test]
fn assignment_forms() {
    assert_lowers_to(
        r#"
        a = b = x
        a, *rest = f(*args, k=1, **kw)
        (h, w), [c, *_] = shape
        self.weight = w
        cache[0] = v
        x: int = 3
        y: Float[Tensor, "b t"]
        x += 1
        x //= n
        x |= m
        x = yield
        "#,
        r#"
        a = b = x
        (a, *rest) = f(*args, k=1, **kw)
        ((h, w), (c, *_)) = shape
        self.weight = w
        cache[…] = v
        x = 3
        other
        x Add= 1
        x FloorDiv= n
        x Other= m
        x = ?
        "#,
    );
}

#[test]
fn tuple_unpacking_with_star() {
    assert_lowers_to(
        r#"
        *batch, t, c = x.shape
        first, *middle, last = x.unbind(0)
        for i, (a, *bs) in enumerate(pairs):
            pass
        "#,
        r#"
        (*batch, t, c) = x.shape
        (first, *middle, last) = x.unbind(0)
        for (i, (a, *bs)) in enumerate(pairs):
          other
        "#,
    );
}

#[test]
fn walrus_binds_before_its_statement() {
    assert_lowers_to(
        r#"
        if (n := x.size(0)) > 3:
            y = x.view(n, -1)
        z = a and (m := f(x))
        w = [v := i for i in range(3)]
        while (chunk := next(it)) is not None:
            use(chunk)
        f = lambda q: (r := q)
        "#,
        r#"
        n = x.size(0)
        if (n > 3):
          y = x.view(n, -1)
        m = ?
        z = (a and f(x))
        v = ?
        w = [v for i in range(3)]
        chunk = ?
        loop:
          chunk = ?
          use(chunk)
        f = ?
        "#,
    );
}

// ----- expressions -----

#[test]
fn slicing_forms() {
    assert_lowers_to(
        r#"
        x[:, :, 0]
        x[..., None]
        x[1:-1:2]
        x.shape[:2]
        x.size()[:-1]
        x[::2, 1:]
        x[i]
        x[(1, 2)]
        x[idx,]
        "#,
        r#"
        x[:, :, 0]
        x[..., None]
        x[1:-1:2]
        x.shape[:2]
        x.size()[:-1]
        x[::2, 1:]
        x[i]
        x[(1, 2)]
        x[idx]
        "#,
    );
}

#[test]
fn literals() {
    assert_lowers_to(
        r#"
        1_000, 0x1F, 0o17, 0b11, -7, +3, 1.5, -2.5e-3, 3j
        True, False, None, ...
        "ab" 'cd', r"\d", "t\tab", f"b {{t}}", f"{x}", b"bytes", "\N{DASH}"
        "#,
        r#"
        (1000, 31, 15, 3, -7, 3, 1.5, -0.0025, ?)
        (True, False, None, ...)
        ("abcd", "\\d", "t\tab", "b {t}", ?, ?, ?)
        "#,
    );
}

#[test]
fn operators_comparisons_and_conditionals() {
    assert_lowers_to(
        r#"
        a + b - c * d / e // f % g ** h @ i
        a & b | c ^ d << e
        -x, - -x, ~x
        not x
        a < b <= c
        x is not None and y not in z or w == 1
        a if c else b
        (x)
        "#,
        r#"
        ((a + b) - (((((c * d) / e) // f) % (g ** h)) @ i))
        ((a <op> b) <op> (c <op> (d <op> e)))
        (-x, --x, ?)
        (not x)
        ((a < b) and (b <= c))
        (((x is not None) and (y not in z)) or (w == 1))
        (a if c else b)
        x
        "#,
    );
}

#[test]
fn calls_and_opaque_expressions() {
    assert_lowers_to(
        r#"
        f(a, *xs, key=v, **opts)
        sum(t.numel() for t in ts)
        g(lambda z: z, [i for i in r], {k: 1}, {1, 2}, [a, *b])
        rearrange(x, "b h t d -> b t (h d)", h=n_head)
        "#,
        r#"
        f(a, *xs, key=v, **opts)
        sum([t.numel() for t in ts])
        g((lambda z: z), [i for i in r], ?, ?, [a, *b])
        rearrange(x, "b h t d -> b t (h d)", h=n_head)
        "#,
    );
}

#[test]
fn comprehensions_with_one_clause_and_its_filters_and_plain_lambdas_are_lowered() {
    assert_lowers_to(
        r#"
        qs = [t.view(b, n, h, -1) for t in qkv]
        q, k = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), (q, k))
        g = tuple(x.transpose(1, 2) for x, y in pairs)
        a = [t for t in xs if t]
        c = [s for t in xs for s in t]
        d = map(lambda *t: t, xs)
        e = map(lambda t=1: t, xs)
        "#,
        r#"
        qs = [t.view(b, n, h, -1) for t in qkv]
        (q, k) = map((lambda t: rearrange(t, "b n (h d) -> b h n d", h=h)), (q, k))
        g = tuple([x.transpose(1, 2) for (x, y) in pairs])
        a = [t for t in xs if t]
        c = ?
        d = map(?, xs)
        e = map(?, xs)
        "#,
    );
}

// ----- control flow -----

#[test]
fn control_flow_statements() {
    assert_lowers_to(
        r#"
        if a:
            x = 1
        elif (m := b):
            x = 2
        else:
            x = 3
        for i in range(n):
            if i: break
            continue
        else:
            done()
        with torch.no_grad(), open(p) as (f, g), ctx as self.h:
            pass
        try:
            y = x.view(-1)
        except (ValueError, RuntimeError) as err:
            raise
        except:
            pass
        else:
            ok()
        finally:
            cleanup()
        global g
        del x
        return
        "#,
        r#"
        if a:
          x = 1
        else:
          m = b
          if m:
            x = 2
          else:
            x = 3
        for i in range(n):
          if i:
            jump
          jump
        else:
          done()
        with torch.no_grad(), open(p) as (f, g), ctx as self.h:
          other
        try:
          y = x.view(-1)
        except:
          err = ?
          raise
        except:
          other
        else:
          ok()
        finally:
          cleanup()
        other
        other
        return
        "#,
    );
}

#[test]
fn match_cases_may_each_run_and_bind_their_captures() {
    assert_lowers_to(
        r#"
        match x.dim():
            case 3:
                y = x
            case Point(x=a, y=[1, *rest]) | {"k": v, **kw} if (g := a) > 0:
                y = a
            case Color.RED as c:
                pass
            case _:
                y = None
        "#,
        r#"
        x.dim()
        if ?:
          y = x
        else:
          if ?:
            a = ?
            rest = ?
            v = ?
            kw = ?
            g = ?
            y = a
          else:
            if ?:
              c = ?
              other
            else:
              y = None
        "#,
    );
}

#[test]
fn a_last_case_that_always_matches_is_the_final_else() {
    assert_lowers_to(
        r#"
        match mode:
            case "a":
                y = x
            case other:
                y = x.t()
        "#,
        r#"
        mode
        if ?:
          y = x
        else:
          other = ?
          y = x.t()
        "#,
    );
    // Parenthesized, or one alternative of an or-pattern, a capture still always matches.
    assert_lowers_to(
        r#"
        match mode:
            case "a":
                y = x
            case ("b" | (other)):
                y = x.t()
        "#,
        r#"
        mode
        if ?:
          y = x
        else:
          other = ?
          y = x.t()
        "#,
    );
    // A guard, a sequence pattern or a dotted name may fail to match.
    for last in [
        "case _ if mode:",
        "case (a,):",
        "case [a]:",
        "case a, b:",
        "case A.B:",
    ] {
        let source =
            format!("match mode:\n    case \"a\":\n        y = x\n    {last}\n        y = None\n");
        let lowered = lower(&source);
        assert!(lowered.contains("else:\n  if ?:"), "{last}: {lowered}");
    }
    // A single case that always matches is its body.
    assert_lowers_to(
        r#"
        match x:
            case _:
                y = x.t()
        "#,
        r#"
        x
        y = x.t()
        "#,
    );
}

// ----- syntax errors -----

#[test]
fn syntax_error_reports_first_error_and_keeps_the_rest() {
    let source =
        "def ok(x):\n    return x.view(-1)\n\ny = foo(1 +)\n\ndef later(z):\n    return z.t()\n";
    let outcome = parse_python(source);
    let first = outcome.errors.first().expect("a syntax error");
    // Where CPython reports it: the `)` after the dangling `+`.
    assert_eq!(first.span.start as usize, source.find("+)").unwrap() + 1);
    assert_eq!(first.message, "unexpected token `)`");
    let names: Vec<&str> = outcome
        .module
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["ok", "later"]);
}

#[test]
fn syntax_error_messages_point_at_the_culprit() {
    for (source, culprit, message) in [
        ("x = foo(1,", "(", "`(` was never closed"),
        ("x = [1, 2", "[", "`[` was never closed"),
        ("class A(:\n  pass", "", "expected `)`"),
        ("x = )", ")", "unmatched `)`"),
        ("\"abc", "\"", "unterminated string literal"),
        ("x = 3 $ 4", "$", "unexpected character `$`"),
        ("a b c", "b", "unexpected token `b`"),
        ("f(**)", ")", "unexpected token `)`"),
        ("x = (1,\ny = 2\n", "(", "`(` was never closed"),
        ("x = 'abc\ny", "'", "unterminated string literal"),
        (
            "x = \u{200b}1",
            "\u{200b}",
            "invalid non-printable character U+200B",
        ),
        (
            "if x:\n    a\n  b\n",
            "",
            "unindent does not match any outer indentation level",
        ),
        ("  x = 1\n", "", "unexpected indent"),
    ] {
        let errors = parse_python(source).errors;
        let first = errors
            .first()
            .unwrap_or_else(|| panic!("no error in {source:?}"));
        assert_eq!(&source[first.span.range()], culprit, "{source:?}");
        assert_eq!(first.message, message, "{source:?}");
    }
    let source = "x = 1 +";
    let errors = parse_python(source).errors;
    assert_eq!(errors[0].message, "unexpected end of file");
    assert_eq!(errors[0].span, ir::Span::new(source.len(), source.len()));
}

#[test]
fn syntax_error_missing_token() {
    let source = "def f(:\n    pass\n";
    let outcome = parse_python(source);
    assert_eq!(
        outcome.errors,
        vec![SyntaxError {
            span: ir::Span::new(6, 6),
            message: "expected `)`".into()
        }]
    );
    assert_eq!(outcome.module.functions[0].name, "f");
}

#[test]
fn syntax_error_unterminated_call() {
    let source = "x = 1\ny = foo(1,\n";
    let outcome = parse_python(source);
    assert!(!outcome.errors.is_empty());
    assert!(outcome.errors[0].span.start >= 6, "{:?}", outcome.errors);
    assert!(outcome
        .errors
        .windows(2)
        .all(|w| w[0].span.start <= w[1].span.start));
    assert!(show_module(&outcome.module).starts_with("x = 1\n"));
}

#[test]
fn well_formed_file_has_no_errors() {
    assert!(parse_python(NANOGPT_ATTENTION).errors.is_empty());
    assert!(parse_python("").errors.is_empty());
}

// ----- robustness -----

/// Runs `f` on a thread with the default 2 MiB stack (the size rayon workers get), so a
/// recursion that is not bounded fails the test with a stack overflow.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// Deepest nesting of statements and expressions in a module, measured without recursion
/// (the IR's consumers and its `Drop` recurse over it, so its depth must stay bounded).
fn max_ir_depth(module: &Module) -> usize {
    enum Item<'a> {
        Stmt(&'a Stmt),
        Expr(&'a Expr),
        Target(&'a Target),
        Function(&'a Function),
    }
    let mut pending: Vec<(Item, usize)> = Vec::new();
    pending.extend(module.body.iter().map(|s| (Item::Stmt(s), 1)));
    pending.extend(module.functions.iter().map(|f| (Item::Function(f), 1)));
    for class in &module.classes {
        pending.extend(class.methods.iter().map(|f| (Item::Function(f), 1)));
    }
    let mut deepest = 0;
    while let Some((item, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        let below = depth + 1;
        match item {
            Item::Function(function) => {
                for param in &function.params {
                    pending.extend(param.default.iter().map(|e| (Item::Expr(e), below)));
                }
                pending.extend(function.body.iter().map(|s| (Item::Stmt(s), below)));
            }
            Item::Stmt(statement) => match statement {
                Stmt::Assign { targets, value, .. } => {
                    pending.extend(targets.iter().map(|t| (Item::Target(t), below)));
                    pending.push((Item::Expr(value), below));
                }
                Stmt::AugAssign { target, value, .. } => {
                    pending.push((Item::Target(target), below));
                    pending.push((Item::Expr(value), below));
                }
                Stmt::Expr(expr) | Stmt::Assert { test: expr, .. } => {
                    pending.push((Item::Expr(expr), below))
                }
                Stmt::Return { value, .. } => {
                    pending.extend(value.iter().map(|e| (Item::Expr(e), below)))
                }
                Stmt::If {
                    test, body, orelse, ..
                } => {
                    pending.push((Item::Expr(test), below));
                    pending.extend(body.iter().chain(orelse).map(|s| (Item::Stmt(s), below)));
                }
                Stmt::Loop {
                    target,
                    iter,
                    body,
                    orelse,
                    ..
                } => {
                    pending.extend(target.iter().map(|t| (Item::Target(t), below)));
                    pending.extend(iter.iter().map(|e| (Item::Expr(e), below)));
                    pending.extend(body.iter().chain(orelse).map(|s| (Item::Stmt(s), below)));
                }
                Stmt::With { items, body, .. } => {
                    for (context, target) in items {
                        pending.push((Item::Expr(context), below));
                        pending.extend(target.iter().map(|t| (Item::Target(t), below)));
                    }
                    pending.extend(body.iter().map(|s| (Item::Stmt(s), below)));
                }
                Stmt::Try(t) => {
                    let ir::Try {
                        body,
                        handlers,
                        orelse,
                        finalbody,
                        ..
                    } = &**t;
                    let handlers = handlers.iter().flatten();
                    let all = body.iter().chain(handlers).chain(orelse).chain(finalbody);
                    pending.extend(all.map(|s| (Item::Stmt(s), below)));
                }
                Stmt::FunctionDef(function) => pending.push((Item::Function(function), below)),
                Stmt::ClassDef(class) => {
                    pending.extend(class.methods.iter().map(|f| (Item::Function(f), below)))
                }
                Stmt::Raise { .. }
                | Stmt::Import { .. }
                | Stmt::Jump { .. }
                | Stmt::Other { .. } => {}
            },
            Item::Target(target) => match target {
                Target::Attr { value, .. } => pending.push((Item::Expr(value), below)),
                Target::Tuple(elements, _) => {
                    pending.extend(elements.iter().map(|t| (Item::Target(t), below)))
                }
                Target::Starred(inner, _) => pending.push((Item::Target(inner), below)),
                Target::Item { value, .. } => pending.push((Item::Expr(value), below)),
                Target::Name(..) | Target::Other(_) => {}
            },
            Item::Expr(expr) => {
                let children: Vec<&Expr> = match &expr.kind {
                    ExprKind::Attr { value, .. }
                    | ExprKind::Starred(value)
                    | ExprKind::Neg(value) => {
                        vec![value]
                    }
                    ExprKind::Tuple(elements) | ExprKind::List(elements) => {
                        elements.iter().collect()
                    }
                    ExprKind::Call(call) => std::iter::once(call.func())
                        .chain(call.args().iter().map(|a| a.value()))
                        .collect(),
                    ExprKind::Subscript(subscript) => std::iter::once(subscript.value())
                        .chain(subscript.index())
                        .collect(),
                    ExprKind::Slice(bounds) => [&bounds.lower, &bounds.upper, &bounds.step]
                        .into_iter()
                        .flatten()
                        .collect(),
                    ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
                        operands.iter().collect()
                    }
                    ExprKind::IfExp(parts) => parts.iter().collect(),
                    _ => Vec::new(),
                };
                pending.extend(children.into_iter().map(|e| (Item::Expr(e), below)));
            }
        }
    }
    deepest
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    on_small_stack(|| {
        let depth = 10_000;
        let cases = [
            format!("x = {}a{}\n", "(".repeat(depth), ")".repeat(depth)),
            format!("x = {}a{}\n", "[".repeat(depth), "]".repeat(depth)),
            format!("x = {}a{}\n", "f(".repeat(depth), ")".repeat(depth)),
            format!("x = {}a\n", "-".repeat(depth)),
            format!("x = {}a\n", "not ".repeat(depth)),
            format!("x = a{}\n", "[0]".repeat(depth)),
            format!("x = a{}\n", ".view(1)".repeat(depth)),
            format!("x = {}\n", vec!["a"; 100_000].join(" + ")),
            format!("x = {}\n", vec!["a"; 20_000].join(" ** ")),
            format!("x = {}\n", vec!["a"; 20_000].join(" if c else ")),
            format!("{}a = 1\n", "b, ".repeat(depth)),
            format!("{} = 1\n", "(".repeat(depth) + "a" + &")".repeat(depth)),
            (0..1_000)
                .map(|i| format!("{}if x:\n", " ".repeat(i)))
                .collect::<String>()
                + &" ".repeat(1_000)
                + "y = x.view(-1)\n",
            format!(
                "if x:\n  pass\n{}else:\n  pass\n",
                "elif x:\n  y = 1\n".repeat(depth)
            ),
            format!("match x:\n{}", "  case 1:\n    y = 1\n".repeat(depth)),
            format!("y = {}\n", vec!["a"; 100_000].join(" < ")),
            format!("y = {}\n", vec!["a"; 100_000].join(" and ")),
            format!("y = a{}\n", "[0:1:2]".repeat(depth)),
            format!(
                "def f():\n  return {}a{}\n",
                "{(".repeat(depth),
                ")}".repeat(depth)
            ),
        ];
        for source in cases {
            let outcome = parse_python(&source);
            let start = &source[..40.min(source.len())];
            let module = &outcome.module;
            assert!(
                !module.body.is_empty() || !module.functions.is_empty(),
                "{start}"
            );
            let depth = max_ir_depth(module);
            assert!(
                depth <= parser::MAX_DEPTH as usize + 2,
                "IR depth {depth} for {start:?}"
            );
        }
    });
}

/// Syntax skimmed beyond the depth limit is reported, once per file, so its loss is not
/// silent; chains that are folded instead (sums, comparisons, `elif`s, method chains)
/// are not errors.
#[test]
fn skimmed_nesting_is_one_error_and_folded_chains_none() {
    on_small_stack(|| {
        let depth = 10_000;
        for source in [
            format!(
                "x = {}a\ny = {}b\n",
                "-".repeat(depth),
                "not ".repeat(depth)
            ),
            format!("x = {}a\n", "lambda: ".repeat(depth)),
            format!("x = {}\n", vec!["a"; depth].join(" ** ")),
        ] {
            let errors = parse_python(&source).errors;
            let too_deep: Vec<_> = errors
                .iter()
                .filter(|e| {
                    e.message.starts_with(&format!(
                        "nested too deeply (more than {} levels",
                        parser::MAX_DEPTH
                    ))
                })
                .collect();
            assert_eq!(too_deep.len(), 1, "{:?} in {:?}", errors, &source[..30]);
        }
        for source in [
            format!("x = {}\n", vec!["a"; 100_000].join(" + ")),
            format!("y = {}\n", vec!["a"; 100_000].join(" < ")),
            format!("y = {}\n", vec!["a"; 100_000].join(" and ")),
            format!("x = a{}\n", ".view(1)".repeat(depth)),
            format!("x = a{}\n", "[0]".repeat(depth)),
            format!(
                "if x:\n  pass\n{}else:\n  pass\n",
                "elif x:\n  y = 1\n".repeat(depth)
            ),
            format!("x = {}a{}\n", "f(".repeat(60), ")".repeat(60)),
        ] {
            let errors = parse_python(&source).errors;
            assert!(errors.is_empty(), "{:?} in {:?}", errors, &source[..30]);
        }
    });
}

#[test]
fn deep_expressions_keep_their_outer_levels() {
    on_small_stack(|| {
        let source = format!("y = {}\n", vec!["a"; 100_000].join(" + "));
        let outcome = parse_python(&source);
        let Stmt::Assign { value, .. } = &outcome.module.body[0] else {
            panic!()
        };
        // The outermost additions are kept; the innermost part became opaque.
        let mut current = value;
        let mut levels = 0;
        while let ExprKind::BinOp {
            op: BinOp::Add,
            operands,
        } = &current.kind
        {
            current = &operands[0];
            levels += 1;
        }
        assert!(levels > 100 && levels < 1_000, "{levels}");
        assert!(matches!(current.kind, ExprKind::Unknown));
        assert_eq!(current.span.start, 4);
    });
}

#[test]
fn elif_chains_beyond_the_depth_limit_become_a_flat_sequence() {
    let clauses = 300;
    let mut source = "if x == 0:\n    y = 0\n".to_string();
    for i in 1..clauses {
        source += &format!("elif x == {i}:\n    y = {i}\n");
    }
    source += "else:\n    y = -1\n";
    let outcome = parse_python(&source);
    // Follow the nested chain down the `orelse`s.
    let mut statements = &outcome.module.body;
    let mut nested_tests = Vec::new();
    while let [Stmt::If { test, orelse, .. }] = statements.as_slice() {
        nested_tests.push(show(test));
        statements = orelse;
    }
    assert!(
        (50..clauses).contains(&nested_tests.len()),
        "{}",
        nested_tests.len()
    );
    assert_eq!(nested_tests[..2], ["(x == 0)", "(x == 1)"]);
    // The rest: one `If` per remaining clause, in order, then the `else` under an unknown test.
    let flat: Vec<String> = statements
        .iter()
        .map(|statement| match statement {
            Stmt::If {
                test, body, orelse, ..
            } if orelse.is_empty() => {
                format!("{} -> {}", show(test), show_block_inline(body))
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(nested_tests.len() + flat.len(), clauses + 1);
    let first_flat = nested_tests.len();
    assert_eq!(flat[0], format!("(x == {first_flat}) -> y = {first_flat}"));
    assert_eq!(flat[flat.len() - 1], "? -> y = -1");
}

fn show_block_inline(statements: &[Stmt]) -> String {
    let mut out = String::new();
    show_block(statements, 0, &mut out);
    out.trim_end().to_string()
}

#[test]
fn a_large_file_parses() {
    let file: String = NANOGPT_ATTENTION.repeat(2_000);
    let started = std::time::Instant::now();
    let outcome = parse_python(&file);
    assert_eq!(outcome.module.classes.len(), 2_000);
    assert!(outcome.errors.is_empty());
    // Generous bound (debug build, shared CPUs); the release build is ~100x faster.
    assert!(started.elapsed().as_secs() < 60);
}

/// Inputs where a careless parser is quadratic: one line holding many statements, huge
/// literals, many errors, soft keywords that need a look ahead.
#[test]
fn long_lines_and_many_errors_parse_in_linear_time() {
    let huge_string = format!("x = \"{}\"\n", "ab\\n".repeat(1_000_000));
    let cases = [
        "x = 1; ".repeat(200_000) + "\n",
        "match (x); ".repeat(100_000) + "\n",
        "type(x).y = 1; ".repeat(100_000) + "\n",
        "x = = 1\n".repeat(200_000),
        "f(\n".repeat(100_000),
        "x = [\n".to_string() + &"1,\n".repeat(300_000) + "]\n",
        huge_string,
        format!("x = f\"{}\"\n", "{a}{{b}}".repeat(200_000)),
        "with (a, b): pass\n".repeat(100_000),
    ];
    for source in cases {
        let started = std::time::Instant::now();
        let _ = parse_python(&source);
        let seconds = started.elapsed().as_secs_f64();
        // Milliseconds in a release build; generous for debug builds and busy machines.
        assert!(seconds < 20.0, "{seconds:.1} s for {:?}…", &source[..30]);
    }
}

#[test]
fn modern_syntax_parses_without_errors() {
    for source in [
        "def f[T = int, *Ts = *tuple[int], **P = [int]](x: T) -> T: return x\n",
        "class A[T: (int, str) = int]: pass\n",
        "type Alias[T] = list[T]\n",
        "try:\n    pass\nexcept A, B:\n    pass\n",
        "try:\n    pass\nexcept* (A, B) as e:\n    pass\n",
        "x = f\"{'a' if b else \"c\"} {x!r:>{width}} {y=} {f'{z}'}\"\n",
        "x = f\"{\n    a  # comment\n    + b\n}\"\n",
        "x = t\"{a} {b:{c}}\"\n",
        "y = x[*idx]\nz = x[a, *b]\n",
        "with (open(a) as f, open(b) as g,):\n    pass\n",
        "match x:\n    case {\"k\": [1, *rest]} | Point(x=0) if rest:\n        pass\n",
        "async def f():\n    async with a as b, c:\n        async for i in b:\n            await i\n",
        "lambda *a, b=1, **k: (yield)\n",
        "x = 1if y else 2\n",
        "print(f'{x:{\"\"}}')\n",
        "\u{feff}é = 1\r\nnäme = é\rz = 2\n",
        "if x:\n\tpass\n\x0c\nelse:\n\tpass\n",
        "a = \\\n    1\n",
    ] {
        let outcome = parse_python(source);
        assert_eq!(outcome.errors, vec![], "{source:?}");
    }
}

#[test]
fn random_bytes_and_junk_do_not_panic() {
    on_small_stack(|| {
        for source in [
            "\0\0\0",
            "def",
            "class (",
            "(((((",
            "x = [1, 2",
            "\"\"\"unterminated",
            "lambda: (yield)",
            "if:\n\telse:\n  elif",
            "@\n@\ndef",
            "x[::, ::, :::]",
            "f(**)",
            "match x:\n case:\n",
            "from . import",
            "\u{feff}x = 1\r\ny = 2\r",
            "class A:\n    x = (\n        1\n    def f(self):\n        pass\n",
            "class A:\n    x y\n        z\n    w\n",
            "class A:\n  def f(self):\n      pass\n    g\n",
            "f\"{\"",
            "f'{x:{'",
            "match x:\n  case [1, *a] | {**b} if c:\n        pass\n   case",
        ] {
            let _ = parse_python(source);
        }
    });
}

/// A set of real-code fragments mutated by the property tests below.
const MUTATION_SEEDS: &[&str] = &[
    NANOGPT_ATTENTION,
    "def f(x: Float[Tensor, \"b t c\"], *a, k=1, **kw):\n    return rearrange(x, 'b t c -> b c t')[..., None]\n",
    "with torch.no_grad() as g:\n    try:\n        y = x.view(-1)\n    except E as e:\n        raise\n",
    "match x:\n    case [a, *b] if (n := a) > 1:\n        pass\n",
    "x = f\"{a!r:>10}\" 'b' r'c'\nwhile (c := next(it)):\n    y += c.t()\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_does_not_panic(source in "\\PC{0,300}") {
        let outcome = parse_python(&source);
        for error in &outcome.errors {
            prop_assert!(error.span.start <= error.span.end);
            prop_assert!(error.span.end as usize <= source.len());
        }
    }

    #[test]
    fn arbitrary_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let source = String::from_utf8_lossy(&bytes);
        let _ = parse_python(&source);
    }

    #[test]
    fn mutated_sources_do_not_panic(
        seed in 0..MUTATION_SEEDS.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[()\\[\\]{}:,.=*\"'\\\\\n \tabx0-9#@]{1,3}"), 1..8),
    ) {
        let mut source = MUTATION_SEEDS[seed].to_string();
        for (position, action, text) in edits {
            let mut at = position.index(source.len() + 1);
            while !source.is_char_boundary(at) {
                at -= 1;
            }
            match action {
                // insert, delete a few bytes, replace, duplicate a line prefix
                0 => source.insert_str(at, &text),
                1 => {
                    let mut end = (at + text.len()).min(source.len());
                    while !source.is_char_boundary(end) {
                        end -= 1;
                    }
                    source.replace_range(at..end, "");
                }
                2 => {
                    let mut end = (at + 1).min(source.len());
                    while !source.is_char_boundary(end) {
                        end += 1;
                    }
                    source.replace_range(at..end, &text);
                }
                _ if source.len() < 20_000 => {
                    let prefix = source[..at].to_string();
                    source.push_str(&prefix);
                }
                _ => {}
            }
        }
        let outcome = parse_python(&source);
        for error in &outcome.errors {
            prop_assert!(error.span.end as usize <= source.len());
        }
    }
}
