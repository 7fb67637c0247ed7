//! [`OpTable`]: the op knowledge of one library, loaded from `rules/*.toml`.
//!
//! The tables are embedded in the binary with `include_str!` and parsed once, on first use
//! (`OnceLock`). Loading validates everything a transfer function relies on — kinds exist,
//! parameter strings parse, each kind finds the parameters it reads, spellings are unique —
//! and reports the file, the op and the field at fault. The unit tests load every table, so
//! a malformed table fails `cargo test` with that message rather than a lint run.
//! See the `ops` module docs for the table format.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;

use super::kind::{OpKind, Semantics};
use super::schema::{parse_params, ParamSpec, ParamType, Variadic};
use crate::layout::{CandleBackend, MatmulRules, MatrixRule};

/// One table file: its path (for messages) and its text.
pub type TableSource = (&'static str, &'static str);

pub const TORCH_RULES: TableSource = ("rules/torch.toml", include_str!("../../rules/torch.toml"));
pub const EINOPS_RULES: TableSource =
    ("rules/einops.toml", include_str!("../../rules/einops.toml"));
pub const CANDLE_RULES: TableSource =
    ("rules/candle.toml", include_str!("../../rules/candle.toml"));
pub const TCH_RULES: TableSource = ("rules/tch.toml", include_str!("../../rules/tch.toml"));

/// One op: its spellings, its parameters and its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct OpSpec {
    /// A readable name, unique in its table (`"transpose"`, `"torch.reshape"`).
    pub name: String,
    pub kind: OpKind,
    pub params: Vec<ParamSpec>,
    /// Method spellings: `x.transpose(…)`.
    pub methods: Vec<String>,
    /// Function spellings, fully qualified (`torch.transpose`, `torch.nn.functional.softmax`).
    pub functions: Vec<String>,
    /// Property spellings: `x.T`, `x.shape`.
    pub attributes: Vec<String>,
    /// Index of the parameter a method's receiver binds to (`None`: no method form).
    pub receiver: Option<usize>,
    pub semantics: Semantics,
    /// A kind-specific option (one of [`OpKind::variants`]).
    pub variant: Option<String>,
    /// The op rejects non-contiguous inputs (candle's `softmax_last_dim`, `rope`, …).
    pub requires_contiguous: bool,
    /// Free-form labels lints may select ops by (`tags = ["attention"]`).
    pub tags: Vec<String>,
    /// Which backends check which layouts (`contract = [...]`, candle's table): the rows
    /// SL005 and SL006 decide per backend, and the slow paths and silent copies besides.
    pub contract: Vec<ContractClause>,
    /// What the op does, for `stridelint explain` and table readers.
    pub doc: String,
    /// The table file the entry came from.
    pub source: &'static str,
}

/// One row of an op's backend contract: what `backends` check of the tensors `params`,
/// and where the library does it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractClause {
    pub backends: Vec<CandleBackend>,
    pub check: ContractCheck,
    /// The tensor parameters checked (canonical names); empty for the matmul checks, which
    /// concern both operands.
    pub params: Vec<String>,
    /// How the matmul's operands are formed: `"matmul"` (the call's `input` and `other`)
    /// or `"linear"` (`candle_nn::Linear::forward`: the input and the transposed weight,
    /// by the input's rank; `layout::candle_linear_operands`).
    pub operands: String,
    /// `crate version path:line` of the check in the library's source.
    pub at: String,
}

/// What a contract row checks. The first four make the call return an error; the last two
/// are facts about cost (a slower path, a copy the caller did not ask for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContractCheck {
    /// The tensor is contiguous by the library's own test (`is_contiguous`,
    /// `contiguous_offsets`: a start offset is fine).
    Contiguous,
    /// The last dim has stride 1 (flash-attn's q, k, v).
    LastDimStride1,
    /// matmul: batch dims merge into one stride (`ab_skip`).
    MatmulBatch,
    /// matmul: each matrix row- or column-major with the exact leading dimension.
    MatmulMatrix(MatrixRule),
    /// A non-contiguous tensor takes a slower path (no error).
    SlowPath,
    /// A non-contiguous tensor is copied silently.
    SilentCopy,
}

impl ContractCheck {
    fn parse(text: &str) -> Option<ContractCheck> {
        Some(match text {
            "contiguous" => ContractCheck::Contiguous,
            "last-dim-stride-1" => ContractCheck::LastDimStride1,
            "matmul-batch" => ContractCheck::MatmulBatch,
            "matmul-matrix" => ContractCheck::MatmulMatrix(MatrixRule::Lenient),
            "matmul-matrix-strict" => ContractCheck::MatmulMatrix(MatrixRule::Strict),
            "slow-path" => ContractCheck::SlowPath,
            "copy" => ContractCheck::SilentCopy,
            _ => return None,
        })
    }

    /// Does failing the check make the call return an error?
    pub fn rejects(self) -> bool {
        !matches!(self, ContractCheck::SlowPath | ContractCheck::SilentCopy)
    }

