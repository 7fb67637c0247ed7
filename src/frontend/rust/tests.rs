//! Tests of the Rust frontend as a whole: source text in, IR out.
//!
//! Most assertions compare a compact rendering of the IR (Python-like text that shows the
//! structure: every operator is parenthesised, unknown values print as `?`, statements
//! one per line, blocks indented) with what the lowering rules in the module docs say the
//! source must become.

use std::fmt::Write as _;

use super::*;
use crate::ir::{Expr, ExprKind, Function, Module, Stmt, Target};

// ----- rendering the IR -----

use super::super::ir_text::IrText;

const TEXT: IrText = IrText { arg_names: false };

fn show(expr: &Expr) -> String {
    TEXT.show(expr)
}

fn show_target(target: &Target) -> String {
    TEXT.show_target(target)
}

fn show_body(body: &[Stmt], indent: usize, out: &mut String) {
    let pad = "    ".repeat(indent);
    for statement in body {
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
            Stmt::Return { value, .. } => match value {
                Some(value) => writeln!(out, "{pad}return {}", show(value)).unwrap(),
                None => writeln!(out, "{pad}return").unwrap(),
            },
            Stmt::If {
                test, body, orelse, ..
            } => {
                writeln!(out, "{pad}if {}:", show(test)).unwrap();
                show_body(body, indent + 1, out);
                if !orelse.is_empty() {
                    writeln!(out, "{pad}else:").unwrap();
                    show_body(orelse, indent + 1, out);
                }
            }
            Stmt::Loop {
                target, iter, body, ..
            } => {
                let target = target
                    .as_deref()
                    .map(show_target)
                    .unwrap_or_else(|| "_".into());
                let iter = iter.as_deref().map(show).unwrap_or_else(|| "?".into());
                writeln!(out, "{pad}for {target} in {iter}:").unwrap();
                show_body(body, indent + 1, out);
            }
            Stmt::Assert { test, .. } => writeln!(out, "{pad}assert {}", show(test)).unwrap(),
            Stmt::Raise { .. } => writeln!(out, "{pad}raise").unwrap(),
            Stmt::Import { module, alias, .. } => writeln!(
                out,
                "{pad}import {module} as {}",
                alias.as_deref().unwrap_or("-")
            )
            .unwrap(),
            Stmt::FunctionDef(function) => {
                writeln!(out, "{pad}def {}:", function.name).unwrap();
                show_body(&function.body, indent + 1, out);
            }
            Stmt::Jump { .. } => writeln!(out, "{pad}jump").unwrap(),
            Stmt::Other { .. } => writeln!(out, "{pad}pass").unwrap(),
            other => writeln!(out, "{pad}{other:?}").unwrap(),
        }
    }
}

fn render(body: &[Stmt]) -> String {
    let mut out = String::new();
    show_body(body, 0, &mut out);
    out
}

// ----- helpers -----

fn parse_ok(source: &str) -> Module {
    let outcome = parse_rust(source);
    assert!(
        outcome.errors.is_empty(),
        "unexpected syntax errors: {:?}",
        outcome.errors
    );
    assert_eq!(outcome.module.language, ir::Language::Rust);
    outcome.module
}

/// The body of the only free function of `source`, rendered.
fn function_body(source: &str) -> String {
    let module = parse_ok(source);
    assert_eq!(module.functions.len(), 1, "expected one function");
    render(&module.functions[0].body)
}

fn method<'m>(module: &'m Module, class: &str, name: &str) -> &'m Function {
    let class = module
        .classes
        .iter()
        .find(|c| c.name == class)
        .unwrap_or_else(|| panic!("no class {class}"));
    class
        .methods
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no method {name}"))
}

/// Strip the common indentation of an expected rendering.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| format!("{}\n", &l[indent..]))
        .collect()
}

