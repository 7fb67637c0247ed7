#!/usr/bin/env python3
"""Writes the logging patches (target/candle_real/patches/<crate>-logging.patch, never
committed: they hold candle's text) from the pristine registry sources.

The edits are mechanical and keep every line number of the patched files (attributes and
frame lines go on the line they annotate; wrappers are appended at the end of a file), so a
site logged at file:line:col is the same in the registry copy that stridelint reads.
  candle-core: the contract ops' public methods renamed `<name>__` (pub(crate)); the
      wrappers with the old names live in candle_real_log.rs (copied whole by setup.sh);
      `MatMul` / `ab_skip` made pub(crate) so the logger calls candle's own batch check;
      the CPU rng of `rand_uniform` / `rand_normal` is the logger's seedable one.
  candle-nn: fused ops renamed and re-wrapped at the end of ops.rs / rotary_emb.rs; the
      Module impls of Linear, Embedding, RmsNorm, LayerNorm and the kv caches' append get
      `#[track_caller]` and a frame, so the site is the model's line.
  candle-transformers: `#[track_caller]` on with_tracing's Module impls (no other change).
  The matmul ports: `--ports FILE` writes candle_real_ports.rs (see `write_ports`).
Usage: make_patches.py [OUT_DIR]  (default target/candle_real/patches; needs `diff`)
       make_patches.py --ports target/candle_real/vendor/candle-core/src/candle_real_ports.rs
"""
import glob, os, re, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REG = os.path.dirname(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/candle-core-0.11.1"))[0])


def sub1(text, old, new, path):
    n = text.count(old)
    if n != 1:
        sys.exit(f"{path}: expected one {old!r}, found {n}")
    return text.replace(old, new)


CORE_RENAMES = {
    "src/tensor.rs": [
        "matmul(&self, rhs: &Self)", "broadcast_matmul(&self, rhs: &Self)",
        "scatter<D: Dim>(&self, indexes: &Self, source: &Self, dim: D)",
        "scatter_add<D: Dim>(&self, indexes: &Self, source: &Self, dim: D)",
        "index_add<D: Dim>", "gather<D: Dim>", "index_select<D: Dim>",
        "flatten<D1: Dim, D2: Dim>", "flatten_to<D: Dim>", "flatten_from<D: Dim>",
        "flatten_all(&self)", "contiguous(&self)", "reshape<S: ShapeWithOneHole>",
        "apply<M: crate::Module>", "get(&self, i: usize)",
    ],
    "src/tensor_cat.rs": ["cat<A: AsRef<Tensor>, D: Dim>", "slice_set<D: Dim>"],
    "src/sort.rs": ["arg_sort_last_dim(&self", "sort_last_dim(&self"],
}


def patch_core(d):
    for rel, sigs in CORE_RENAMES.items():
        p = os.path.join(d, rel)
        t = open(p).read()
        for s in sigs:
            name, rest = re.match(r"(\w+)(.*)", s).groups()
            t = sub1(t, f"    pub fn {s}", f"    pub(crate) fn {name}__{rest}", p)
        open(p, "w").write(t)
    p = os.path.join(d, "src/lib.rs")
    t = open(p).read()
    t = sub1(t, "pub mod backend;", "pub mod backend; pub mod candle_real_log;", p)
    open(p, "w").write(t)
    p = os.path.join(d, "src/cpu_backend/mod.rs")
    t = open(p).read()
    t = sub1(t, "struct MatMul((usize, usize, usize, usize));",
             "pub(crate) struct MatMul(pub(crate) (usize, usize, usize, usize));", p)
    t = sub1(t, "    fn ab_skip(", "    pub(crate) fn ab_skip(", p)
    # a seedable CPU rng: the runner seeds it per model, so every run of a model (unmodified
    # or mutated) gets the same random weights and inputs
    n = t.count("let mut rng = rand::rng();")
    assert n == 2, n
    t = t.replace("let mut rng = rand::rng();", "let mut rng = crate::candle_real_log::rng();")
    open(p, "w").write(t)


NN_FUSED = {
    "src/ops.rs": [
        ("softmax_last_dim", "xs: &Tensor", [("input", "xs")]),
        ("rms_norm", "xs: &Tensor, alpha: &Tensor, eps: f32", [("input", "xs"), ("alpha", "alpha")]),
        ("layer_norm", "xs: &Tensor, alpha: &Tensor, beta: &Tensor, eps: f32",
         [("input", "xs"), ("alpha", "alpha"), ("beta", "beta")]),
    ],
    "src/rotary_emb.rs": [
        (n, "xs: &Tensor, cos: &Tensor, sin: &Tensor", [("input", "xs"), ("cos", "cos"), ("sin", "sin")])
        for n in ("rope", "rope_i", "rope_thd")
    ],
}

FRAME = "let _f = candle::candle_real_log::Frame::enter(\"{}\"); "


def patch_nn(d):
    for rel, fns in NN_FUSED.items():
        p = os.path.join(d, rel)
        t = open(p).read()
        t += "\n// stridelint candle_real: logging wrappers (scripts/candle_real/make_patches.py)\n"
        for name, params, ops in fns:
            t = sub1(t, f"pub fn {name}({params})", f"fn {name}__({params})", p)
            args = ", ".join(a.split(":")[0] for a in params.split(", "))
            opl = ", ".join(f"(\"{n}\", {v})" for n, v in ops)
            t += (f"#[track_caller]\npub fn {name}({params}) -> Result<Tensor> {{\n"
                  f"    let f = candle::candle_real_log::Frame::enter(\"{name}\");\n"
                  f"    let r = {name}__({args});\n"
                  f"    candle::candle_real_log::log_fused(&f, \"{name}\", &[{opl}], &r);\n"
                  f"    r\n}}\n")
        open(p, "w").write(t)
    edits = {
        "src/linear.rs": [("    fn forward(&self, x: &Tensor) -> candle::Result<Tensor> {",
                           "    #[track_caller] fn forward(&self, x: &Tensor) -> candle::Result<Tensor> { " + FRAME.format("Linear"))],
        "src/embedding.rs": [("    fn forward(&self, indexes: &Tensor) -> Result<Tensor> {",
                              "    #[track_caller] fn forward(&self, indexes: &Tensor) -> Result<Tensor> { " + FRAME.format("Embedding"))],
        "src/layer_norm.rs": [
            ("    fn forward(&self, x: &Tensor) -> Result<Tensor> {\n        if x.is_contiguous() && self.remove_mean {",
             "    #[track_caller] fn forward(&self, x: &Tensor) -> Result<Tensor> { let _f = candle::candle_real_log::Frame::enter(\"LayerNorm\"); candle::candle_real_log::log_slow_path(&_f, \"LayerNorm\", x);\n        if x.is_contiguous() && self.remove_mean {"),
            ("    fn forward(&self, xs: &Tensor) -> Result<Tensor> {\n        if xs.is_contiguous() {",
             "    #[track_caller] fn forward(&self, xs: &Tensor) -> Result<Tensor> { let _f = candle::candle_real_log::Frame::enter(\"RmsNorm\"); candle::candle_real_log::log_slow_path(&_f, \"RmsNorm\", xs);\n        if xs.is_contiguous() {"),
        ],
        "src/kv_cache.rs": [
            ("    pub fn append(&mut self, src: &Tensor) -> Result<()> {",
             "    #[track_caller] pub fn append(&mut self, src: &Tensor) -> Result<()> { " + FRAME.format("Cache::append")),
            ("    pub fn append(&mut self, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {\n        self.k.append(k)?;",
             "    #[track_caller] pub fn append(&mut self, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> { " + FRAME.format("KvCache::append") + "\n        self.k.append(k)?;"),
        ],
    }
    for rel, subs in edits.items():
        p = os.path.join(d, rel)
        t = open(p).read()
        for old, new in subs:
            t = sub1(t, old, new, p)
        open(p, "w").write(t)


def patch_transformers(d):
    p = os.path.join(d, "src/models/with_tracing.rs")
    t = open(p).read()
    n = t.count("\n    fn forward(&self")
    t = t.replace("\n    fn forward(&self", "\n    #[track_caller] fn forward(&self")
    assert n >= 5, n
    open(p, "w").write(t)


# ---------------------------------------------------------------------------------------
# The matmul ports (candle_real_ports.rs, generated into the vendored candle-core at setup
# time, never committed). The backends' matrix-layout tests are taken from the registry
# sources line for line, so the logger evaluates candle's own conditions:
#   - the `let rhs_m1 = ..` / `let lhs_m2 = ..` bindings,
#   - each `let (ld, trans) = if COND {` / `} else if COND {` chain, whose branch values are
#     replaced by placeholders and whose `else` becomes `return Err(<our message>)`,
#   - cuda's batch-stride `match`es, whose arms are kept and whose fallback arm becomes
#     `_ => return Err(<our message>)`.
# The function signatures, messages and everything else below are ours.
# ---------------------------------------------------------------------------------------
METAL = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/candle-metal-kernels-0.11.1"))

# (port, source file, region start, region end, signature/prologue, messages by operand)
PORTS = [
    ("cuda_gemm_config", "candle-core-0.11.1/src/cuda_backend/mod.rs",
     "fn gemm_config<T>(", "Ok(StridedBatchedConfig",
     "/// cuda: `gemm_config` (candle-core src/cuda_backend/mod.rs): the matrix tests and the\n"
     "/// batch strides.\n"
     "pub fn cuda_gemm_config(\n    (_b, m, n, k): (usize, usize, usize, usize),\n"
     "    lhs_l: &Layout,\n    rhs_l: &Layout,\n) -> std::result::Result<(), &'static str> {\n"
     "    let lhs_stride = lhs_l.stride();\n    let rhs_stride = rhs_l.stride();\n",
     {"rhs": "cuda: MatMulNonContiguous (rhs matrix)", "lhs": "cuda: MatMulNonContiguous (lhs matrix)",
      "lhs batch": "cuda: MatMulNonContiguous (lhs batch)", "rhs batch": "cuda: MatMulNonContiguous (rhs batch)"}),
    ("mkl_matmul", "candle-core-0.11.1/src/cpu_backend/mod.rs",
     "#[cfg(feature = \"mkl\")]\n    fn f<", "let mut dst = vec!",
     "/// mkl: the mkl `MatMul::f` (candle-core src/cpu_backend/mod.rs; accelerate's has the\n"
     "/// same tests): `ab_skip` (candle's own), then the matrix tests.\n"
     "pub fn mkl_matmul(\n    bmnk: (usize, usize, usize, usize),\n    lhs_l: &Layout,\n"
     "    rhs_l: &Layout,\n) -> std::result::Result<(), &'static str> {\n"
     "    let (_b, m, n, k) = bmnk;\n"
     "    if crate::cpu_backend::MatMul(bmnk).ab_skip(lhs_l, rhs_l).is_err() {\n"
     "        return Err(\"mkl: non-contiguous batch (ab_skip)\");\n    }\n"
     "    let lhs_stride = lhs_l.stride();\n    let rhs_stride = rhs_l.stride();\n",
     {"rhs": "mkl: non-contiguous rhs", "lhs": "mkl: non-contiguous lhs"}),
    ("metal_mlx_gemm", None, "pub fn call_mlx_gemm(", "if m == 1 || n == 1",
     "/// metal: `call_mlx_gemm` (candle-metal-kernels src/kernels/mlx_gemm.rs): the matrix\n"
     "/// tests. The batch dims are not checked there (see `matmul_verdicts`).\n"
     "pub fn metal_mlx_gemm(\n    (_b, m, n, k): (usize, usize, usize, usize),\n"
     "    lhs_stride: &[usize],\n    rhs_stride: &[usize],\n"
     ") -> std::result::Result<(), &'static str> {\n",
     {"lhs": "metal: MatMulNonContiguous (lhs)", "rhs": "metal: MatMulNonContiguous (rhs)"}),
]


def region(text, start, end, path):
    i = text.find(start)
    if i < 0:
        sys.exit(f"{path}: {start!r} not found")
    j = text.find(end, i)
    if j < 0:
        sys.exit(f"{path}: {end!r} not found after {start!r}")
    return text[i:j]


def port_body(src, msgs, path):
    """The generated statements of one port from the source region `src`."""
    out, chains, names = [], 0, []
    lines = [l.strip() for l in src.splitlines()]
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.match(r"let (rhs|lhs)_m[12] = ", l):
            out.append("    " + l)
        elif l.startswith("let (") and " = if " in l and l.endswith("{"):
            names = re.match(r"let \(([^)]*)\)", l).group(1)
            operand = "rhs" if "rhs_m" in l else "lhs"
            out.append("    " + l)
            out.append("        (0, 0)")
            i += 1
            while not lines[i].startswith("} else"):  # candle's branch value: dropped
                i += 1
            while lines[i].startswith("} else if "):
                out.append("    " + lines[i])
                out.append("        (0, 1)")
                i += 1
                while not lines[i].startswith("} else"):
                    i += 1
            if lines[i] != "} else {":
                sys.exit(f"{path}: unexpected line in a layout test: {lines[i]!r}")
            out.append("    } else {")
            out.append(f"        return Err({msgs[operand]!r});".replace("'", '"'))
            out.append("    };")
            out.append(f"    let _ = ({names});")
            chains += 1
        elif re.match(r"let \w+: usize = match (lhs|rhs)_stride\[", l):
            operand = "lhs" if "match lhs_" in l else "rhs"
            out.append("    " + l.replace("let ", "let _", 1))
            i += 1
            while lines[i].startswith("["):
                out.append("        " + lines[i])
                i += 1
            if not lines[i].startswith("_ =>"):
                sys.exit(f"{path}: unexpected arm in a batch-stride match: {lines[i]!r}")
            out.append(f"        _ => return Err({msgs[operand + ' batch']!r}),".replace("'", '"'))
            out.append("    };")
        i += 1
    if chains != 2:
        sys.exit(f"{path}: expected two matrix tests, found {chains}")
    return "\n".join(out) + "\n    Ok(())\n}\n"


def write_ports(dest):
    if not METAL:
        sys.exit("candle-metal-kernels-0.11.1 not in the cargo registry")
    parts = ["// Generated by scripts/candle_real/make_patches.py from the candle 0.11.1 registry\n"
             "// sources (setup.sh); included by candle_real_log.rs. Never committed.\n"]
    for name, rel, start, end, head, msgs in PORTS:
        path = os.path.join(METAL[0], "src/kernels/mlx_gemm.rs") if rel is None else os.path.join(REG, rel)
        body = port_body(region(open(path).read(), start, end, path), msgs, path)
        if name == "mkl_matmul":
            # accelerate's `MatMul::f` must test exactly what mkl's does
            acc = port_body(region(open(path).read(), start.replace("mkl", "accelerate"), end, path), msgs, path)
            if acc != body:
                sys.exit(f"{path}: the accelerate and mkl matrix tests differ")
        parts.append(head + body)
    open(dest, "w").write("\n".join(parts))
    print(f"ports: {dest}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--ports":
        write_ports(sys.argv[2])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "target", "candle_real", "patches")
    os.makedirs(out, exist_ok=True)
    for crate, fn in [("candle-core", patch_core), ("candle-nn", patch_nn),
                      ("candle-transformers", patch_transformers)]:
        with tempfile.TemporaryDirectory() as tmp:
            a = os.path.join(tmp, "a")
            b = os.path.join(tmp, "b")
            shutil.copytree(os.path.join(REG, f"{crate}-0.11.1", "src"), os.path.join(a, "src"))
            shutil.copytree(os.path.join(a), b)
            fn(b)
            r = subprocess.run(["diff", "-ruN", "a", "b"], cwd=tmp, capture_output=True, text=True)
            assert r.returncode in (0, 1), r.stderr
            open(os.path.join(out, f"{crate}-logging.patch"), "w").write(r.stdout)
            print(f"{crate}: {r.stdout.count(chr(10))} patch lines")


if __name__ == "__main__":
    main()