    /// What the check asks of a tensor, in words.
    pub fn requirement(self) -> &'static str {
        match self {
            ContractCheck::LastDimStride1 => "of unit stride in its last dim",
            _ => "contiguous",
        }
    }

    /// A layout check of named tensors (rather than of a matmul's operand pair)?
    pub fn is_tensor_check(self) -> bool {
        matches!(
            self,
            ContractCheck::Contiguous | ContractCheck::LastDimStride1
        )
    }
}

impl OpSpec {
    /// The kind's table spelling (`"view"`, `"reshape"`, …).
    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Does a successful call produce a tensor (rather than a size, a bool or a tuple)?
    pub fn returns_tensor(&self) -> bool {
        match self.kind {
            OpKind::Size
            | OpKind::Ndim
            | OpKind::Numel
            | OpKind::Stride
            | OpKind::IsContiguous
            | OpKind::Len => false,
            OpKind::UnknownLayout => self.variant.as_deref() != Some("not_a_tensor"),
            _ => true,
        }
    }

    /// Is the result a contiguous tensor of the input's shape whenever the input is
    /// contiguous? (For a tensor known only to be contiguous, with an unknown shape.)
    /// Element-wise ops qualify only when no other operand broadcasts the input to a larger
    /// shape — the caller must check its other tensor arguments.
    pub fn preserves_contiguous_shape(&self) -> bool {
        matches!(
            self.kind,
            OpKind::Contiguous
                | OpKind::Clone
                | OpKind::Convert
                | OpKind::Alias
                | OpKind::InPlace
                | OpKind::ContiguousResult
                | OpKind::CreateLike
                | OpKind::Elementwise
        ) || (self.kind == OpKind::Dropout && self.variant.is_none())
    }

    /// Does a list op (`cat`, `stack`) of unknown layout give a contiguous result whenever
    /// its first tensor is contiguous? torch's does: one input of the default format makes
    /// the output contiguous (ATen's `compute_output_memory_format`). candle's copies into
    /// a row-major result only when every input is contiguous or has an outer stride for
    /// the dim (spec §10.2): one operand decides nothing.
    pub fn first_of_list_decides_contiguity(&self) -> bool {
        self.semantics == Semantics::Torch
    }

    /// Is `layout` contiguous by the test of the op's library (candle's has no size-1
    /// exception, spec §10)?
    pub fn is_contiguous<S: crate::layout::Size>(
        &self,
        layout: &crate::layout::Layout<S>,
        d: &crate::layout::Decider,
    ) -> crate::layout::Tri {
        match self.semantics {
            Semantics::Torch => layout.is_contiguous(d),
            Semantics::Candle => crate::layout::candle_is_contiguous(layout, d),
        }
    }

    /// Is the result contiguous whenever the input is, whatever its shape? `squeeze` and
    /// `unsqueeze` remove or insert size-1 dims, whose strides PyTorch's contiguity ignores
    /// (spec §1.1); candle's does not ignore them (§10).
    pub fn keeps_contiguity(&self) -> bool {
        matches!(self.kind, OpKind::Squeeze | OpKind::Unsqueeze)
            && self.semantics == Semantics::Torch
    }

    /// Does a layer call of this kind (`self.proj(x)`) give a tensor of its input's rank?
    /// Linear layers, norms, activations, dropout, convolutions and pooling do; the rank
    /// scan (`analysis::rank`) follows a parameter through them.
    pub fn keeps_rank(&self) -> bool {
        matches!(
            self.kind,
            OpKind::LinearModule
                | OpKind::ContiguousResult
                | OpKind::SuggestedFormatResult
                | OpKind::Dropout
                | OpKind::Elementwise
                | OpKind::Alias
                | OpKind::FormatFollowing
        )
    }

    /// The parameter answering to `name` (its name or an alias).
    pub fn param(&self, name: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.answers_to(name))
    }

    /// The matmul checks the contract gives `backend`, and how the operands are formed
    /// (`None`: the contract has no matmul row).
    pub fn matmul_rules(&self, backend: CandleBackend) -> Option<(MatmulRules, &str)> {
        let rows: Vec<&ContractClause> = self
            .contract
            .iter()
            .filter(|c| {
                matches!(
                    c.check,
                    ContractCheck::MatmulBatch | ContractCheck::MatmulMatrix(_)
                )
            })
            .collect();
        let operands = rows.first()?.operands.as_str();
        let on: Vec<&ContractClause> = rows
            .iter()
            .copied()
            .filter(|c| c.backends.contains(&backend))
            .collect();
        let batch = on.iter().any(|c| c.check == ContractCheck::MatmulBatch);
        let matrix = on
            .iter()
            .find_map(|c| match c.check {
                ContractCheck::MatmulMatrix(rule) => Some(rule),
                _ => None,
            })
            .unwrap_or(MatrixRule::Any);
        Some((MatmulRules { batch, matrix }, operands))
    }
}