/// Every expression in a body, depth first (for span checks).
fn all_exprs(body: &[Stmt]) -> Vec<&Expr> {
    fn expr<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        out.push(e);
        match &e.kind {
            ExprKind::Attr { value, .. } | ExprKind::Starred(value) | ExprKind::Neg(value) => {
                expr(value, out)
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| expr(i, out))
            }
            ExprKind::Call(call) => {
                expr(call.func(), out);
                (call.args().iter()).for_each(|a| expr(a.value(), out));
            }
            ExprKind::Subscript(subscript) => {
                expr(subscript.value(), out);
                (subscript.index().iter()).for_each(|i| expr(i, out));
            }
            ExprKind::Slice(bounds) => {
                for part in [&bounds.lower, &bounds.upper, &bounds.step]
                    .into_iter()
                    .flatten()
                {
                    expr(part, out);
                }
            }
            ExprKind::BinOp { operands, .. } | ExprKind::Compare { operands, .. } => {
                operands.iter().for_each(|o| expr(o, out))
            }
            ExprKind::IfExp(parts) => parts.iter().for_each(|p| expr(p, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for statement in body {
        match statement {
            Stmt::Assign { value, .. } | Stmt::AugAssign { value, .. } => expr(value, &mut out),
            Stmt::Expr(value) => expr(value, &mut out),
            Stmt::Return {
                value: Some(value), ..
            } => expr(value, &mut out),
            Stmt::If {
                test, body, orelse, ..
            } => {
                expr(test, &mut out);
                out.extend(all_exprs(body));
                out.extend(all_exprs(orelse));
            }
            Stmt::Loop { iter, body, .. } => {
                if let Some(iter) = iter {
                    expr(iter, &mut out);
                }
                out.extend(all_exprs(body));
            }
            _ => {}
        }
    }
    out
}

// ----- a candle-transformers attention block -----

const ATTENTION: &str = r#"
use candle::{DType, Device, Module, Result, Tensor, D};
use candle_nn::{linear_no_bias as linear, Linear, VarBuilder};

#[derive(Debug, Clone)]
struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    num_heads: usize,
    head_dim: usize,
}

impl Attention {
    fn new(cfg: &Config, vb: VarBuilder) -> Result<Self> {
        let head_dim = cfg.hidden_size / cfg.num_attention_heads;
        let q_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("q_proj"))?;
        let k_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("k_proj"))?;
        let v_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("v_proj"))?;
        let o_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("o_proj"))?;
        Ok(Self {
            q_proj,
            k_proj,
            v_proj,
            o_proj,
            num_heads: cfg.num_attention_heads,
            head_dim,
        })
    }

    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let (b_sz, q_len, _) = xs.dims3()?;
        let q = self.q_proj.forward(xs)?.reshape((b_sz, q_len, self.num_heads, self.head_dim))?.transpose(1, 2)?;
        let k = self.k_proj.forward(xs)?.reshape((b_sz, q_len, self.num_heads, self.head_dim))?.transpose(1, 2)?;
        let v = self.v_proj.forward(xs)?.reshape((b_sz, q_len, self.num_heads, self.head_dim))?.transpose(1, 2)?;
        let scale = 1f64 / f64::sqrt(self.head_dim as f64);
        let attn = (q.matmul(&k.t()?)? * scale)?;
        let attn = candle_nn::ops::softmax_last_dim(&attn)?;
        attn.matmul(&v)?.transpose(1, 2)?.reshape((b_sz, q_len, ()))?.apply(&self.o_proj)
    }
}
"#;

#[test]
fn attention_forward_lowers_to_the_ir_conventions() {
    let module = parse_ok(ATTENTION);
    let forward = method(&module, "Attention", "forward");
    assert!(forward.is_method && !forward.is_constructor);
    assert_eq!(
        forward
            .params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["xs"]
    );
    assert_eq!(
        render(&forward.body),
        dedent(
            r#"
            (b_sz, q_len, _) = xs.dims3()
            q = self.q_proj.forward(xs).reshape((b_sz, q_len, self.num_heads, self.head_dim)).transpose(1, 2)
            k = self.k_proj.forward(xs).reshape((b_sz, q_len, self.num_heads, self.head_dim)).transpose(1, 2)
            v = self.v_proj.forward(xs).reshape((b_sz, q_len, self.num_heads, self.head_dim)).transpose(1, 2)
            scale = (1.0 / f64.sqrt((self.head_dim * 1.0)))
            attn = (q.matmul(k.t()) * scale)
            attn = candle_nn.ops.softmax_last_dim(attn)
            return attn.matmul(v).transpose(1, 2).reshape((b_sz, q_len, ())).apply(self.o_proj)
            "#
        )
    );
}

