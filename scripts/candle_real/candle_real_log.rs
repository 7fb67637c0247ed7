//! stridelint's candle truth harness (scripts/candle_real/): a logger compiled into a patched
//! candle-core 0.11.1 under target/candle_real/vendor/ (never committed, never published).
//!
//! The patches rename the public `Tensor` methods of the contract ops (`matmul` ->
//! `matmul__`, ...) and this file puts `#[track_caller]` wrappers with the old names back.
//! Each wrapper opens a [`Frame`]: the outermost frame of a call (depth 0) fixes the *site*,
//! the model-code location that reached candle (`Location::caller()`, passed through the
//! `#[track_caller]` module `forward`s the patches mark in candle-nn and
//! candle-transformers' `with_tracing`). Every logged op writes one JSON line to the file
//! set with [`set_output`] (or named by env `CANDLE_REAL_LOG`): the site, the op, its depth
//! under the site's outermost op, each operand's shape / stride / start offset, and a
//! verdict per backend:
//!   cpu   candle's own result in this (default, CPU) build: "ok" or "err";
//!   mkl   the CPU kernels (so cpu's verdict) except matmul, which is `ab_skip` (candle's own
//!         function) and the mkl/accelerate matrix test (the generated ports below);
//!   cuda  `gemm_config`'s tests (generated port) for matmul, else the contiguity candle's cuda
//!         backend checks (candle's own `Layout::is_contiguous`, the operands of rules/candle.toml);
//!   metal `call_mlx_gemm`'s matrix test (generated port; "silent" when the batch dims do not
//!         merge: MLX reads one batch stride and computes wrong values, no error), else the
//!         contiguity the metal backend checks.
//! The ports are generated from candle's sources at setup time (make_patches.py `--ports`,
//! candle_real_ports.rs, never committed), so they test candle's condition lines byte for
//! byte; `candle-real-runner selftest` checks that against the vendored sources and checks
//! the ports against CPU candle.
//!
//! `contiguous` at depth 0 whose site equals the skip site ([`set_skip`] or env
//! `CANDLE_REAL_SKIP=file:line:col`, file relative to candle-transformers' src/) returns its
//! input unchanged: the `.contiguous()` deleted, without rebuilding.

use crate::{Layout, Result, Tensor};
use std::cell::Cell;
use std::io::Write;
use std::panic::Location;
use std::sync::Mutex;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static SITE: Cell<Option<(&'static Location<'static>, &'static str)>> = const { Cell::new(None) };
}

static OUT: Mutex<Option<std::fs::File>> = Mutex::new(None);
static SKIP: Mutex<Option<String>> = Mutex::new(None);
static ENV_READ: std::sync::Once = std::sync::Once::new();

fn init_from_env() {
    ENV_READ.call_once(|| {
        if let Ok(p) = std::env::var("CANDLE_REAL_LOG") {
            if let Ok(f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
            {
                *OUT.lock().unwrap() = Some(f);
            }
        }
        if let Ok(s) = std::env::var("CANDLE_REAL_SKIP") {
            *SKIP.lock().unwrap() = Some(s);
        }
    });
}

/// Log to `path` (appending), or stop logging with `None`.
pub fn set_output(path: Option<&std::path::Path>) {
    init_from_env();
    *OUT.lock().unwrap() = path.map(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .expect("log file")
    });
}

/// The `.contiguous()` site to skip (`file:line:col`), or none.
pub fn set_skip(site: Option<String>) {
    init_from_env();
    *SKIP.lock().unwrap() = site;
}

thread_local! {
    static RNG: std::cell::RefCell<Option<rand::rngs::StdRng>> = const { std::cell::RefCell::new(None) };
}

/// Seed the CPU rng (`rand_uniform` / `rand_normal`; the patch routes them here): the runner
/// seeds it per model, so the unmodified and the mutated runs see the same weights.
pub fn seed(s: u64) {
    use rand::SeedableRng;
    RNG.with(|r| *r.borrow_mut() = Some(rand::rngs::StdRng::seed_from_u64(s)));
}