/// An `nn.Module`-like class: how it is constructed and what calling it does.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleSpec {
    pub name: String,
    /// Fully qualified class names (`torch.nn.Linear`), plus bare names a table lists.
    pub classes: Vec<String>,
    /// Constructor parameters (`nn.Linear(in_features, out_features, bias=True)`).
    pub init: Vec<ParamSpec>,
    /// The call: `forward`'s parameters and the kind; its transfer function may read
    /// constructor arguments too (see [`super::bind::bind_module_call`]).
    pub call: OpSpec,
    /// Constructor arguments the call's input sizes must equal (the call fails otherwise),
    /// so that the analysis learns them: `nn.Linear(in_features, …)` fixes the last size.
    pub input_sizes: Vec<InputSize>,
    /// How the call's output sizes follow from its input's (`output_shape = "conv 2"`:
    /// convolution, pooling and resampling layers; see [`super::layer_shape`]).
    pub output_shape: Option<super::layer_shape::OutputShape>,
    /// The method that runs the call when it is not `forward` (`method = "append"`: a
    /// library object such as candle-nn's `KvCache`, whose `append(&k, &v)` takes every
    /// call parameter as a positional argument).
    pub method: Option<String>,
    pub doc: String,
}

/// One constructor argument that fixes sizes of the call's input (`input_sizes` in a table:
/// `"in_features: -1"`, `"normalized_shape: trailing"`).
#[derive(Debug, Clone, PartialEq)]
pub struct InputSize {
    pub param: String,
    pub at: InputDims,
}

/// Where the sizes a constructor argument fixes sit in the input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InputDims {
    /// One dim (negative: from the end).
    Dim(i64),
    /// The argument is a size or a list of sizes: the input's last dims.
    Trailing,
}

/// The op knowledge of one library (or of several merged tables).
#[derive(Debug)]
pub struct OpTable {
    libraries: Vec<String>,
    /// `(alias, qualified)` namespace spellings, longest alias first.
    namespaces: Vec<(String, String)>,
    /// Namespaces whose members are the methods (`torch.Tensor.view(x, …)`).
    method_namespaces: Vec<String>,
    ops: Vec<OpSpec>,
    modules: Vec<ModuleSpec>,
    methods: HashMap<String, usize>,
    functions: HashMap<String, usize>,
    attributes: HashMap<String, usize>,
    classes: HashMap<String, usize>,
}

/// A problem in a table file, located as precisely as the loader can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    pub file: String,
    /// The `[[op]]` or `[[module]]` entry at fault.
    pub entry: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(e) = &self.entry {
            write!(f, ": {e}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TableError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    library: String,
    #[serde(default)]
    semantics: Option<String>,
    #[serde(default)]
    namespaces: BTreeMap<String, String>,
    #[serde(default)]
    method_namespaces: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    name: String,
    kind: String,
    #[serde(default)]
    methods: Vec<String>,
    #[serde(default)]
    functions: Vec<String>,
    #[serde(default)]
    attributes: Vec<String>,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default)]
    receiver: Option<String>,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    semantics: Option<String>,
    #[serde(default)]
    requires_contiguous: bool,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    contract: Vec<RawClause>,
    #[serde(default)]
    doc: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClause {
    backends: Vec<String>,
    check: String,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default)]
    operands: Option<String>,
    at: String,
}

