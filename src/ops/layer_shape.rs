//! The output shape of a convolution, pooling or resampling layer (a module entry's
//! `output_shape` in rules/*.toml): the input's shape with the channel dim and the trailing
//! spatial dims replaced. Only the shape: the layout is the input's memory format, which
//! the analysis knows only for a contiguous input (`OpKind::FormatFollowing`). The layer's
//! constructor arguments come in as a lookup by parameter name (the loader, `table`, knows
//! this module; binding, `bind`, knows the loader).
//!
//! Only sizes the arguments fix are given: a spatial size kept (a 1×1 convolution, stride 1
//! with "same" padding) or set (an adaptive pool's `output_size`), a convolution's
//! `out_channels`. A layer whose output needs any other size gets none: a size made up for
//! it could be 1, and `squeeze` or a merge would then be decided wrongly.

use super::value::ArgValue;
use crate::layout::Dim;

/// How a layer computes its output's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeRule {
    /// `ConvNd(in_channels, out_channels, kernel_size, stride, padding, dilation, …)`.
    Conv,
    /// `MaxPoolNd` / `AvgPoolNd(kernel_size, stride=None, padding, dilation)`: channels kept.
    Pool,
    /// `AdaptiveAvgPoolNd(output_size)`: channels kept, spatial sizes given (`None` keeps one).
    Adaptive,
    /// Upsampling and padding: channels kept, spatial sizes new.
    Resample,
}

/// A module entry's `output_shape`: the rule and how many trailing dims are spatial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputShape {
    pub rule: ShapeRule,
    pub spatial: usize,
}

impl OutputShape {
    /// `"conv 2"`, `"pool 1"`, `"adaptive 3"`, `"resample 2"`.
    pub fn parse(text: &str) -> Result<OutputShape, String> {
        let (rule, n) = text
            .split_once(' ')
            .ok_or_else(|| format!("`{text}`: expected `rule spatial-dims`"))?;
        let rule = match rule {
            "conv" => ShapeRule::Conv,
            "pool" => ShapeRule::Pool,
            "adaptive" => ShapeRule::Adaptive,
            "resample" => ShapeRule::Resample,
            other => return Err(format!("`{other}`: not conv, pool, adaptive or resample")),
        };
        let spatial = n
            .trim()
            .parse()
            .ok()
            .filter(|n| (1..=3).contains(n))
            .ok_or_else(|| format!("`{n}`: expected 1, 2 or 3 spatial dims"))?;
        Ok(OutputShape { rule, spatial })
    }

    /// The output's sizes for an input of `shape` (batched or not), built with constructor
    /// arguments `args`. `None` when the input's rank does not fit the layer (it raises),
    /// the call may return a tuple (`return_indices=True`) or a size is not fixed.
    pub fn output<'a>(
        &self,
        args: &dyn Fn(&str) -> Option<&'a ArgValue<Dim>>,
        shape: &[Dim],
    ) -> Option<Vec<Dim>> {
        let rank = shape.len();
        if rank != self.spatial + 1 && rank != self.spatial + 2 {
            return None;
        }
        if matches!(args("return_indices"), Some(a) if a.as_bool() != Some(false)) {
            return None;
        }
        let mut out = shape.to_vec();
        let first_spatial = rank - self.spatial;
        if self.rule == ShapeRule::Conv {
            out[first_spatial - 1] = args("out_channels")?.as_size()?;
        }
        for i in 0..self.spatial {
            let at = first_spatial + i;
            out[at] = self.kept_or_given(args, i, &shape[at])?;
        }
        Some(out)
    }

    /// Spatial dim `i`'s output size when the arguments give it exactly.
    fn kept_or_given<'a>(
        &self,
        args: &dyn Fn(&str) -> Option<&'a ArgValue<Dim>>,
        i: usize,
        input: &Dim,
    ) -> Option<Dim> {
        match self.rule {
            ShapeRule::Adaptive => match per_dim(args("output_size")?, i, self.spatial)? {
                ArgValue::None => Some(input.clone()),
                size => size.as_size(),
            },
            ShapeRule::Conv | ShapeRule::Pool => self.keeps_size(args, i).then(|| input.clone()),
            ShapeRule::Resample => None,
        }
    }

    /// Does spatial dim `i` keep its size: stride 1, dilation 1 and padding `(k - 1) / 2`
    /// of an odd kernel `k` (or `padding="same"`)?
    fn keeps_size<'a>(&self, args: &dyn Fn(&str) -> Option<&'a ArgValue<Dim>>, i: usize) -> bool {
        let lit = |name: &str, default: Option<i64>| match args(name) {
            None | Some(ArgValue::None) => default,
            Some(v) => per_dim(v, i, self.spatial).and_then(|v| v.as_i64()),
        };
        let Some(k) = lit("kernel_size", None) else {
            return false;
        };
        // A pool's stride defaults to its kernel size.
        let stride_default = if self.rule == ShapeRule::Pool { k } else { 1 };
        let same_padding = matches!(args("padding"), Some(ArgValue::Str(s)) if s == "same");
        let padding = if same_padding {
            Some((k - 1) / 2)
        } else {
            lit("padding", Some(0))
        };
        let no_output_padding = lit("output_padding", Some(0)) == Some(0);
        no_output_padding
            && lit("stride", Some(stride_default)) == Some(1)
            && lit("dilation", Some(1)) == Some(1)
            && k % 2 == 1
            && padding == Some((k - 1) / 2)
    }
}