/// A generator for one random tensor, drawn from the seeded sequence.
pub fn rng() -> rand::rngs::StdRng {
    use rand::{RngCore, SeedableRng};
    RNG.with(|r| {
        let mut r = r.borrow_mut();
        let g = r.get_or_insert_with(|| rand::rngs::StdRng::seed_from_u64(0));
        rand::rngs::StdRng::seed_from_u64(g.next_u64())
    })
}

/// Forget any frame left open by a panic (the runner calls it before each model).
pub fn reset() {
    DEPTH.with(|d| d.set(0));
    SITE.with(|s| s.set(None));
}

fn enabled() -> bool {
    init_from_env();
    OUT.lock().unwrap().is_some()
}

/// A file path as logged: relative to candle-transformers' (or candle-nn's) src/ when the
/// call comes from there.
pub fn short_file(file: &str) -> String {
    let f = file.replace('\\', "/");
    for (marker, prefix) in [
        ("candle-transformers/src/", ""),
        ("candle-transformers-0.11.1/src/", ""),
        ("candle-nn/src/", "@candle-nn/"),
        ("candle-nn-0.11.1/src/", "@candle-nn/"),
        ("candle-core/src/", "@candle-core/"),
        ("candle-core-0.11.1/src/", "@candle-core/"),
    ] {
        if let Some(i) = f.find(marker) {
            return format!("{prefix}{}", &f[i + marker.len()..]);
        }
    }
    if f.starts_with("src/") || f.starts_with("/") {
        return format!("@{f}");
    }
    format!("@{f}")
}

fn site_string(loc: &Location<'_>) -> String {
    format!("{}:{}:{}", short_file(loc.file()), loc.line(), loc.column())
}

/// One logged op on the stack of the current call.
pub struct Frame {
    depth: usize,
    loc: &'static Location<'static>,
}

impl Frame {
    #[track_caller]
    pub fn enter(op: &'static str) -> Frame {
        let loc = Location::caller();
        let depth = DEPTH.with(|d| {
            let v = d.get();
            d.set(v + 1);
            v
        });
        if depth == 0 {
            SITE.with(|s| s.set(Some((loc, op))));
        }
        Frame { depth, loc }
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// This frame's own caller (the site when depth is 0).
    pub fn own_site(&self) -> String {
        site_string(self.loc)
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(self.depth));
        if self.depth == 0 {
            SITE.with(|s| s.set(None));
        }
    }
}

fn json_usizes(v: &[usize]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A backend's verdict.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum V {
    Ok,
    Err,
    /// no error, wrong values (metal matmul with batch dims that do not merge)
    Silent,
}

impl V {
    fn as_str(self) -> &'static str {
        match self {
            V::Ok => "ok",
            V::Err => "err",
            V::Silent => "silent",
        }
    }
    fn of(ok: bool) -> V {
        if ok {
            V::Ok
        } else {
            V::Err
        }
    }
}

/// Writes one record. `verdicts` are mkl, cuda, metal; cpu comes from `cpu_err`.
/// scatter / scatter_add / index_add: every backend checks the ids and the source (the
/// destination is a fresh copy of `input`).
fn log_indexed_write(
    f: &Frame,
    op: &str,
    input: &Tensor,
    indexes: &Tensor,
    source: &Tensor,
    r: &Result<Tensor>,
) {
    if !enabled() {
        return;
    }
    let ops = [indexes.layout(), source.layout()];
    let v = contig_verdicts(cpu_v(r), &ops, &ops);
    let operands = [
        ("input", input.layout()),
        ("index", indexes.layout()),
        ("source", source.layout()),
    ];
    write(f, op, &operands, err_string(r), v, None, "");
}

