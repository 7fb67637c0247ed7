//! Op *kinds*: the names a table entry uses to pick its transfer function.
//!
//! Many spellings share one behaviour (`transpose`, `swapaxes`, `swapdims`, `torch.transpose`
//! are all [`OpKind::Transpose`]); a kind is the unit of behaviour, and each kind has exactly
//! one transfer function (the `match` in [`super::apply`] is exhaustive, so a kind without
//! one does not compile). A kind reads its arguments *by parameter name*; the names it needs
//! are declared here ([`OpKind::required_params`]) and the table loader checks that every
//! entry of that kind declares them, so a typo in a table fails a unit test, not a lint run.

use std::fmt;

/// Library conventions a kind may depend on (the table's or the entry's `semantics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// PyTorch / tch-rs (libtorch): spec §1–§7, §9.
    Torch,
    /// candle: spec §10 (contiguity without the zero-element shortcut, contiguous
    /// element-wise outputs, `t()` on the last two dims, …).
    Candle,
}

impl Semantics {
    pub fn from_name(name: &str) -> Option<Semantics> {
        match name {
            "torch" => Some(Semantics::Torch),
            "candle" => Some(Semantics::Candle),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Torch => "torch",
            Semantics::Candle => "candle",
        }
    }
}

macro_rules! op_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, requires [$( [$($param:literal),+] ),*]; )*) => {
        /// The behaviour of an op; see the module docs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum OpKind {
            $( $(#[$doc])* $variant, )*
        }

        impl OpKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [OpKind] = &[ $( OpKind::$variant, )* ];

            /// The spelling used in the tables (`kind = "…"`).
            pub fn name(self) -> &'static str {
                match self { $( OpKind::$variant => $name, )* }
            }

            pub fn from_name(name: &str) -> Option<OpKind> {
                match name { $( $name => Some(OpKind::$variant), )* _ => None }
            }

            /// Parameters the transfer function reads. Each inner list is a set of
            /// alternatives: an entry must declare at least one of them (by name or alias).
            pub fn required_params(self) -> &'static [&'static [&'static str]] {
                match self { $( OpKind::$variant => &[ $( &[$($param),+], )* ], )* }
            }
        }
    };
}