#[test]
fn constructor_struct_literal_becomes_self_assignments() {
    let module = parse_ok(ATTENTION);
    let new = method(&module, "Attention", "new");
    assert!(new.is_constructor && !new.is_method);
    assert_eq!(
        new.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["cfg", "vb"]
    );
    assert_eq!(
        render(&new.body),
        dedent(
            r#"
            head_dim = (cfg.hidden_size // cfg.num_attention_heads)
            q_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("q_proj"))
            k_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("k_proj"))
            v_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("v_proj"))
            o_proj = linear(cfg.hidden_size, cfg.hidden_size, vb.pp("o_proj"))
            self.q_proj = q_proj
            self.k_proj = k_proj
            self.v_proj = v_proj
            self.o_proj = o_proj
            self.num_heads = cfg.num_attention_heads
            self.head_dim = head_dim
            return
            "#
        )
    );
}

#[test]
fn imports_flatten_use_trees() {
    let module = parse_ok(ATTENTION);
    assert_eq!(
        render(&module.body),
        dedent(
            r#"
            import candle.DType as DType
            import candle.Device as Device
            import candle.Module as Module
            import candle.Result as Result
            import candle.Tensor as Tensor
            import candle.D as D
            import candle_nn.linear_no_bias as linear
            import candle_nn.Linear as Linear
            import candle_nn.VarBuilder as VarBuilder
            "#
        )
    );
    let more = parse_ok(
        "extern crate candle_core as candle;\nuse candle_nn::ops::{self, softmax_last_dim};\nuse candle_nn::prelude::*;\nuse std::io::Write as _;",
    );
    assert_eq!(
        render(&more.body),
        dedent(
            r#"
            import candle_core as candle
            import candle_nn.ops as ops
            import candle_nn.ops.softmax_last_dim as softmax_last_dim
            pass
            "#
        )
    );
}

#[test]
fn spans_are_byte_offsets_of_the_original_text() {
    // Multi-byte characters before the code (proc-macro2 counts characters) and a BOM.
    let source = format!("\u{feff}// Aufmerksamkeit für Köpfe — 注意\n{ATTENTION}");
    let module = parse_ok(&source);
    let forward = method(&module, "Attention", "forward");
    let text = |span: ir::Span| &source[span.range()];
    assert_eq!(text(forward.name_span), "forward");
    assert!(text(forward.span).starts_with("fn forward(&self, xs: &Tensor)"));
    assert_eq!(text(forward.params[0].span), "xs: &Tensor");
    let Stmt::Assign { value, span, .. } = &forward.body[1] else {
        panic!("expected the `q` assignment");
    };
    assert!(text(*span).starts_with("let q = self.q_proj") && text(*span).ends_with(';'));
    // `?` is erased: the call's span ends at its closing parenthesis.
    assert_eq!(
        text(value.span),
        "self.q_proj.forward(xs)?.reshape((b_sz, q_len, self.num_heads, self.head_dim))?.transpose(1, 2)"
    );
    let Some((func, args)) = value.kind.as_call() else {
        panic!("expected a call");
    };
    assert_eq!(text(args[0].value().span), "1");
    let ExprKind::Attr {
        value: receiver, ..
    } = &func.kind
    else {
        panic!("expected a method");
    };
    assert_eq!(
        text(receiver.span),
        "self.q_proj.forward(xs)?.reshape((b_sz, q_len, self.num_heads, self.head_dim))"
    );
    // Every span of every expression lies on a char boundary inside the file.
    for function in module.classes.iter().flat_map(|c| c.methods.iter()) {
        for e in all_exprs(&function.body) {
            assert!(e.span.start <= e.span.end && (e.span.end as usize) <= source.len());
            assert!(
                source.is_char_boundary(e.span.start as usize)
                    && source.is_char_boundary(e.span.end as usize)
            );
        }
    }
}