/// A `contract` list checked against the entry's parameters.
fn build_contract(raw: &[RawClause], params: &[ParamSpec]) -> Result<Vec<ContractClause>, String> {
    raw.iter()
        .map(|c| {
            let backends = c
                .backends
                .iter()
                .map(|b| CandleBackend::parse(b).ok_or_else(|| format!("unknown backend `{b}`")))
                .collect::<Result<Vec<_>, _>>()?;
            if backends.is_empty() {
                return Err("a contract row needs at least one backend".into());
            }
            let check = ContractCheck::parse(&c.check)
                .ok_or_else(|| format!("unknown check `{}`", c.check))?;
            let mut names = Vec::new();
            for name in &c.params {
                let p = params
                    .iter()
                    .find(|p| p.answers_to(name))
                    .ok_or_else(|| format!("`{name}` is not a parameter of the call"))?;
                names.push(p.name.clone());
            }
            if check.is_tensor_check() && names.is_empty() {
                return Err(format!(
                    "check `{}` needs the tensors it checks in `params`",
                    c.check
                ));
            }
            let operands = c.operands.clone().unwrap_or_else(|| "matmul".into());
            if !matches!(operands.as_str(), "matmul" | "linear") {
                return Err(format!("unknown operands `{operands}` (matmul or linear)"));
            }
            if c.at.split_whitespace().count() < 3 {
                return Err(format!(
                    "`at = \"{}\"`: expected `crate version path:line`",
                    c.at
                ));
            }
            Ok(ContractClause {
                backends,
                check,
                params: names,
                operands,
                at: c.at.clone(),
            })
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModule {
    name: String,
    kind: String,
    classes: Vec<String>,
    #[serde(default)]
    init: Vec<String>,
    #[serde(default)]
    forward: Vec<String>,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    semantics: Option<String>,
    #[serde(default)]
    requires_contiguous: bool,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    input_sizes: Vec<String>,
    #[serde(default)]
    output_shape: Option<String>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    contract: Vec<RawClause>,
    #[serde(default)]
    doc: String,
}

/// `"in_features: -1"` / `"normalized_shape: trailing"`, naming a constructor parameter.
fn parse_input_size(entry: &str, init: &[ParamSpec]) -> Result<InputSize, String> {
    let (param, at) = entry
        .split_once(':')
        .ok_or_else(|| format!("`{entry}`: expected `parameter: dim` or `parameter: trailing`"))?;
    let (param, at) = (param.trim(), at.trim());
    if !init.iter().any(|p| p.answers_to(param)) {
        return Err(format!("`{param}` is not a constructor parameter"));
    }
    let at = match at {
        "trailing" => InputDims::Trailing,
        n => InputDims::Dim(
            n.parse()
                .map_err(|_| format!("`{entry}`: `{n}` is neither a dim nor `trailing`"))?,
        ),
    };
    Ok(InputSize {
        param: param.to_string(),
        at,
    })
}

impl OpTable {
    /// `rules/torch.toml` merged with `rules/einops.toml`: everything a PyTorch file may call.
    pub fn torch() -> &'static OpTable {
        static TABLE: OnceLock<OpTable> = OnceLock::new();
        TABLE.get_or_init(|| OpTable::load_or_panic(&[TORCH_RULES, EINOPS_RULES]))
    }

    /// `rules/einops.toml` alone.
    pub fn einops() -> &'static OpTable {
        static TABLE: OnceLock<OpTable> = OnceLock::new();
        TABLE.get_or_init(|| OpTable::load_or_panic(&[EINOPS_RULES]))
    }

    /// `rules/candle.toml`: candle-core and candle-nn.
    pub fn candle() -> &'static OpTable {
        static TABLE: OnceLock<OpTable> = OnceLock::new();
        TABLE.get_or_init(|| OpTable::load_or_panic(&[CANDLE_RULES]))
    }

    /// `rules/tch.toml`: tch-rs.
    pub fn tch() -> &'static OpTable {
        static TABLE: OnceLock<OpTable> = OnceLock::new();
        TABLE.get_or_init(|| OpTable::load_or_panic(&[TCH_RULES]))
    }

    fn load_or_panic(sources: &[TableSource]) -> OpTable {
        // The unit tests load every embedded table, so this only fires on a build whose
        // tests were not run; the message names the file, entry and field.
        OpTable::from_sources(sources).unwrap_or_else(|e| panic!("invalid op table: {e}"))
    }

    /// Parse and validate several table files into one table.
    pub fn from_sources(sources: &[TableSource]) -> Result<OpTable, TableError> {
        let mut table = OpTable {
            libraries: Vec::new(),
            namespaces: Vec::new(),
            method_namespaces: Vec::new(),
            ops: Vec::new(),
            modules: Vec::new(),
            methods: HashMap::default(),
            functions: HashMap::default(),
            attributes: HashMap::default(),
            classes: HashMap::default(),
        };
        let mut parsed = Vec::new();
        for &(file, text) in sources {
            let value: toml::Table = toml::from_str(text).map_err(|e| TableError {
                file: file.into(),
                entry: None,
                field: None,
                message: format!("not valid TOML: {e}"),
            })?;
            parsed.push((file, value));
        }
        // Namespaces first: function spellings are stored in qualified form.
        let mut semantics_of = Vec::new();
        for (file, value) in &parsed {
            let header = read_header(file, value)?;
            let semantics = match &header.semantics {
                None => Semantics::Torch,
                Some(s) => Semantics::from_name(s).ok_or_else(|| TableError {
                    file: file.to_string(),
                    entry: Some("[table]".into()),
                    field: Some("semantics".into()),
                    message: format!("unknown semantics `{s}` (known: torch, candle)"),
                })?,
            };
            semantics_of.push(semantics);
            table.libraries.push(header.library);
            table.namespaces.extend(header.namespaces);
            table.method_namespaces.extend(header.method_namespaces);
        }
        table
            .namespaces
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        table.namespaces.dedup();

        for ((file, value), semantics) in parsed.iter().zip(semantics_of) {
            for (i, raw) in entries(file, value, "op")?.into_iter().enumerate() {
                let label = entry_label("op", &raw, i);
                let op: RawOp = raw.try_into().map_err(|e: toml::de::Error| TableError {
                    file: file.to_string(),
                    entry: Some(label.clone()),
                    field: None,
                    message: e.message().to_string(),
                })?;
                let spec = table.build_op(file, &label, op, semantics)?;
                table.register_op(spec)?;
            }
            for (i, raw) in entries(file, value, "module")?.into_iter().enumerate() {
                let label = entry_label("module", &raw, i);
                let module: RawModule =
                    raw.try_into().map_err(|e: toml::de::Error| TableError {
                        file: file.to_string(),
                        entry: Some(label.clone()),
                        field: None,
                        message: e.message().to_string(),
                    })?;
                let spec = table.build_module(file, &label, module, semantics)?;
                table.register_module(spec)?;
            }
        }
        Ok(table)
    }

    fn build_op(
        &self,
        file: &'static str,
        label: &str,
        raw: RawOp,
        default_semantics: Semantics,
    ) -> Result<OpSpec, TableError> {
        let err = entry_error(file, label);
        let (kind, semantics) =
            kind_and_semantics(&raw.kind, raw.semantics.as_deref(), default_semantics, &err)?;
        let params = parse_params(&raw.params).map_err(|m| err("params", m))?;
        check_required(kind, &params, &[]).map_err(|m| err("params", m))?;
        check_variant(kind, raw.variant.as_deref()).map_err(|m| err("variant", m))?;
        if raw.methods.is_empty() && raw.functions.is_empty() && raw.attributes.is_empty() {
            return Err(err(
                "methods",
                "the op has no spelling (methods, functions or attributes)".into(),
            ));
        }
        let has_receiver_form = !raw.methods.is_empty() || !raw.attributes.is_empty();
        let receiver = match (&raw.receiver, has_receiver_form) {
            (Some(name), _) => Some(
                params
                    .iter()
                    .position(|p| p.answers_to(name))
                    .ok_or_else(|| err("receiver", format!("no parameter named `{name}`")))?,
            ),
            (None, true) => Some(0),
            (None, false) => None,
        };
        if let Some(r) = receiver {
            match params.get(r) {
                Some(p)
                    if matches!(
                        p.ty,
                        ParamType::Tensor | ParamType::TensorOrScalar | ParamType::TensorOrNumber
                    ) && p.variadic == Variadic::No => {}
                Some(p) => {
                    return Err(err(
                        "receiver",
                        format!("the receiver `{}` must be a tensor parameter", p.name),
                    ))
                }
                None => {
                    return Err(err(
                        "params",
                        "a method or attribute form needs a receiver parameter".into(),
                    ))
                }
            }
        }
        if !raw.attributes.is_empty() {
            if let Some(p) = params.iter().enumerate().find(|(i, p)| {
                Some(*i) != receiver
                    && p.default.is_none()
                    && !p.optional
                    && p.variadic == Variadic::No
            }) {
                return Err(err(
                    "attributes",
                    format!(
                        "a property form cannot pass the required parameter `{}`",
                        p.1.name
                    ),
                ));
            }
        }
        let contract = build_contract(&raw.contract, &params).map_err(|m| err("contract", m))?;
        let requires_contiguous = raw.requires_contiguous
            || contract
                .iter()
                .any(|c| c.check.is_tensor_check() && c.check.rejects());
        if requires_contiguous
            && receiver.is_none()
            && !params.iter().any(|p| p.answers_to("input"))
        {
            return Err(err(
                "requires_contiguous",
                "needs an `input` tensor parameter to check".into(),
            ));
        }
        for (field, names) in [
            ("methods", &raw.methods),
            ("attributes", &raw.attributes),
            ("functions", &raw.functions),
        ] {
            if let Some(bad) = names
                .iter()
                .find(|n| n.is_empty() || n.contains(char::is_whitespace))
            {
                return Err(err(field, format!("invalid spelling {bad:?}")));
            }
        }
        Ok(OpSpec {
            name: raw.name,
            kind,
            params,
            methods: raw.methods,
            functions: raw.functions.iter().map(|f| self.qualify(f)).collect(),
            attributes: raw.attributes,
            receiver,
            semantics,
            variant: raw.variant,
            requires_contiguous,
            tags: raw.tags,
            contract,
            doc: raw.doc,
            source: file,
        })
    }

    fn build_module(
        &self,
        file: &'static str,
        label: &str,
        raw: RawModule,
        default_semantics: Semantics,
    ) -> Result<ModuleSpec, TableError> {
        let err = entry_error(file, label);
        let (kind, semantics) =
            kind_and_semantics(&raw.kind, raw.semantics.as_deref(), default_semantics, &err)?;
        let init = parse_params(&raw.init).map_err(|m| err("init", m))?;
        let forward = parse_params(&raw.forward).map_err(|m| err("forward", m))?;
        check_required(kind, &forward, &init).map_err(|m| err("forward", m))?;
        check_variant(kind, raw.variant.as_deref()).map_err(|m| err("variant", m))?;
        if raw.classes.is_empty() {
            return Err(err(
                "classes",
                "a module needs at least one class name".into(),
            ));
        }
        if let Some(clash) = forward
            .iter()
            .find(|p| init.iter().any(|q| q.answers_to(&p.name)))
        {
            return Err(err(
                "forward",
                format!(
                    "`{}` is both a constructor and a call parameter",
                    clash.name
                ),
            ));
        }
        let contract = build_contract(&raw.contract, &forward).map_err(|m| err("contract", m))?;
        let requires_contiguous = raw.requires_contiguous
            || contract
                .iter()
                .any(|c| c.check.is_tensor_check() && c.check.rejects());
        let call = OpSpec {
            name: format!(
                "{}.{}",
                raw.name,
                raw.method.as_deref().unwrap_or("forward")
            ),
            kind,
            params: forward,
            methods: Vec::new(),
            functions: Vec::new(),
            attributes: Vec::new(),
            receiver: None,
            semantics,
            variant: raw.variant,
            requires_contiguous,
            tags: raw.tags,
            contract,
            doc: raw.doc.clone(),
            source: file,
        };
        let input_sizes = raw
            .input_sizes
            .iter()
            .map(|entry| parse_input_size(entry, &init))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|m| err("input_sizes", m))?;
        let output_shape = raw
            .output_shape
            .as_deref()
            .map(super::layer_shape::OutputShape::parse)
            .transpose()
            .map_err(|m| err("output_shape", m))?;
        Ok(ModuleSpec {
            name: raw.name,
            classes: raw.classes.iter().map(|c| self.qualify(c)).collect(),
            init,
            call,
            input_sizes,
            output_shape,
            method: raw.method,
            doc: raw.doc,
        })
    }

    fn register_op(&mut self, spec: OpSpec) -> Result<(), TableError> {
        let index = self.ops.len();
        let clash = |what: &str, spelling: &str, other: usize, spec: &OpSpec| TableError {
            file: spec.source.into(),
            entry: Some(format!("op `{}`", spec.name)),
            field: Some(what.into()),
            message: format!(
                "`{spelling}` is already spelled by op `{}`",
                self.ops[other].name
            ),
        };
        if let Some(other) = self.ops.iter().position(|o| o.name == spec.name) {
            return Err(TableError {
                file: spec.source.into(),
                entry: Some(format!("op `{}`", spec.name)),
                field: Some("name".into()),
                message: format!("duplicate op name (entry #{other})"),
            });
        }
        for m in &spec.methods {
            if let Some(&other) = self.methods.get(m) {
                return Err(clash("methods", m, other, &spec));
            }
        }
        for f in &spec.functions {
            if let Some(&other) = self.functions.get(f) {
                return Err(clash("functions", f, other, &spec));
            }
        }
        for a in &spec.attributes {
            if let Some(&other) = self.attributes.get(a) {
                return Err(clash("attributes", a, other, &spec));
            }
        }
        for m in &spec.methods {
            self.methods.insert(m.clone(), index);
        }
        for f in &spec.functions {
            self.functions.insert(f.clone(), index);
        }
        for a in &spec.attributes {
            self.attributes.insert(a.clone(), index);
        }
        self.ops.push(spec);
        Ok(())
    }

    fn register_module(&mut self, spec: ModuleSpec) -> Result<(), TableError> {
        let index = self.modules.len();
        for c in &spec.classes {
            if let Some(&other) = self.classes.get(c) {
                return Err(TableError {
                    file: spec.call.source.into(),
                    entry: Some(format!("module `{}`", spec.name)),
                    field: Some("classes".into()),
                    message: format!(
                        "`{c}` is already the class of module `{}`",
                        self.modules[other].name
                    ),
                });
            }
        }
        for c in &spec.classes {
            self.classes.insert(c.clone(), index);
        }
        self.modules.push(spec);
        Ok(())
    }

    /// Rewrite a dotted name's leading namespace alias (`F.softmax` →
    /// `torch.nn.functional.softmax`, `nn.Linear` → `torch.nn.Linear`).
    pub fn qualify(&self, dotted: &str) -> String {
        for (alias, qualified) in &self.namespaces {
            if dotted == alias {
                return qualified.clone();
            }
            if let Some(rest) = dotted
                .strip_prefix(alias.as_str())
                .and_then(|r| r.strip_prefix('.'))
            {
                return format!("{qualified}.{rest}");
            }
        }
        dotted.to_string()
    }

    /// The op of a method call `x.name(…)`.
    pub fn method(&self, name: &str) -> Option<&OpSpec> {
        self.methods.get(name).map(|&i| &self.ops[i])
    }

    /// The op of a function call by dotted name (`torch.transpose`, `F.softmax`,
    /// `torch.nn.functional.softmax`, `einops.rearrange`); `torch.Tensor.view` finds the method.
    pub fn function(&self, dotted: &str) -> Option<&OpSpec> {
        let qualified = self.qualify(dotted);
        if let Some(&i) = self.functions.get(&qualified) {
            return Some(&self.ops[i]);
        }
        self.method_namespaces.iter().find_map(|ns| {
            let method = qualified.strip_prefix(ns.as_str())?.strip_prefix('.')?;
            self.method(method)
        })
    }

    /// The op of a property access `x.name` (`x.T`, `x.mT`, `x.shape`).
    pub fn attribute(&self, name: &str) -> Option<&OpSpec> {
        self.attributes.get(name).map(|&i| &self.ops[i])
    }

    /// The module class by dotted name (`nn.Linear`, `torch.nn.LayerNorm`, `Rearrange`).
    pub fn module(&self, dotted: &str) -> Option<&ModuleSpec> {
        self.classes
            .get(&self.qualify(dotted))
            .map(|&i| &self.modules[i])
    }

    /// The entry named `name` (the table's own `name`, not a spelling).
    pub fn op(&self, name: &str) -> Option<&OpSpec> {
        self.ops.iter().find(|o| o.name == name)
    }

    /// The op or module call of this table whose `name` an event carries: the very
    /// string of the entry (events name their op by the table's own `&'static str`), so
    /// an entry of another table with the same name is not found.
    pub fn call_named(&self, name: &str) -> Option<&OpSpec> {
        let same = |spec: &&OpSpec| std::ptr::eq(spec.name.as_str(), name);
        self.ops
            .iter()
            .find(same)
            .or_else(|| self.modules.iter().map(|m| &m.call).find(same))
    }

    pub fn all(&self) -> &[OpSpec] {
        &self.ops
    }

    pub fn modules(&self) -> &[ModuleSpec] {
        &self.modules
    }

    /// The `library` names of the merged files.
    pub fn libraries(&self) -> &[String] {
        &self.libraries
    }
}