fn write(
    frame: &Frame,
    op: &str,
    operands: &[(&str, &Layout)],
    cpu_err: Option<String>,
    others: [V; 3],
    copied: Option<bool>,
    extra: &str,
) {
    let (site, outer) = SITE
        .with(|s| s.get())
        .map(|(l, o)| (site_string(l), o))
        .unwrap_or_default();
    let mut line = String::with_capacity(256);
    line.push_str(&format!(
        "{{\"site\":{},\"outer\":{},\"depth\":{},\"op\":{},\"own\":{},\"args\":[",
        json_str(&site),
        json_str(outer),
        frame.depth,
        json_str(op),
        json_str(&frame.own_site())
    ));
    for (i, (name, l)) in operands.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&format!(
            "{{\"n\":{},\"shape\":{},\"stride\":{},\"off\":{},\"contig\":{}}}",
            json_str(name),
            json_usizes(l.dims()),
            json_usizes(l.stride()),
            l.start_offset(),
            l.is_contiguous()
        ));
    }
    let cpu = if cpu_err.is_some() { "err" } else { "ok" };
    line.push_str(&format!(
        "],\"v\":{{\"cpu\":\"{cpu}\",\"mkl\":\"{}\",\"cuda\":\"{}\",\"metal\":\"{}\"}}",
        others[0].as_str(),
        others[1].as_str(),
        others[2].as_str()
    ));
    if let Some(c) = copied {
        line.push_str(&format!(",\"copied\":{c}"));
    }
    if let Some(e) = cpu_err {
        let first = e.lines().next().unwrap_or("").to_string();
        line.push_str(&format!(",\"err\":{}", json_str(&first)));
    }
    if !extra.is_empty() {
        line.push_str(&format!(",{extra}"));
    }
    line.push_str("}\n");
    if let Some(f) = OUT.lock().unwrap().as_mut() {
        let _ = f.write_all(line.as_bytes());
    }
}

fn err_string<T>(r: &Result<T>) -> Option<String> {
    r.as_ref().err().map(|e| format!("{e}"))
}

fn cpu_v<T>(r: &Result<T>) -> V {
    V::of(r.is_ok())
}

// -----------------------------------------------------------------------------------------
// The backends' matmul layout checks (pure functions of the layouts and bmnk):
// `cuda_gemm_config`, `mkl_matmul`, `metal_mlx_gemm`, each `Ok(())` or a message. They are
// generated at setup time by make_patches.py (`--ports`) from the registry sources of
// candle-core and candle-metal-kernels 0.11.1 — candle's condition lines taken line for
// line — into candle_real_ports.rs next to this file (never committed).
// -----------------------------------------------------------------------------------------

include!("candle_real_ports.rs");

/// Whether MLX's one batch stride (`stride[rank - 3]`, mlx_gemm.rs `call_mlx_gemm` /
/// `check_batch_collapse`) addresses every batch of this operand: each batch dim of size > 1
/// must have the stride of the flattened batch index (`ab_skip`'s patterns are narrower: it
/// rejects three batch dims even when they are uniform).
pub fn metal_batch_uniform(l: &Layout) -> bool {
    let (d, s) = (l.dims(), l.stride());
    let r = d.len();
    if r <= 3 {
        return true;
    }
    let mut expect = s[r - 3] * d[r - 3];
    for i in (0..r - 3).rev() {
        if d[i] > 1 && s[i] != expect {
            return false;
        }
        expect *= d[i];
    }
    true
}

/// `Tensor::matmul`'s shape checks: `Some(bmnk)` when the shapes are valid and the product
/// is not empty (an empty product returns zeros before any backend runs).
pub fn matmul_bmnk(lhs: &Layout, rhs: &Layout) -> Option<(usize, usize, usize, usize)> {
    let a = lhs.dims();
    let b = rhs.dims();
    let dim = a.len();
    if dim < 2 || b.len() != dim {
        return None;
    }
    let (m, k, k2, n) = (a[dim - 2], a[dim - 1], b[dim - 2], b[dim - 1]);
    let batching: usize = a[..dim - 2].iter().product();
    let batching_b: usize = b[..dim - 2].iter().product();
    if k != k2 || batching != batching_b {
        return None;
    }
    if batching * m * n == 0 || k == 0 {
        return None;
    }
    Some((batching, m, n, k))
}

