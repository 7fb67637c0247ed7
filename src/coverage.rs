//! What the analysis understood: of the call sites of the ops the layout rules are about,
//! how many it reached, how many it decided, and why it left the others unknown. Counted
//! per file by `lints::coverage`, summed over the run, printed by `--statistics`.
//!
//! Values only: this module depends on nothing else in the crate.

use std::collections::BTreeMap;

use serde::Serialize;

/// The ops whose sites are counted, grouped as the rules see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpFamily {
    /// `view`, `reshape`, `flatten`, `ravel`, einops `rearrange` (SL001, SL002, SL003).
    ShapeChange,
    /// `matmul`, `@`, `mm`, `bmm`, `addmm`, `baddbmm`, candle's `matmul` (SL005).
    Matmul,
    /// Kernels that reject a non-contiguous input (SL006).
    RequiresContiguous,
}

impl OpFamily {
    pub const ALL: [OpFamily; 3] = [
        OpFamily::ShapeChange,
        OpFamily::Matmul,
        OpFamily::RequiresContiguous,
    ];

    /// How the statistics name the family.
    pub fn label(self) -> &'static str {
        match self {
            OpFamily::ShapeChange => "view/reshape/flatten/rearrange",
            OpFamily::Matmul => "matmul family",
            OpFamily::RequiresContiguous => "requires-contiguous",
        }
    }
}

/// The sites of one family.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FamilyCounts {
    /// Call sites some analysis reached.
    pub reached: usize,
    /// Sites where some analysis knew every input alternative and decided the op's outcome.
    pub decided: usize,
    /// The other reached sites.
    pub unknown: usize,
    /// Why sites were left unknown (one reason per site), by the reason's description.
    pub reasons: BTreeMap<&'static str, usize>,
}

impl FamilyCounts {
    /// The reasons, most frequent first (ties by name).
    pub fn top_reasons(&self) -> Vec<(&'static str, usize)> {
        let mut reasons: Vec<(&'static str, usize)> =
            self.reasons.iter().map(|(r, n)| (*r, *n)).collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        reasons
    }

    fn add(&mut self, other: &FamilyCounts) {
        self.reached += other.reached;
        self.decided += other.decided;
        self.unknown += other.unknown;
        for (reason, n) in &other.reasons {
            *self.reasons.entry(reason).or_insert(0) += n;
        }
    }
}

/// The sites of every family, of one file or of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteCounts {
    pub families: BTreeMap<OpFamily, FamilyCounts>,
}

impl SiteCounts {
    /// Count one reached site: decided, or left unknown for `reason`.
    pub fn record(&mut self, family: OpFamily, unknown: Option<&'static str>) {
        let counts = self.families.entry(family).or_default();
        counts.reached += 1;
        match unknown {
            None => counts.decided += 1,
            Some(reason) => {
                counts.unknown += 1;
                *counts.reasons.entry(reason).or_insert(0) += 1;
            }
        }
    }

    pub fn add(&mut self, other: &SiteCounts) {
        for (family, counts) in &other.families {
            self.families.entry(*family).or_default().add(counts);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.families.values().all(|c| c.reached == 0)
    }
}