/// The value for spatial dim `i` of an argument given as one int or one per dim.
fn per_dim<S: Clone>(v: &ArgValue<S>, i: usize, spatial: usize) -> Option<ArgValue<S>> {
    match v {
        ArgValue::IntList(items) if items.len() == spatial => items.get(i).cloned(),
        ArgValue::IntList(_) => None,
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::Dim;
    use crate::ops::{bind_module_init, ArgValue, OpTable};

    fn sym(s: &str) -> Dim {
        Dim::sym(s)
    }

    fn int(n: i64) -> ArgValue<Dim> {
        ArgValue::Int(Dim::lit(n))
    }

    /// The output sizes of `class(*positional, **keywords)` called on `shape`.
    fn run(
        class: &str,
        positional: Vec<ArgValue<Dim>>,
        keywords: &[(&str, ArgValue<Dim>)],
        shape: &[&str],
    ) -> Option<Vec<String>> {
        let m = OpTable::torch().module(class).unwrap();
        let kw = keywords
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let args = bind_module_init(m, positional, kw).unwrap();
        let shape: Vec<Dim> = shape.iter().map(|s| sym(s)).collect();
        m.output_shape?
            .output(&|name| args.get(name), &shape)
            .map(|v| v.iter().map(|d| d.to_string()).collect())
    }

    #[test]
    fn a_pointwise_convolution_keeps_the_spatial_sizes() {
        let conv = || vec![ArgValue::Int(sym("C")), ArgValue::Int(sym("C2")), int(1)];
        let out = run("torch.nn.Conv2d", conv(), &[], &["B", "C", "H", "W"]);
        assert_eq!(out.unwrap(), ["B", "C2", "H", "W"]);
        let unbatched = run("torch.nn.Conv2d", conv(), &[], &["C", "H", "W"]);
        assert_eq!(unbatched.unwrap(), ["C2", "H", "W"]);
        assert_eq!(
            run("torch.nn.Conv2d", conv(), &[], &["B", "C", "H", "W", "D"]),
            None
        );
    }

    #[test]
    fn same_padding_keeps_sizes_and_a_stride_gives_none() {
        let conv = || vec![ArgValue::Int(sym("C")), ArgValue::Int(sym("C2")), int(3)];
        let same = run(
            "torch.nn.Conv1d",
            conv(),
            &[("padding", int(1))],
            &["B", "C", "T"],
        );
        assert_eq!(same.unwrap(), ["B", "C2", "T"]);
        let strided = [("padding", int(1)), ("stride", int(2))];
        let out = run("torch.nn.Conv1d", conv(), &strided, &["B", "C", "T"]);
        assert_eq!(out, None);
        let unpadded = run("torch.nn.Conv1d", conv(), &[], &["B", "C", "T"]);
        assert_eq!(unpadded, None);
    }

    #[test]
    fn pools_keep_channels_and_adaptive_pools_give_their_sizes() {
        let pool = run(
            "torch.nn.MaxPool2d",
            vec![int(2)],
            &[],
            &["B", "C", "H", "W"],
        );
        assert_eq!(pool, None);
        let same = [("stride", int(1)), ("padding", int(1))];
        let kept = run(
            "torch.nn.MaxPool2d",
            vec![int(3)],
            &same,
            &["B", "C", "H", "W"],
        );
        assert_eq!(kept.unwrap(), ["B", "C", "H", "W"]);
        let sizes = ArgValue::IntList(vec![int(1), ArgValue::None]);
        let adaptive = run(
            "torch.nn.AdaptiveAvgPool2d",
            vec![sizes],
            &[],
            &["B", "C", "H", "W"],
        );
        assert_eq!(adaptive.unwrap(), ["B", "C", "1", "W"]);
        let indices = [("return_indices", ArgValue::Bool(true))];
        assert_eq!(
            run(
                "torch.nn.MaxPool2d",
                vec![int(2)],
                &indices,
                &["B", "C", "H", "W"]
            ),
            None
        );
    }
}
