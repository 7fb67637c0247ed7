//! Three-valued answers. Every predicate of the algebra answers yes / no / unknown;
//! a lint only fires on `Yes` (or `No`), never on `Unknown`.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Tri {
    Yes,
    No,
    Unknown,
}

impl Tri {
    pub fn from_bool(b: bool) -> Tri {
        if b {
            Tri::Yes
        } else {
            Tri::No
        }
    }
    pub fn is_yes(self) -> bool {
        self == Tri::Yes
    }
    pub fn is_no(self) -> bool {
        self == Tri::No
    }
    pub fn is_known(self) -> bool {
        self != Tri::Unknown
    }
    /// The known value, if any.
    pub fn known(self) -> Option<bool> {
        match self {
            Tri::Yes => Some(true),
            Tri::No => Some(false),
            Tri::Unknown => None,
        }
    }
    /// Kleene conjunction: `No` dominates.
    pub fn and(self, other: Tri) -> Tri {
        match (self, other) {
            (Tri::No, _) | (_, Tri::No) => Tri::No,
            (Tri::Yes, Tri::Yes) => Tri::Yes,
            _ => Tri::Unknown,
        }
    }
    /// Kleene disjunction: `Yes` dominates.
    pub fn or(self, other: Tri) -> Tri {
        match (self, other) {
            (Tri::Yes, _) | (_, Tri::Yes) => Tri::Yes,
            (Tri::No, Tri::No) => Tri::No,
            _ => Tri::Unknown,
        }
    }
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Tri {
        match self {
            Tri::Yes => Tri::No,
            Tri::No => Tri::Yes,
            Tri::Unknown => Tri::Unknown,
        }
    }
}