op_kinds! {
    // ---- shape changes that may be a view or a copy (spec §2–§4) ----
    /// `view(shape)` / `view_as(other)`: computeStride; fails with E_VIEW.
    View = "view", requires [["input"], ["size", "other"]];
    /// `reshape(shape)` / `reshape_as(other)`: a view when possible, else a contiguous copy.
    Reshape = "reshape", requires [["input"], ["shape", "other"]];
    Flatten = "flatten", requires [["input"], ["start_dim"], ["end_dim"]];
    Unflatten = "unflatten", requires [["input"], ["dim"], ["sizes"]];
    /// `ravel()`: copies whenever the input is not contiguous.
    Ravel = "ravel", requires [["input"]];
    Contiguous = "contiguous", requires [["input"]];
    /// `clone(memory_format=preserve)`: always a copy, strides per §5 "Copying ops".
    Clone = "clone", requires [["input"]];
    /// dtype/device conversions (`to`, `float`, `half`, `type_as`, `cuda`…): either `self`
    /// (nothing changes) or a `preserve_format` copy.
    Convert = "convert", requires [["input"]];
    /// Same tensor geometry (`detach`, `alias`, `nn.Identity`, `requires_grad_`).
    Alias = "alias", requires [["input"]];
    /// In-place ops (`add_`, `x += y`): the result is the receiver, layout unchanged.
    InPlace = "in_place", requires [["input"]];

    // ---- pure geometry: always views (spec §5) ----
    Transpose = "transpose", requires [["input"], ["dim0"], ["dim1"]];
    /// `t()`: rank ≤ 2 in PyTorch; the last two dims in candle.
    MatrixTranspose = "t", requires [["input"]];
    /// `.T`: reverse all dims.
    ReverseDims = "reverse_dims", requires [["input"]];
    /// `.mT` / `.mH` / `adjoint()`: swap the last two dims (rank ≥ 2).
    BatchTranspose = "batch_transpose", requires [["input"]];
    Permute = "permute", requires [["input"], ["dims"]];
    Movedim = "movedim", requires [["input"], ["source"], ["destination"]];
    Squeeze = "squeeze", requires [["input"], ["dim"]];
    Unsqueeze = "unsqueeze", requires [["input"], ["dim"]];
    /// `torch.view_as_real(z)`: a complex tensor seen as pairs of reals: a last dim of
    /// size 2 and stride 1, every other stride and the offset doubled (a view).
    ViewAsReal = "view_as_real", requires [["input"]];
    /// `expand(sizes)` / `expand_as(other)` / `broadcast_to(shape)`.
    Expand = "expand", requires [["input"], ["size", "other"]];
    Narrow = "narrow", requires [["input"], ["dim"], ["start"], ["length"]];
    Select = "select", requires [["input"], ["dim"], ["index"]];
    /// `split(int | list, dim)` and `split_with_sizes`.
    Split = "split", requires [["input"], ["split_size"], ["dim"]];
    Chunk = "chunk", requires [["input"], ["chunks"], ["dim"]];
    TensorSplit = "tensor_split", requires [["input"], ["indices_or_sections"], ["dim"]];
    Unbind = "unbind", requires [["input"], ["dim"]];
    /// `torch.meshgrid(*tensors, indexing)`: one expanded view per input (spec §5).
    Meshgrid = "meshgrid", requires [["tensors"], ["indexing"]];
    Diagonal = "diagonal", requires [["input"], ["offset"], ["dim1"], ["dim2"]];
    Unfold = "unfold", requires [["input"], ["dimension"], ["size"], ["step"]];
    AsStrided = "as_strided", requires [["input"], ["size"], ["stride"], ["storage_offset"]];
    /// Basic indexing `x[i, a:b, None, ...]` (advanced indexing gives an unknown layout).
    Index = "index", requires [["input"], ["indices"]];

    // ---- computations with a known output layout (spec §6) ----
    /// Element-wise ops: broadcasting + the TensorIterator output-stride rule over every
    /// `tensor` / `tensor_or_scalar` parameter, in parameter order.
    Elementwise = "elementwise", requires [["input"]];
    /// `dropout`: element-wise when training, the input itself in eval mode; reads
    /// `training` when the entry has it (modules do not: their mode is unknown).
    Dropout = "dropout", requires [["input"]];
    /// Same shape, freshly allocated contiguous output (softmax, layer_norm, rms_norm, masked_fill…).
    ContiguousResult = "contiguous_result", requires [["input"]];
    /// Same shape, output in the input's `suggest_memory_format()` (batch_norm, group_norm).
    SuggestedFormatResult = "suggested_format_result", requires [["input"]];
    /// A new tensor of another shape (convolution, pooling, interpolation, padding) that is
    /// contiguous when its input is (torch 2.15, `scripts/oracle/format_following.py`);
    /// other inputs are not modelled (channels-last stays channels-last, a transposed
    /// input of `avg_pool1d` gives neither).
    FormatFollowing = "format_following", requires [["input"]];
    /// Reductions over `dim` (None = all) with `keepdim`; contiguous output.
    Reduction = "reduction", requires [["input"], ["dim"], ["keepdim"]];
    /// `max`/`min`/`median`/`mode` with a dim → (values, indices); without → a 0-d tensor;
    /// with a tensor → element-wise `maximum`/`minimum`.
    ReductionWithIndices = "reduction_with_indices", requires [["input"], ["dim"], ["keepdim"]];
    /// `topk(k, dim)` / `kthvalue`-like selections → (values, indices): contiguous, the dim's
    /// size replaced by `k` (checked on torch 2.15 for transposed inputs too).
    Topk = "topk", requires [["input"], ["k"], ["dim"]];
    Matmul = "matmul", requires [["input"], ["other"]];
    Mm = "mm", requires [["input"], ["mat2"]];
    Bmm = "bmm", requires [["input"], ["mat2"]];
    Addmm = "addmm", requires [["input"], ["mat1"], ["mat2"]];
    Baddbmm = "baddbmm", requires [["input"], ["batch1"], ["batch2"]];
    /// `F.linear(input, weight, bias)`.
    Linear = "linear", requires [["input"], ["weight"]];
    /// `nn.Linear(in, out)(input)`.
    LinearModule = "linear_module", requires [["input"], ["out_features"]];
    /// `F.embedding(input, weight)`.
    Embedding = "embedding", requires [["input"], ["weight"]];
    /// `nn.Embedding(n, dim)(input)`.
    EmbeddingModule = "embedding_module", requires [["input"], ["embedding_dim"]];
    /// Outputs whose layout the linter does not model: conv, pad, interpolate, normalize…
    UnknownLayout = "unknown_layout", requires [];
    /// `scaled_dot_product_attention`: one output layout per kernel family
    /// (`layout::sdpa`); which kernel runs is a run-time choice, so the op alone says
    /// nothing and the analysis keeps each as an alternative named by its kernel.
    Sdpa = "sdpa", requires [["query"], ["value"]];
    /// `torch.einsum(equation, *operands)`: decided for the equations of `layout::einsum`.
    Einsum = "einsum", requires [["equation"], ["operands"]];
    Cat = "cat", requires [["tensors"], ["dim"]];
    Stack = "stack", requires [["tensors"], ["dim"]];
    Hstack = "hstack", requires [["tensors"]];
    Vstack = "vstack", requires [["tensors"]];
    Repeat = "repeat", requires [["input"], ["repeats"]];
    Tile = "tile", requires [["input"], ["dims"]];
    RepeatInterleave = "repeat_interleave", requires [["input"], ["repeats"], ["dim"]];
    IndexSelect = "index_select", requires [["input"], ["dim"], ["index"]];
    Gather = "gather", requires [["input"], ["dim"], ["index"]];

    // ---- creation ----
    /// `zeros(*size)`, `x.new_zeros(size)`, `full(size, v)`: contiguous.
    Create = "create", requires [["size"]];
    /// `zeros_like(x, memory_format=preserve)`: strides like `clone`, no copy of data.
    CreateLike = "create_like", requires [["input"]];
    Arange = "arange", requires [["start"], ["end"], ["step"]];
    Linspace = "linspace", requires [["steps"]];
    Eye = "eye", requires [["n"], ["m"]];
    /// `torch.tensor(data)`: shape from a literal (nested) list.
    TensorLiteral = "tensor_literal", requires [["data"]];

    // ---- queries (results are values, not tensors) ----
    /// `x.size()`, `x.size(d)`, `x.shape`.
    Size = "size", requires [["input"], ["dim"]];
    /// `x.dim()`, `x.ndim`.
    Ndim = "ndim", requires [["input"]];
    Numel = "numel", requires [["input"]];
    Stride = "stride", requires [["input"], ["dim"]];
    IsContiguous = "is_contiguous", requires [["input"]];
    /// `len(x)`: the first dim.
    Len = "len", requires [["input"]];
    /// `torch.jit.is_tracing()` and the like: false, since the analysis follows eager
    /// execution (tracing and compiling run the same layout ops).
    EagerModeTest = "eager_mode_test", requires [];

    /// `nn.GRU`/`nn.LSTM`/`nn.RNN(…)(input)`: `(output, h_n)`, the output
    /// `batch_first` the transpose of a contiguous (T, B, D·H) tensor.
    Recurrent = "recurrent", requires [["input"], ["hidden_size"], ["batch_first"], ["bidirectional"], ["num_layers"]];

    // ---- einops (spec §8) ----
    EinopsRearrange = "einops_rearrange", requires [["tensor"], ["pattern"], ["axes_lengths"]];
    EinopsReduce = "einops_reduce", requires [["tensor"], ["pattern"], ["reduction"], ["axes_lengths"]];
    EinopsRepeat = "einops_repeat", requires [["tensor"], ["pattern"], ["axes_lengths"]];
    /// `einops.einsum(*tensors, pattern)`: `torch.einsum` with the pattern's axis names
    /// spelled as letters.
    EinopsEinsum = "einops_einsum", requires [["tensors_and_pattern"]];
}