#[test]
fn candle_reshape_hole_and_shape_forms() {
    let body = function_body(
        r#"
        fn f(xs: &Tensor, b: usize, c: usize) -> Result<Tensor> {
            let a = xs.reshape((b, (), c))?;
            let a = a.reshape(((),))?;
            let a = a.reshape(&[b, c])?;
            let a = a.reshape(vec![b, c])?;
            let a = a.reshape(())?;
            let n = a.dim(D::Minus1)? * a.dim(D::Minus(2))?;
            let a = a.transpose(D::Minus2, D::Minus1)?;
            let t = a.narrow(2, 0, 2usize)?;
            Ok(t.i((.., 0..2, 1..=3, ..c, 4..))?)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            a = xs.reshape((b, (), c))
            a = a.reshape(((),))
            a = a.reshape([b, c])
            a = a.reshape([b, c])
            a = a.reshape(())
            n = (a.dim(D.Minus1) * a.dim(D.Minus(2)))
            a = a.transpose(D.Minus2, D.Minus1)
            t = a.narrow(2, 0, 2)
            return t.i((:, 0:2, 1:(3 + 1), :c, 4:))
            "#
        )
    );
}

#[test]
fn tch_style_code() {
    let body = function_body(
        r#"
        fn f(xs: &Tensor) -> Tensor {
            let (b, t, c) = xs.size3().unwrap();
            let y = xs.view([b, t, 4, c / 4]).transpose(1, 2);
            let y = y.contiguous().view([b, -1]);
            let z = xs.f_reshape(&[-1, 2i64]).expect("reshape");
            y.matmul(&z.tr()) + 1
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            (b, t, c) = xs.size3()
            y = xs.view([b, t, 4, (c // 4)]).transpose(1, 2)
            y = y.contiguous().view([b, -1])
            z = xs.f_reshape([-1, 2])
            return (y.matmul(z.tr()) + 1)
            "#
        )
    );
}

/// Also: a cast to a float is a float (`* 1.0`), and one back to an integer is `int(…)`;
/// a cast between integers is the same size.
#[test]
fn integer_division_is_floor_division_unless_visibly_float() {
    let body = function_body(
        r#"
        fn f(c: usize, h: usize) {
            let head = c / h;
            let scale = 1.0 / (head as f64).sqrt();
            let half = (head as f32) / 2.0;
            let r = c % h;
            let neg = -1;
            let k = -(c as i64);
            let ok = !(c == 0) && h >= 1 || h != 2;
            let rot = (head as f64 * 0.5) as usize;
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            head = (c // h)
            scale = (1.0 / (head * 1.0).sqrt())
            half = ((head * 1.0) / 2.0)
            r = (c % h)
            neg = -1
            k = -c
            ok = (((not (c == 0)) and (h >= 1)) or (h != 2))
            rot = int(((head * 1.0) * 0.5))
            "#
        )
    );
}

/// A `match` on a field the file sets to `None` tests it, so that the analysis can name
/// the path; a field only the constructor's argument fills keeps an unknown test.
#[test]
fn option_matches_on_a_cache_field_are_tests() {
    let module = parse_ok(
        r#"
        impl Attention {
            fn new(rope: Option<Rope>) -> Self {
                Self { kv_cache: None, rope }
            }
            fn forward(&mut self, k: &Tensor) -> Result<Tensor> {
                let k = match &self.kv_cache {
                    None => k.clone(),
                    Some((prev, _)) => Tensor::cat(&[prev, k], 2)?,
                };
                let k = match &self.rope {
                    Some(rope) => rope.apply(&k)?,
                    None => k,
                };
                Ok(k)
            }
        }
        "#,
    );
    assert_eq!(
        render(&method(&module, "Attention", "forward").body),
        dedent(
            r#"
            if (self.kv_cache is None):
                $t1 = k
            else:
                (prev, _) = self.kv_cache
                $t1 = Tensor.cat([prev, k], 2)
            k = $t1
            if ?:
                rope = self.rope
                $t2 = rope.apply(k)
            else:
                $t2 = k
            k = $t2
            return k
            "#
        )
    );
}

#[test]
fn if_else_and_match_are_sound_branches() {
    let body = function_body(
        r#"
        fn f(xs: &Tensor, mask: Option<&Tensor>, mode: Mode) -> Result<Tensor> {
            let xs = if let Some(mask) = mask {
                let xs = xs.broadcast_add(mask)?;
                xs.t()?
            } else {
                xs.clone()
            };
            let ys = match mode {
                Mode::A => xs.transpose(0, 1)?,
                Mode::B(k) if k > 1 => xs.narrow(0, 0, k)?,
                _ => xs,
            };
            let zs = if ys.rank() == 2 { ys.t()? } else { ys };
            if zs.rank() > 3 {
                bail!("rank")
            } else if zs.rank() == 3 {
                return Ok(zs);
            }
            Ok(zs.contiguous()?)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            if (mask is not None):
                mask#2 = mask
                xs#3 = xs.broadcast_add(mask#2)
                $t1 = xs#3.t()
            else:
                $t1 = xs
            xs = $t1
            if ?:
                $t4 = xs.transpose(0, 1)
            else:
                if ?:
                    k = ?
                    (k > 1)
                    $t4 = xs.narrow(0, 0, k)
                else:
                    $t4 = xs
            ys = $t4
            zs = (ys.t() if (ys.rank() == 2) else ys)
            if (zs.rank() > 3):
                raise
            else:
                if (zs.rank() == 3):
                    return zs
            return zs.contiguous()
            "#
        )
    );
}

#[test]
fn shadowing_in_inner_blocks_does_not_clobber_outer_bindings() {
    let body = function_body(
        r#"
        fn f(a: &Tensor) -> Result<Tensor> {
            let x = a.t()?;
            {
                let x = a.contiguous()?;
                let x = x.reshape(6)?;
                x.dims();
            }
            for i in 0..3 {
                let x = x.narrow(0, i, 1)?;
            }
            let x = x.reshape(6)?;
            Ok(x)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            x = a.t()
            x#1 = a.contiguous()
            x#1 = x#1.reshape(6)
            x#1.dims()
            for i in 0:3:
                x#2 = x.narrow(0, i, 1)
            x = x.reshape(6)
            return x
            "#
        )
    );
}

#[test]
fn loops_and_mutation() {
    let body = function_body(
        r#"
        fn f(&self, xs: &Tensor) -> Result<Tensor> {
            let mut xs = xs.clone();
            for (i, layer) in self.layers.iter().enumerate() {
                xs = layer.forward(&xs)?;
                if i == 2 { break; }
            }
            let mut n = 0;
            while n < 4 { n += 1; }
            while let Some(x) = it.next() { continue; }
            loop { xs = xs.t()?; break }
            Ok(xs)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            xs = xs
            for layer in self.layers:
                i = ?
                xs = layer.forward(xs)
                if (i == 2):
                    jump
            n = 0
            (n < 4)
            for _ in ?:
                n Add= 1
            for _ in ?:
                x = it.next()
                jump
            for _ in ?:
                xs = xs.t()
                jump
            return xs
            "#
        )
    );
}

#[test]
fn statement_like_expressions_inside_calls_are_hoisted() {
    let body = function_body(
        r#"
        fn f(x: &Tensor, c: bool) -> Result<Tensor> {
            let y = Tensor::cat(&[&x, &match c { true => x.t()?, false => x.clone() }], 1)?;
            let z = (if c { let t = x.t()?; t } else { x.clone() }).contiguous()?;
            Ok(y)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            if ?:
                $t1 = x.t()
            else:
                $t1 = x
            y = Tensor.cat([x, $t1], 1)
            if c:
                t = x.t()
                $t2 = t
            else:
                $t2 = x
            z = $t2.contiguous()
            return y
            "#
        )
    );
}

#[test]
fn let_else_patterns_and_parameters() {
    let module = parse_ok(
        r#"
        fn f((b, t): (usize, usize), _: usize, mut xs: Tensor, cfg: &Config) -> Result<()> {
            let [h, w] = cfg.dims[..] else { bail!("need 2") };
            let Some(m) = cfg.mask.as_ref() else { return Ok(()) };
            let Config { heads, .. } = cfg;
            let (first, .., last) = xs.dims4()?;
            let _ = xs.t()?;
            let later;
            later = xs.t()?;
            let d = xs.dims()[xs.rank() - 1];
            let e = cfg.pair.0;
            Ok(())
        }
        "#,
    );
    let f = &module.functions[0];
    assert_eq!(
        f.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["$arg0", "_", "xs", "cfg"]
    );
    assert!(!f.is_method);
    assert_eq!(
        render(&f.body),
        dedent(
            r#"
            (b, t) = $arg0
            if ?:
            else:
                raise
            (h, w) = cfg.dims[:]
            if ?:
            else:
                return ()
            m = cfg.mask
            cfg
            heads = ?
            (first, *_, last) = xs.dims4()
            xs.t()
            later = ?
            later = xs.t()
            d = xs.dims()[(xs.rank() - 1)]
            e = cfg.pair[0]
            return ()
            "#
        )
    );
}

#[test]
fn macros() {
    let body = function_body(
        r#"
        fn f(xs: &Tensor, c: usize, h: usize) -> Result<Tensor> {
            assert_eq!(c % h, 0, "heads must divide");
            debug_assert!(h > 0);
            println!("{:?}", xs.t()?.reshape(6)?);
            let s = vec![c / h, h];
            let r = vec![0usize; 4];
            let m = some_macro!(xs);
            if c == 0 { unreachable!() }
            candle::bail!("oops {}", c)
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            assert ((c % h) == 0)
            assert (h > 0)
            xs.t().reshape(6)
            s = [(c // h), h]
            r = ?
            m = ?
            if (c == 0):
                raise
            raise
            "#
        )
    );
}

#[test]
fn impl_blocks_merge_and_trait_impls_are_methods() {
    let module = parse_ok(
        r#"
        struct Mlp { fc1: Linear, fc2: Linear }
        impl Mlp {
            pub fn load(vb: VarBuilder, cfg: &Config) -> candle::Result<Self> {
                let fc1 = candle_nn::linear(cfg.hidden, cfg.inter, vb.pp("fc1"))?;
                let mut this = Mlp { fc1, fc2: Linear::new(w, None) };
                this.fc2 = candle_nn::linear(cfg.inter, cfg.hidden, vb.pp("fc2"))?;
                Ok(this)
            }
            fn helper(x: usize) -> usize { x * 2 }
            fn from_parts(a: Linear, b: Linear) -> Option<Self> { Some(Self { fc1: a, fc2: b }) }
        }
        impl candle::Module for Mlp {
            fn forward(&self, xs: &Tensor) -> candle::Result<Tensor> {
                xs.apply(&self.fc1)?.gelu()?.apply(&self.fc2)
            }
        }
        impl<B: Backend> Other<B> {
            fn run(self: Box<Self>) {}
        }
        "#,
    );
    assert_eq!(
        module
            .classes
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["Mlp", "Other"]
    );
    let mlp = &module.classes[0];
    assert_eq!(mlp.bases, ["candle.Module"]);
    let names: Vec<(&str, bool, bool)> = mlp
        .methods
        .iter()
        .map(|m| (m.name.as_str(), m.is_method, m.is_constructor))
        .collect();
    assert_eq!(
        names,
        [
            ("load", false, true),
            ("helper", false, false),
            ("from_parts", false, true),
            ("forward", true, false)
        ]
    );
    assert_eq!(
        render(&mlp.methods[0].body),
        dedent(
            r#"
            fc1 = candle_nn.linear(cfg.hidden, cfg.inter, vb.pp("fc1"))
            self.fc1 = fc1
            self.fc2 = Linear.new(w, None)
            self.fc2 = candle_nn.linear(cfg.inter, cfg.hidden, vb.pp("fc2"))
            return self
            "#
        )
    );
    assert_eq!(
        render(&mlp.methods[2].body),
        dedent(
            r#"
            self.fc1 = a
            self.fc2 = b
            return
            "#
        )
    );
    let run = &module.classes[1].methods[0];
    assert!(run.is_method && run.params.is_empty());
}

#[test]
fn nested_items_consts_and_modules() {
    let module = parse_ok(
        r#"
        const HEADS: usize = 8;
        mod inner {
            pub fn g(x: &Tensor) -> Result<Tensor> { x.t() }
        }
        fn f(x: &Tensor) -> Result<Tensor> {
            use candle_nn::ops::softmax_last_dim as softmax;
            const DIM: usize = HEADS * 2;
            fn local(y: &Tensor) -> Result<Tensor> { y.contiguous() }
            softmax(&local(x)?)
        }
        "#,
    );
    assert_eq!(render(&module.body), "HEADS = 8\n");
    assert_eq!(
        module
            .functions
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["g", "f"]
    );
    assert_eq!(
        render(&module.functions[1].body),
        dedent(
            r#"
            import candle_nn.ops.softmax_last_dim as softmax
            DIM = (HEADS * 2)
            def local:
                return y.contiguous()
            return softmax(local(x))
            "#
        )
    );
}

#[test]
fn a_struct_literal_outside_its_constructor_is_a_keyword_call() {
    // The rendering shows argument values only: `Linear(weight, s)` is the call with the
    // keywords `weight=` and `span=` (the fields the object gets).
    let body = function_body(
        r#"
        fn f(weight: Tensor) {
            let a = Linear { weight, span: s };
            let b = crate::Linear { weight };
            let c = Linear { weight, ..base };
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            a = Linear(weight, s)
            b = ?
            c = ?
            "#
        )
    );
}

#[test]
fn expressions_the_ir_does_not_model_are_unknown() {
    let body = function_body(
        r#"
        fn f(xs: &Tensor) {
            let a = xs.apply(|x| x.t());
            let c = [0f32; 16];
            let d = async { 1 };
            let e = <Tensor as Module>::forward(&m, xs);
            let g = 'x';
            let h = 0x10;
            let i = 1_000u64;
            let j = 99999999999999999999u128;
        }
        "#,
    );
    assert_eq!(
        body,
        dedent(
            r#"
            a = xs.apply(?)
            c = ?
            d = ?
            e = ?(m, xs)
            g = ?
            h = 16
            i = 1000
            j = ?
            "#
        )
    );
}

// ----- syntax errors and robustness -----

#[test]
fn syntax_errors_give_an_empty_module_and_the_error_span() {
    let source = "fn f(x: &Tensor) -> Tensor {\n    let y = x.t()?\n    y\n}\n";
    let outcome = parse_rust(source);
    assert!(outcome.module.functions.is_empty() && outcome.module.classes.is_empty());
    assert_eq!(outcome.errors.len(), 1);
    let error = &outcome.errors[0];
    assert_eq!(error.message, "expected `;`");
    // syn stops at the token where the `;` was expected: the `y` on line 3.
    assert_eq!(&source[error.span.range()], "y");

    let unclosed = parse_rust("fn f() {");
    assert_eq!(unclosed.errors.len(), 1);
    assert!(unclosed.errors[0].span.end as usize <= "fn f() {".len());
}

#[test]
fn shebang_lines_are_skipped_like_syn_does() {
    let source = "#!/usr/bin/env run-cargo-script\nfn f(x: &Tensor) -> Result<Tensor> { x.t() }\n";
    let module = parse_ok(source);
    assert_eq!(&source[module.functions[0].name_span.range()], "f");
    // An inner attribute is not a shebang.
    let attribute = "#![allow(dead_code)]\nfn g() {}\n";
    assert_eq!(
        &attribute[parse_ok(attribute).functions[0].name_span.range()],
        "g"
    );
}

#[test]
fn deep_nesting_is_refused_without_overflowing() {
    let deep = format!(
        "fn f() {{ let x = {}1{}; }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let outcome = parse_rust(&deep);
    assert!(outcome.module.functions.is_empty());
    assert!(
        outcome.errors[0].message.starts_with("nesting too deep"),
        "{:?}",
        outcome.errors
    );

    // Deep but under the bracket limit: parsed, on the parser thread's stack.
    let nested = format!(
        "fn f() {{ let x = {}1{}; }}",
        "(".repeat(250),
        ")".repeat(250)
    );
    let module = parse_ok(&nested);
    assert_eq!(render(&module.functions[0].body), "x = 1\n");
}

#[test]
fn long_chains_at_the_limits_parse_or_are_refused_never_crash() {
    let just_under = nesting::MAX_EXPRESSION_DEPTH - 10;
    let shapes = [
        |n: usize| format!("fn f() {{ let x = {}1; }}", "-".repeat(n)),
        |n: usize| format!("fn f() {{ let x = {}a; }}", "&".repeat(n)),
        |n: usize| format!("fn f() {{ let x = a{}; }}", ".t()?".repeat(n / 4)),
        |n: usize| format!("fn f() {{ let x = a{}; }}", " + a".repeat(n)),
        |n: usize| format!("fn f() {{ let x = a{}; }}", " as usize".repeat(n)),
        |n: usize| format!("fn f() {{ {} 1 }}", "return ".repeat(n)),
        |n: usize| format!("fn f() {{ {}{{}} }}", "if a {} else ".repeat(n)),
        |n: usize| format!("fn f() -> {}u8 {{ 0 }}", "Option<".repeat(n / 2)),
        |n: usize| format!("fn f() {{ let x = g{}; }}", "()".repeat(n)),
    ];
    for shape in shapes {
        // Under the limit: syn parses it (or reports a syntax error) without overflowing.
        let _ = parse_rust(&shape(just_under));
        // Over the limit: refused before syn runs.
        let refused = parse_rust(&shape(nesting::MAX_EXPRESSION_DEPTH * 3));
        assert_eq!(refused.errors.len(), 1);
        assert!(
            refused.errors[0].message.contains("too deep"),
            "{:?}",
            refused.errors
        );
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    use proptest::prelude::*;
    proptest!(ProptestConfig::with_cases(200), |(text in "[ -~\\n]{0,200}")| {
        let _ = parse_rust(&text);
    });
    proptest!(ProptestConfig::with_cases(100), |(pieces in proptest::collection::vec(
        prop_oneof![
            Just("fn f(x: &Tensor) -> Result<Tensor> {"), Just("}"), Just("("), Just(")"),
            Just("let y = x.t()?;"), Just("match a { _ => b }"), Just("if let Some(z) = m {"),
            Just("Ok(Self { a, b: c })"), Just("x.reshape((b, (), c))?"), Just(";"), Just("impl A {"),
        ],
        0..30,
    ))| {
        let _ = parse_rust(&pieces.concat());
    });
}

#[test]
fn empty_and_item_free_files() {
    assert!(parse_ok("").functions.is_empty());
    assert!(parse_ok("// only a comment\n").classes.is_empty());
    assert!(parse_ok("#![allow(unused)]\nstruct S;").classes.is_empty());
}

// ----- the Rust fixtures -----

/// Every `fixtures/rust/*.rs` file parses, and every line with an `// expect:` (or
/// `// expect-on-path:`) marker holds
/// a call that starts on that line (a finding is reported at the start of its call's span,
/// so a marker on any other line could never match).
#[test]
fn fixtures_parse_and_marked_lines_hold_calls() {
    let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("rust");
    let mut files = 0;
    for entry in std::fs::read_dir(&directory).expect("fixtures/rust exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        files += 1;
        let source = std::fs::read_to_string(&path).expect("readable fixture");
        let module = parse_ok(&source);
        let functions = module
            .functions
            .iter()
            .chain(module.classes.iter().flat_map(|c| c.methods.iter()));
        let call_lines: std::collections::BTreeSet<usize> = functions
            .flat_map(|f| all_exprs(&f.body))
            .filter(|e| matches!(e.kind, ExprKind::Call { .. }))
            .map(|e| source[..e.span.start as usize].matches('\n').count() + 1)
            .collect();
        let marked: Vec<usize> = source
            .lines()
            .enumerate()
            .filter(|(_, line)| {
                line.contains("// expect: SL") || line.contains("// expect-on-path: SL")
            })
            .map(|(i, _)| i + 1)
            .collect();
        assert!(
            !marked.is_empty(),
            "{} has no expect marker",
            path.display()
        );
        for line in marked {
            assert!(
                call_lines.contains(&line),
                "{}:{line}: no call starts on the marked line",
                path.display()
            );
        }
    }
    assert!(files >= 4, "found {files} fixtures");
}