fn read_header(file: &str, value: &toml::Table) -> Result<RawHeader, TableError> {
    let header = value.get("table").cloned().ok_or_else(|| TableError {
        file: file.into(),
        entry: None,
        field: Some("table".into()),
        message: "missing the `[table]` header".into(),
    })?;
    header.try_into().map_err(|e: toml::de::Error| TableError {
        file: file.into(),
        entry: Some("[table]".into()),
        field: None,
        message: e.message().to_string(),
    })
}

fn entries(file: &str, value: &toml::Table, key: &str) -> Result<Vec<toml::Value>, TableError> {
    if let Some(unknown) = value
        .keys()
        .find(|k| !matches!(k.as_str(), "table" | "op" | "module"))
    {
        return Err(TableError {
            file: file.into(),
            entry: None,
            field: Some(unknown.clone()),
            message: "unknown top-level key (expected `table`, `op`, `module`)".into(),
        });
    }
    match value.get(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(TableError {
            file: file.into(),
            entry: None,
            field: Some(key.into()),
            message: format!("`{key}` must be an array of tables (`[[{key}]]`)"),
        }),
    }
}

fn entry_label(what: &str, raw: &toml::Value, index: usize) -> String {
    match raw.get("name").and_then(|n| n.as_str()) {
        Some(name) => format!("{what} `{name}`"),
        None => format!("{what} #{} (no name)", index + 1),
    }
}