/// mkl, cuda, metal verdicts for a matmul of these layouts.
pub fn matmul_verdicts(lhs: &Layout, rhs: &Layout) -> ([V; 3], String) {
    let Some(bmnk) = matmul_bmnk(lhs, rhs) else {
        return ([V::Ok; 3], String::new());
    };
    let mkl = mkl_matmul(bmnk, lhs, rhs);
    let cuda = cuda_gemm_config(bmnk, lhs, rhs);
    let metal = metal_mlx_gemm(bmnk, lhs.stride(), rhs.stride());
    let batch_ok = crate::cpu_backend::MatMul(bmnk).ab_skip(lhs, rhs).is_ok();
    let metal_v = match metal {
        Err(_) => V::Err,
        Ok(()) if !metal_batch_uniform(lhs) || !metal_batch_uniform(rhs) => V::Silent,
        Ok(()) => V::Ok,
    };
    let mut why = Vec::new();
    for r in [&mkl, &cuda, &metal] {
        if let Err(e) = r {
            why.push(*e);
        }
    }
    if !batch_ok {
        why.push("batch dims do not merge (ab_skip)");
    }
    (
        [V::of(mkl.is_ok()), V::of(cuda.is_ok()), metal_v],
        if why.is_empty() {
            String::new()
        } else {
            format!("\"why\":{}", json_str(&why.join("; ")))
        },
    )
}

/// Verdicts when every backend checks the contiguity of `cpu_cuda` operands except metal,
/// which checks `metal_ops`. The cpu/mkl verdict is candle's result.
fn contig_verdicts(cpu: V, cuda_ops: &[&Layout], metal_ops: &[&Layout]) -> [V; 3] {
    let c = V::of(cuda_ops.iter().all(|l| l.is_contiguous()));
    let m = V::of(metal_ops.iter().all(|l| l.is_contiguous()));
    [cpu, c, m]
}

// -----------------------------------------------------------------------------------------
// The wrappers: the old public names, `#[track_caller]`, around the renamed originals.
// -----------------------------------------------------------------------------------------

impl Tensor {
    #[track_caller]
    pub fn matmul(&self, rhs: &Self) -> Result<Self> {
        let f = Frame::enter("matmul");
        let r = self.matmul__(rhs);
        if enabled() {
            let (v, why) = matmul_verdicts(self.layout(), rhs.layout());
            // A shape error fails on every backend.
            let v = if r.is_err() && matmul_bmnk(self.layout(), rhs.layout()).is_none() {
                [V::Err; 3]
            } else {
                v
            };
            write(
                &f,
                "matmul",
                &[("lhs", self.layout()), ("rhs", rhs.layout())],
                err_string(&r),
                v,
                None,
                &why,
            );
        }
        r
    }