impl OpKind {
    /// Matrix products: the left operand's last dim contracts with the right one's rows.
    pub fn is_product(self) -> bool {
        matches!(
            self,
            OpKind::Matmul | OpKind::Mm | OpKind::Bmm | OpKind::Addmm | OpKind::Baddbmm
        )
    }

    /// The `variant` options a kind understands (an entry's `variant = "…"` must be one).
    pub fn variants(self) -> &'static [&'static str] {
        match self {
            // `not_a_tensor`: the call returns something else (a tuple), value unknown.
            OpKind::UnknownLayout => &["not_a_tensor"],
            // candle: tensor operands must have identical shapes (no broadcasting).
            // norm_divisor (`F.normalize`): divided by a broadcast reduction of itself.
            OpKind::Elementwise => &["same_shape", "norm_divisor"],
            // Feature dropout (dropout2d…): training multiplies by a broadcast mask.
            OpKind::Dropout => &["feature"],
            // Which spelling's error message to give (default: `.mT`).
            OpKind::BatchTranspose => &["mH", "adjoint"],
            // rms_norm: the output is known (row-major) only for a row-major input.
            // masked_fill: the output has the broadcast shape of (mask, input).
            // candle's to_dtype/to_device: the input itself when nothing changes.
            OpKind::ContiguousResult => {
                &["only_row_major", "broadcast_mask", "alias_when_unchanged"]
            }
            // batch_norm, roll: an empty input is cloned (preserve_format).
            OpKind::SuggestedFormatResult => &["clone_if_empty"],
            // fill_/zero_/masked_fill_: no check for overlapping receivers; indexed writes
            // (`scatter_`, `index_put_`, `t[...] = v`): no check of the operands either
            // (an index tensor need not broadcast to the receiver).
            OpKind::InPlace => &["no_overlap_check", "indexed"],
            // nn.LSTM: the second result is the pair (h_n, c_n).
            OpKind::Recurrent => &["lstm"],
            // candle's `get(i)`: the select reshaped, a copy of a non-contiguous select.
            OpKind::Select => &["reshape"],
            // candle's `i(a..b)`: a range outside the dim fails (a narrow) instead of being
            // clamped, so bounds the analysis cannot place are within the dim.
            OpKind::Index => &["checked_bounds"],
            _ => &[],
        }
    }

    /// Kinds that have candle semantics (spec §10): either a candle rule in
    /// `kinds/candle.rs`, or PyTorch's rule because candle's geometry is the same there.
    /// The loader rejects `semantics = "candle"` on any other kind.
    /// Kinds that make a new tensor from sizes or data and take no input tensor
    /// (`torch.zeros(B, T)`: `B` is a size, not the input).
    /// Kinds whose result is always a newly written contiguous tensor, whatever the layout
    /// of the input (torch 2.15: transposed, broadcast and sliced operands of `matmul`,
    /// `bmm`, `baddbmm`, `linear` all give contiguous outputs; `softmax`-like ops allocate
    /// a fresh output; `contiguous()` returns a contiguous tensor by definition). So even
    /// an input of unknown layout gives a known-contiguous (shape unknown) result.
    pub fn output_always_contiguous(self) -> bool {
        matches!(
            self,
            OpKind::Matmul
                | OpKind::Mm
                | OpKind::Bmm
                | OpKind::Addmm
                | OpKind::Baddbmm
                | OpKind::Linear
                | OpKind::LinearModule
                | OpKind::ContiguousResult
                | OpKind::Contiguous
        )
    }

    /// Kinds applied once to all their arguments rather than to each alternative of a first
    /// tensor argument: the factories, and `einsum`, whose first argument is its equation
    /// (einops' takes its pattern last).
    pub fn applied_without_input(self) -> bool {
        self.is_factory()
            || matches!(
                self,
                OpKind::Einsum | OpKind::EinopsEinsum | OpKind::EagerModeTest
            )
    }

    pub fn is_factory(self) -> bool {
        matches!(
            self,
            OpKind::Create
                | OpKind::Arange
                | OpKind::Linspace
                | OpKind::Eye
                | OpKind::TensorLiteral
        )
    }

    pub fn supports(self, semantics: Semantics) -> bool {
        match semantics {
            Semantics::Torch => true,
            Semantics::Candle => matches!(
                self,
                // candle's own rules
                OpKind::Reshape
                    | OpKind::Flatten
                    | OpKind::Contiguous
                    | OpKind::ContiguousResult
                    | OpKind::MatrixTranspose
                    | OpKind::Narrow
                    | OpKind::Unsqueeze
                    | OpKind::Chunk
                    | OpKind::Expand
                    | OpKind::Matmul
                    | OpKind::Cat
                    | OpKind::Stack
                    | OpKind::Elementwise
                    | OpKind::Reduction
                    | OpKind::Create
                    // the same geometry in both libraries
                    | OpKind::Alias
                    | OpKind::Transpose
                    | OpKind::Permute
                    | OpKind::Squeeze
                    | OpKind::Select
                    | OpKind::Size
                    | OpKind::Ndim
                    | OpKind::Numel
                    | OpKind::UnknownLayout
            ),
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &k in OpKind::ALL {
            assert_eq!(OpKind::from_name(k.name()), Some(k));
            assert!(seen.insert(k.name()), "duplicate kind name {}", k.name());
        }
        assert_eq!(OpKind::from_name("no_such_kind"), None);
    }
}