/// Builds the error for one field of one table entry.
fn entry_error<'a>(file: &'static str, label: &'a str) -> impl Fn(&str, String) -> TableError + 'a {
    move |field, message| TableError {
        file: file.into(),
        entry: Some(label.into()),
        field: Some(field.into()),
        message,
    }
}

/// An entry's kind and semantics (its own, or the table's default), checked to go together.
fn kind_and_semantics(
    raw_kind: &str,
    raw_semantics: Option<&str>,
    default_semantics: Semantics,
    err: &impl Fn(&str, String) -> TableError,
) -> Result<(OpKind, Semantics), TableError> {
    let kind = parse_kind(raw_kind).map_err(|m| err("kind", m))?;
    let semantics =
        parse_semantics(raw_semantics, default_semantics).map_err(|m| err("semantics", m))?;
    if !kind.supports(semantics) {
        return Err(err(
            "semantics",
            format!("kind `{kind}` has no `{}` semantics", semantics.name()),
        ));
    }
    Ok((kind, semantics))
}

fn parse_kind(name: &str) -> Result<OpKind, String> {
    OpKind::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = OpKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown kind `{name}` (known kinds: {})", known.join(", "))
    })
}

fn parse_semantics(name: Option<&str>, default: Semantics) -> Result<Semantics, String> {
    match name {
        None => Ok(default),
        Some(s) => Semantics::from_name(s)
            .ok_or_else(|| format!("unknown semantics `{s}` (known: torch, candle)")),
    }
}