    #[track_caller]
    pub fn broadcast_matmul(&self, rhs: &Self) -> Result<Self> {
        let f = Frame::enter("broadcast_matmul");
        let r = self.broadcast_matmul__(rhs);
        if enabled() {
            let c = cpu_v(&r);
            write(
                &f,
                "broadcast_matmul",
                &[("lhs", self.layout()), ("rhs", rhs.layout())],
                err_string(&r),
                [c; 3],
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn index_select<D: crate::shape::Dim>(&self, indexes: &Self, dim: D) -> Result<Self> {
        let f = Frame::enter("index_select");
        let r = self.index_select__(indexes, dim);
        if enabled() {
            let v = contig_verdicts(cpu_v(&r), &[self.layout()], &[indexes.layout()]);
            write(
                &f,
                "index_select",
                &[("input", self.layout()), ("index", indexes.layout())],
                err_string(&r),
                v,
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn gather<D: crate::shape::Dim>(&self, indexes: &Self, dim: D) -> Result<Self> {
        let f = Frame::enter("gather");
        let r = self.gather__(indexes, dim);
        if enabled() {
            let v = contig_verdicts(
                cpu_v(&r),
                &[self.layout(), indexes.layout()],
                &[indexes.layout()],
            );
            write(
                &f,
                "gather",
                &[("input", self.layout()), ("index", indexes.layout())],
                err_string(&r),
                v,
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn scatter<D: crate::shape::Dim>(
        &self,
        indexes: &Self,
        source: &Self,
        dim: D,
    ) -> Result<Self> {
        let f = Frame::enter("scatter");
        let r = self.scatter__(indexes, source, dim);
        log_indexed_write(&f, "scatter", self, indexes, source, &r);
        r
    }

    #[track_caller]
    pub fn scatter_add<D: crate::shape::Dim>(
        &self,
        indexes: &Self,
        source: &Self,
        dim: D,
    ) -> Result<Self> {
        let f = Frame::enter("scatter_add");
        let r = self.scatter_add__(indexes, source, dim);
        log_indexed_write(&f, "scatter_add", self, indexes, source, &r);
        r
    }

    #[track_caller]
    pub fn index_add<D: crate::shape::Dim>(
        &self,
        indexes: &Self,
        source: &Self,
        dim: D,
    ) -> Result<Self> {
        let f = Frame::enter("index_add");
        let r = self.index_add__(indexes, source, dim);
        log_indexed_write(&f, "index_add", self, indexes, source, &r);
        r
    }

    #[track_caller]
    pub fn slice_set<D: crate::shape::Dim>(&self, src: &Self, dim: D, offset: usize) -> Result<()> {
        let f = Frame::enter("slice_set");
        let r = self.slice_set__(src, dim, offset);
        if enabled() {
            let ops = [self.layout(), src.layout()];
            let v = contig_verdicts(cpu_v(&r), &ops, &ops);
            write(
                &f,
                "slice_set",
                &[("input", self.layout()), ("src", src.layout())],
                err_string(&r),
                v,
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn cat<A: AsRef<Tensor>, D: crate::shape::Dim>(args: &[A], dim: D) -> Result<Self> {
        let f = Frame::enter("cat");
        let layouts: Vec<Layout> = args.iter().map(|a| a.as_ref().layout().clone()).collect();
        let r = Self::cat__(args, dim);
        if enabled() {
            let c = cpu_v(&r);
            let names: Vec<String> = (0..layouts.len()).map(|i| format!("t{i}")).collect();
            let ops: Vec<(&str, &Layout)> = names
                .iter()
                .map(|s| s.as_str())
                .zip(layouts.iter())
                .collect();
            let out_contig = r.as_ref().map(|t| t.is_contiguous()).unwrap_or(true);
            let extra = format!("\"out_contig\":{out_contig}");
            write(&f, "cat", &ops, err_string(&r), [c; 3], None, &extra);
        }
        r
    }

    #[track_caller]
    pub fn arg_sort_last_dim(&self, asc: bool) -> Result<Tensor> {
        let f = Frame::enter("arg_sort_last_dim");
        let r = self.arg_sort_last_dim__(asc);
        if enabled() {
            let v = contig_verdicts(cpu_v(&r), &[self.layout()], &[self.layout()]);
            write(
                &f,
                "arg_sort_last_dim",
                &[("input", self.layout())],
                err_string(&r),
                v,
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn sort_last_dim(&self, asc: bool) -> Result<(Tensor, Tensor)> {
        let f = Frame::enter("sort_last_dim");
        let r = self.sort_last_dim__(asc);
        if enabled() {
            let v = contig_verdicts(cpu_v(&r), &[self.layout()], &[self.layout()]);
            write(
                &f,
                "sort_last_dim",
                &[("input", self.layout())],
                err_string(&r),
                v,
                None,
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn reshape<S: crate::shape::ShapeWithOneHole>(&self, s: S) -> Result<Tensor> {
        let f = Frame::enter("reshape");
        let r = self.reshape__(s);
        if enabled() {
            let c = cpu_v(&r);
            let copied = r.is_ok() && !self.is_contiguous();
            write(
                &f,
                "reshape",
                &[("input", self.layout())],
                err_string(&r),
                [c; 3],
                Some(copied),
                "",
            );
        }
        r
    }

    #[track_caller]
    pub fn flatten<D1: crate::shape::Dim, D2: crate::shape::Dim>(
        &self,
        start_dim: D1,
        end_dim: D2,
    ) -> Result<Tensor> {
        let _f = Frame::enter("flatten");
        self.flatten__(start_dim, end_dim)
    }

    #[track_caller]
    pub fn flatten_to<D: crate::shape::Dim>(&self, end_dim: D) -> Result<Tensor> {
        let _f = Frame::enter("flatten_to");
        self.flatten_to__(end_dim)
    }

    #[track_caller]
    pub fn flatten_from<D: crate::shape::Dim>(&self, start_dim: D) -> Result<Tensor> {
        let _f = Frame::enter("flatten_from");
        self.flatten_from__(start_dim)
    }

    #[track_caller]
    pub fn flatten_all(&self) -> Result<Tensor> {
        let _f = Frame::enter("flatten_all");
        self.flatten_all__()
    }

    #[track_caller]
    pub fn contiguous(&self) -> Result<Tensor> {
        let f = Frame::enter("contiguous");
        let enabled = enabled();
        if f.depth() == 0 && !self.is_contiguous() {
            let skip = SKIP.lock().unwrap().clone();
            if let Some(s) = skip {
                if s == f.own_site() {
                    if enabled {
                        write(
                            &f,
                            "contiguous",
                            &[("input", self.layout())],
                            None,
                            [V::Ok; 3],
                            Some(false),
                            "\"skipped\":true",
                        );
                    }
                    return Ok(self.clone());
                }
            }
        }
        let r = self.contiguous__();
        if enabled {
            let c = cpu_v(&r);
            let copied = !self.is_contiguous();
            write(
                &f,
                "contiguous",
                &[("input", self.layout())],
                err_string(&r),
                [c; 3],
                Some(copied),
                "",
            );
        }
        r
    }

    /// `get(i)` is `narrow(0, i, 1)?.reshape(..)` in 0.11.1 (tensor.rs:2246): a frame, so that
    /// its reshape (a copy of a non-contiguous input) is logged at the model's `.get(i)`.
    #[track_caller]
    pub fn get(&self, i: usize) -> Result<Tensor> {
        let _f = Frame::enter("get");
        self.get__(i)
    }

    /// `Tensor::apply`: a frame so that a module's `forward` reached through it keeps the site.
    #[track_caller]
    pub fn apply<M: crate::Module>(&self, m: &M) -> Result<Self> {
        let _f = Frame::enter("apply");
        self.apply__(m)
    }
}

/// For candle-nn: log a fused op whose every backend checks the contiguity of `operands`
/// (ops.rs softmax_last_dim / rms_norm / layer_norm, rotary_emb.rs rope / rope_i / rope_thd).
pub fn log_fused<T>(frame: &Frame, op: &str, operands: &[(&str, &Tensor)], r: &Result<T>) {
    if !enabled() {
        return;
    }
    let layouts: Vec<(&str, &Layout)> = operands.iter().map(|(n, t)| (*n, t.layout())).collect();
    let all = V::of(operands.iter().all(|(_, t)| t.is_contiguous()));
    write(
        frame,
        op,
        &layouts,
        err_string(r),
        [cpu_v(r), all, all],
        None,
        "",
    );
}

/// For candle-nn's `RmsNorm` / `LayerNorm` modules: log whether the slow path ran.
pub fn log_slow_path(frame: &Frame, op: &str, input: &Tensor) {
    if !enabled() {
        return;
    }
    let slow = !input.is_contiguous();
    write(
        frame,
        op,
        &[("input", input.layout())],
        None,
        [V::Ok; 3],
        None,
        &format!("\"slow\":{slow}"),
    );
}
