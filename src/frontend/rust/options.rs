//! Which fields of a type the file ever sets to `None`: `Self { kv_cache: None, .. }` in a
//! constructor, `self.kv_cache = None` in a method.
//!
//! The IR erases `Option` (`Some(x)` is `x`), so `match &self.kv_cache { None => … }` only
//! becomes a test the analysis can name (`self.kv_cache is None`, see `statements.rs`)
//! for a field known to take the value `None`: a cache empty after `new`. A field that
//! holds whatever its constructor was given (`rotary_emb: Option<Arc<Rope>>`, `None` only
//! for some configurations) keeps an unknown test, whose branches join: naming its `None`
//! path would report what may never run.

use std::collections::{HashMap, HashSet};

use syn::visit::{self, Visit};

/// Type name → the fields the file sets to `None` somewhere.
pub(super) type NoneFields = HashMap<String, HashSet<String>>;

pub(super) fn fields_set_to_none(file: &syn::File) -> NoneFields {
    let mut scan = Scan {
        impl_type: None,
        out: NoneFields::new(),
    };
    scan.visit_file(file);
    scan.out
}

struct Scan {
    /// The type of the `impl` block being read (what `Self` and `self` are).
    impl_type: Option<String>,
    out: NoneFields,
}

impl Scan {
    fn add(&mut self, type_name: Option<String>, field: String) {
        if let Some(t) = type_name {
            self.out.entry(t).or_default().insert(field);
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item_impl(&mut self, block: &'ast syn::ItemImpl) {
        let outer = self.impl_type.take();
        self.impl_type = match &*block.self_ty {
            syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        visit::visit_item_impl(self, block);
        self.impl_type = outer;
    }

    fn visit_expr_struct(&mut self, record: &'ast syn::ExprStruct) {
        let named = record.path.segments.last().map(|s| s.ident.to_string());
        let type_name = match named.as_deref() {
            Some("Self") => self.impl_type.clone(),
            _ => named,
        };
        for field in &record.fields {
            if let (syn::Member::Named(name), true) = (&field.member, is_none(&field.expr)) {
                self.add(type_name.clone(), name.to_string());
            }
        }
        visit::visit_expr_struct(self, record);
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        if let (Some(field), true) = (self_field(&assign.left), is_none(&assign.right)) {
            self.add(self.impl_type.clone(), field);
        }
        visit::visit_expr_assign(self, assign);
    }
}

/// The expression `None`.
fn is_none(expr: &syn::Expr) -> bool {
    matches!(expr, syn::Expr::Path(p) if p.qself.is_none() && p.path.is_ident("None"))
}

/// `f` of `self.f`.
fn self_field(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Field(field) = expr else {
        return None;
    };
    let syn::Expr::Path(base) = &*field.base else {
        return None;
    };
    match (&field.member, base.path.is_ident("self")) {
        (syn::Member::Named(name), true) => Some(name.to_string()),
        _ => None,
    }
}