fn check_variant(kind: OpKind, variant: Option<&str>) -> Result<(), String> {
    match variant {
        None => Ok(()),
        Some(v) if kind.variants().contains(&v) => Ok(()),
        Some(v) if kind.variants().is_empty() => {
            Err(format!("kind `{kind}` takes no variant (got `{v}`)"))
        }
        Some(v) => Err(format!(
            "unknown variant `{v}` of kind `{kind}` (known: {})",
            kind.variants().join(", ")
        )),
    }
}

/// Every parameter the kind's transfer function reads must be declared.
fn check_required(kind: OpKind, params: &[ParamSpec], also: &[ParamSpec]) -> Result<(), String> {
    for alternatives in kind.required_params() {
        let found = alternatives
            .iter()
            .any(|name| params.iter().chain(also).any(|p| p.answers_to(name)));
        if !found {
            return Err(format!(
                "kind `{kind}` reads a parameter named {}, which is not declared",
                alternatives
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &'static str) -> Result<OpTable, TableError> {
        OpTable::from_sources(&[("rules/test.toml", text)])
    }

    #[test]
    fn every_embedded_table_loads() {
        for sources in [
            &[TORCH_RULES][..],
            &[EINOPS_RULES],
            &[TORCH_RULES, EINOPS_RULES],
            &[CANDLE_RULES],
            &[TCH_RULES],
        ] {
            if let Err(e) = OpTable::from_sources(sources) {
                panic!("{e}");
            }
        }
        assert!(!OpTable::torch().all().is_empty());
        assert!(!OpTable::einops().all().is_empty());
    }

    #[test]
    fn input_sizes_must_name_a_constructor_parameter() {
        let module = |input_sizes: &str| {
            let text = format!(
                r#"
                [table]
                library = "t"
                [[module]]
                name = "Linear"
                classes = ["t.Linear"]
                kind = "linear_module"
                init = ["in_features: int", "out_features: int"]
                input_sizes = [{input_sizes}]
                forward = ["input: tensor"]
                "#
            );
            OpTable::from_sources(&[("rules/test.toml", Box::leak(text.into_boxed_str()))])
        };
        let table = module(r#""in_features: -1""#).expect("a valid entry");
        let spec = &table.modules()[0];
        assert_eq!(spec.input_sizes[0].param, "in_features");
        assert_eq!(spec.input_sizes[0].at, InputDims::Dim(-1));
        let e = module(r#""in_feature: -1""#).unwrap_err();
        assert!(
            e.to_string()
                .contains("`in_feature` is not a constructor parameter"),
            "{e}"
        );
        let e = module(r#""in_features: last""#).unwrap_err();
        assert!(
            e.to_string().contains("neither a dim nor `trailing`"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_file_entry_and_field() {
        let e = load(
            r#"
            [table]
            library = "t"
            [[op]]
            name = "view"
            kind = "viw"
            methods = ["view"]
            params = ["input: tensor", "*size: shape"]
            "#,
        )
        .unwrap_err();
        assert_eq!(e.file, "rules/test.toml");
        assert_eq!(e.entry.as_deref(), Some("op `view`"));
        assert_eq!(e.field.as_deref(), Some("kind"));
        assert!(
            e.to_string()
                .starts_with("rules/test.toml: op `view`: field `kind`: unknown kind `viw`"),
            "{e}"
        );

        let e = load(
            r#"
            [table]
            library = "t"
            [[op]]
            name = "transpose"
            kind = "transpose"
            methods = ["transpose"]
            params = ["input: tensor", "dim0: dim", "dim_1: dim"]
            "#,
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("params"));
        assert!(e.message.contains("`dim1`"), "{e}");

        let e = load(
            r#"
            [table]
            library = "t"
            [[op]]
            name = "x"
            kind = "alias"
            methods = ["detach"]
            params = ["input: tensor"]
            colour = "red"
            "#,
        )
        .unwrap_err();
        assert_eq!(e.entry.as_deref(), Some("op `x`"));
        assert!(e.message.contains("colour"), "{e}");

        let e = load(
            r#"
            [table]
            library = "t"
            [[op]]
            name = "a"
            kind = "alias"
            methods = ["detach"]
            params = ["input: tensor"]
            [[op]]
            name = "b"
            kind = "alias"
            methods = ["detach"]
            params = ["input: tensor"]
            "#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("`detach` is already spelled by op `a`"),
            "{e}"
        );

        let e = load("[table]\nlibrary = 't'\n[[op]]\nname = 'p'\nkind = 'size'\nattributes = ['shape']\nparams = ['input: tensor', 'dim: dim']\n")
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("attributes"));

        let e = load("[table]\nlibrary = 't'\n[[op]]\nname = 'p'\nkind = 'transpose'\nsemantics = 'candle'\nmethods = ['transpose']\nparams = ['input: tensor', 'dim0: dim', 'dim1: dim']\n");
        // transpose does support candle; a kind that does not is rejected:
        assert!(e.is_ok());
        let e = load("[table]\nlibrary = 't'\n[[op]]\nname = 'p'\nkind = 'einops_rearrange'\nsemantics = 'candle'\nfunctions = ['f']\nparams = ['tensor: any', 'pattern: str', '**axes_lengths: int']\n")
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("semantics"));

        let e = load("not toml [").unwrap_err();
        assert!(e.message.starts_with("not valid TOML"), "{e}");
    }

    #[test]
    fn namespaces_qualify_functions_and_modules() {
        let t = OpTable::torch();
        assert_eq!(t.qualify("F.softmax"), "torch.nn.functional.softmax");
        assert_eq!(t.qualify("nn.Linear"), "torch.nn.Linear");
        assert_eq!(t.qualify("torch.nn.Linear"), "torch.nn.Linear");
        assert_eq!(t.qualify("Fx.softmax"), "Fx.softmax");
    }
}
