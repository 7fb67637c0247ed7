//! Items: the file's functions, `impl` blocks, traits, `use` declarations and constants.
//!
//! - A free `fn` → `Module::functions`.
//! - `impl Attention { … }` and `impl Module for Attention { … }` → one `ir::Class`
//!   named `Attention` holding the methods of every such block, in source order (the trait
//!   paths are kept as the class's `bases`). A trait's default method bodies form a class
//!   named after the trait.
//! - A method with a receiver (`&self`, `&mut self`, `self`, `self: Box<Self>`) has
//!   `is_method = true`; the receiver is not a parameter. An associated function named
//!   `new`, `load` or `new_*`, or returning the type itself (`Self`, `Result<Self>`,
//!   `Option<Self>`, `Attention`), is a constructor (`is_constructor = true`; see
//!   `statements.rs` for how its struct literal becomes `self.field = …`).
//! - A parameter whose pattern is not a plain name (`(a, b): (usize, usize)`) is passed
//!   under a synthetic name (`$arg0`) and destructured by the body's first statement.
//! - `use a::b::{c, d as e};` → `Import { "a.b.c", Some("c") }`, `Import { "a.b.d",
//!   Some("e") }` (the shape of Python's `from a.b import c, d as e`); a glob import binds
//!   names we cannot know and is `Other`. `extern crate candle_core as candle;` →
//!   `Import { "candle_core", Some("candle") }`.
//! - `const N: usize = 8;` / `static` → `Assign` in the module body (or the function body).
//! - Inline `mod m { … }` items are lowered as if they were at the top level.

use std::sync::Arc;

use syn::{FnArg, ImplItem, Item, ReturnType, TraitItem, Type, UseTree};

use crate::ir::{Class, Function, Module, Param, Span, Stmt, Target, Targets};

use super::lowerer::{Dest, Lowerer};
use super::patterns::{name_expr, unraw};

/// A class being assembled from the `impl` blocks of one type.
struct ClassBuilder {
    name: String,
    methods: Vec<Arc<Function>>,
    bases: Vec<String>,
    span: Span,
}

/// A struct's fields whose declared type names a type: `(field, type, list)`.
type FieldTypes = Vec<(String, String, bool)>;

/// The module being assembled.
pub(super) struct ModuleBuilder {
    body: Vec<Stmt>,
    functions: Vec<Arc<Function>>,
    classes: Vec<ClassBuilder>,
    /// Per struct, its fields whose declared type names a type (see `ir::Class::field_types`);
    /// kept for the structs that become classes (those with an `impl`).
    struct_fields: Vec<(String, FieldTypes)>,
}

impl ModuleBuilder {
    pub(super) fn new() -> Self {
        ModuleBuilder {
            body: Vec::new(),
            functions: Vec::new(),
            classes: Vec::new(),
            struct_fields: Vec::new(),
        }
    }

    pub(super) fn finish(self) -> Module {
        let class_names: Vec<&str> = self.classes.iter().map(|c| c.name.as_str()).collect();
        let fields_of = |name: &str| -> FieldTypes {
            self.struct_fields
                .iter()
                .filter(|(s, _)| s == name)
                .flat_map(|(_, fields)| fields.iter())
                .filter(|(_, ty, _)| class_names.contains(&ty.as_str()))
                .cloned()
                .collect()
        };
        let field_types: Vec<FieldTypes> =
            self.classes.iter().map(|c| fields_of(&c.name)).collect();
        Module {
            language: crate::ir::Language::Rust,
            body: self.body,
            functions: self.functions,
            classes: self
                .classes
                .into_iter()
                .zip(field_types)
                .map(|(c, field_types)| {
                    Arc::new(Class {
                        name: c.name,
                        methods: c.methods,
                        bases: c.bases,
                        attrs: Vec::new(),
                        field_types,
                        span: c.span,
                    })
                })
                .collect(),
        }
    }

    fn class(&mut self, name: &str, span: Span) -> &mut ClassBuilder {
        let index = match self.classes.iter().position(|c| c.name == name) {
            Some(index) => index,
            None => {
                self.classes.push(ClassBuilder {
                    name: name.to_string(),
                    methods: Vec::new(),
                    bases: Vec::new(),
                    span,
                });
                self.classes.len() - 1
            }
        };
        &mut self.classes[index]
    }
}

impl Lowerer {
    /// Lower the items of a file (or of an inline module) into `module`.
    pub(super) fn lower_items(&mut self, items: &[Item], module: &mut ModuleBuilder) {
        for item in items {
            match item {
                Item::Fn(function) => {
                    let lowered = self.lower_function(
                        &function.sig,
                        &function.block,
                        self.span_of(function),
                        None,
                    );
                    module.functions.push(Arc::new(lowered));
                }
                Item::Impl(block) => self.lower_impl(block, module),
                Item::Struct(record) => {
                    if let syn::Fields::Named(fields) = &record.fields {
                        let typed = fields
                            .named
                            .iter()
                            .filter_map(|f| {
                                let (ty, list) = declared_struct_type(&f.ty)?;
                                Some((unraw(f.ident.as_ref()?), ty, list))
                            })
                            .collect();
                        module.struct_fields.push((unraw(&record.ident), typed));
                    }
                }
                Item::Trait(block) => self.lower_trait(block, module),
                Item::Mod(inline) => {
                    if let Some((_, items)) = &inline.content {
                        self.lower_items(items, module);
                    }
                }
                Item::Use(declaration) => {
                    self.lower_use(&declaration.tree, String::new(), &mut module.body)
                }
                Item::ExternCrate(krate) => {
                    let module_name = unraw(&krate.ident);
                    let alias = krate
                        .rename
                        .as_ref()
                        .map_or(module_name.clone(), |(_, rename)| unraw(rename));
                    if alias != "_" {
                        module.body.push(Stmt::Import {
                            module: module_name.into(),
                            alias: Some(alias.into()),
                            span: self.span_of(krate),
                        });
                    }
                }
                Item::Const(constant) => {
                    let span = self.span_of(constant);
                    self.lower_constant(&constant.ident, &constant.expr, span, &mut module.body);
                }
                Item::Static(constant) => {
                    let span = self.span_of(constant);
                    self.lower_constant(&constant.ident, &constant.expr, span, &mut module.body);
                }
                _ => {}
            }
        }
    }

    /// An item inside a function body.
    pub(super) fn lower_nested_item(&mut self, item: &Item, out: &mut Vec<Stmt>) {
        match item {
            Item::Fn(function) => {
                let lowered = self.lower_function(
                    &function.sig,
                    &function.block,
                    self.span_of(function),
                    None,
                );
                out.push(Stmt::FunctionDef(Arc::new(lowered)));
            }
            Item::Use(declaration) => self.lower_use(&declaration.tree, String::new(), out),
            Item::Const(constant) => {
                let span = self.span_of(constant);
                self.lower_constant(&constant.ident, &constant.expr, span, out);
            }
            Item::Static(constant) => {
                let span = self.span_of(constant);
                self.lower_constant(&constant.ident, &constant.expr, span, out);
            }
            other => out.push(Stmt::Other {
                span: self.span_of(other),
            }),
        }
    }

    fn lower_constant(
        &mut self,
        ident: &syn::Ident,
        value: &syn::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let value = self.expr(value);
        self.flush(out);
        let name = self.declare(&unraw(ident));
        out.push(Stmt::Assign {
            targets: Targets::One(Target::Name(name.into(), self.span(ident.span()))),
            value,
            span,
        });
    }

    fn lower_impl(&mut self, block: &syn::ItemImpl, module: &mut ModuleBuilder) {
        let class_name = type_name(&block.self_ty);
        let span = self.span_of(&*block.self_ty);
        let outer = self.impl_type.replace(class_name.clone());
        let mut methods = Vec::new();
        for item in &block.items {
            if let ImplItem::Fn(function) = item {
                let constructor =
                    is_constructor(&function.sig, &class_name).then(|| class_name.clone());
                let lowered = self.lower_function(
                    &function.sig,
                    &function.block,
                    self.span_of(function),
                    constructor,
                );
                methods.push(Arc::new(lowered));
            }
        }
        self.impl_type = outer;
        let class = module.class(&class_name, span);
        class.methods.extend(methods);
        if let Some((_, trait_path, _)) = &block.trait_ {
            let base = dotted_path(trait_path);
            if !class.bases.contains(&base) {
                class.bases.push(base);
            }
        }
    }

    fn lower_trait(&mut self, block: &syn::ItemTrait, module: &mut ModuleBuilder) {
        let trait_name = unraw(&block.ident);
        let mut methods = Vec::new();
        for item in &block.items {
            if let TraitItem::Fn(function) = item {
                if let Some(body) = &function.default {
                    let constructor =
                        is_constructor(&function.sig, &trait_name).then(|| trait_name.clone());
                    let lowered = self.lower_function(
                        &function.sig,
                        body,
                        self.span_of(function),
                        constructor,
                    );
                    methods.push(Arc::new(lowered));
                }
            }
        }
        if !methods.is_empty() {
            let span = self.span(block.ident.span());
            module.class(&trait_name, span).methods.extend(methods);
        }
    }

    /// One function or method; `constructor_of` names the type a constructor builds.
    fn lower_function(
        &mut self,
        signature: &syn::Signature,
        block: &syn::Block,
        span: Span,
        constructor_of: Option<String>,
    ) -> Function {
        let saved = self.enter_function();
        let is_constructor = constructor_of.is_some();
        self.constructor_of = constructor_of;
        let mut is_method = false;
        let mut params = Vec::new();
        let mut body = Vec::new();
        for (position, input) in signature.inputs.iter().enumerate() {
            let typed = match input {
                FnArg::Receiver(_) => {
                    is_method = true;
                    continue;
                }
                FnArg::Typed(typed) => typed,
            };
            let param_span = self.span_of(typed);
            let name = match super::patterns::strip(&typed.pat) {
                syn::Pat::Ident(binding) if binding.subpat.is_none() => {
                    self.declare(&unraw(&binding.ident))
                }
                syn::Pat::Wild(_) => "_".to_string(),
                _ => {
                    let synthetic = format!("$arg{position}");
                    self.bind_pattern(
                        &typed.pat,
                        name_expr(synthetic.clone(), param_span),
                        param_span,
                        &mut body,
                    );
                    synthetic
                }
            };
            params.push(Param {
                name,
                shape_annotation: None,
                annotated_int: is_integer_type(&typed.ty),
                annotated_type: held_type_name(&typed.ty),
                default: None,
                variadic: false,
                span: param_span,
            });
        }
        self.lower_statements(&block.stmts, &Dest::Return, &mut body);
        self.leave_function(saved);
        Function {
            name: unraw(&signature.ident),
            params,
            body,
            span,
            name_span: self.span(signature.ident.span()),
            is_method,
            is_constructor,
        }
    }

    /// Flatten a `use` tree into one `Import` per bound name.
    fn lower_use(&mut self, tree: &UseTree, prefix: String, out: &mut Vec<Stmt>) {
        let join_path = |prefix: &str, name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            }
        };
        match tree {
            UseTree::Path(path) => {
                let prefix = join_path(&prefix, &unraw(&path.ident));
                self.lower_use(&path.tree, prefix, out);
            }
            UseTree::Name(name) => {
                let ident = unraw(&name.ident);
                // `use a::b::{self}` binds `b`.
                let (module, alias) = if ident == "self" {
                    let last = prefix.rsplit('.').next().unwrap_or_default().to_string();
                    (prefix.clone(), last)
                } else {
                    (join_path(&prefix, &ident), ident)
                };
                out.push(Stmt::Import {
                    module: module.into(),
                    alias: Some(alias.into()),
                    span: self.span(name.ident.span()),
                });
            }
            UseTree::Rename(rename) => {
                let alias = unraw(&rename.rename);
                if alias != "_" {
                    out.push(Stmt::Import {
                        module: join_path(&prefix, &unraw(&rename.ident)).into(),
                        alias: Some(alias.into()),
                        span: self.span_between(rename.ident.span(), rename.rename.span()),
                    });
                }
            }
            UseTree::Glob(glob) => out.push(Stmt::Other {
                span: self.span(glob.star_token.span),
            }),
            UseTree::Group(group) => {
                for tree in &group.items {
                    self.lower_use(tree, prefix.clone(), out);
                }
            }
        }
    }
}

/// The name a type's methods are grouped under: the last segment of its path
/// (`model::Attention<B>` → `Attention`), through references; other types by their text.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map_or_else(|| quote_type(ty), |segment| unraw(&segment.ident)),
        Type::Reference(reference) => type_name(&reference.elem),
        Type::Paren(inner) => type_name(&inner.elem),
        Type::Group(inner) => type_name(&inner.elem),
        other => quote_type(other),
    }
}

/// The source text of a type (`[f32]`, `(A, B)`), for impl blocks of non-path types.
fn quote_type(ty: &Type) -> String {
    syn::spanned::Spanned::span(ty)
        .source_text()
        .unwrap_or_else(|| "<type>".to_string())
}

/// `candle_nn::Module` → `candle_nn.Module` (the IR's dotted spelling).
fn dotted_path(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|segment| unraw(&segment.ident))
        .collect::<Vec<_>>()
        .join(".")
}

/// See the module docs.
fn is_constructor(signature: &syn::Signature, type_name: &str) -> bool {
    let has_receiver = signature
        .inputs
        .iter()
        .any(|input| matches!(input, FnArg::Receiver(_)));
    if has_receiver {
        return false;
    }
    let name = signature.ident.to_string();
    name == "new"
        || name == "load"
        || name.starts_with("new_")
        || returns_own_type(&signature.output, type_name)
}

/// Does the function return `Self` / the type, possibly in a `Result`, `Option`, `Box`,
/// `Arc` or `Rc`?
fn returns_own_type(output: &ReturnType, type_name: &str) -> bool {
    fn names_own_type(ty: &Type, type_name: &str) -> bool {
        match ty {
            Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else {
                    return false;
                };
                if last.ident == "Self" || last.ident == type_name {
                    return true;
                }
                let is_wrapper = matches!(
                    last.ident.to_string().as_str(),
                    "Result" | "Option" | "Box" | "Arc" | "Rc"
                );
                match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) if is_wrapper => match args
                        .args
                        .first()
                    {
                        Some(syn::GenericArgument::Type(inner)) => names_own_type(inner, type_name),
                        _ => false,
                    },
                    _ => false,
                }
            }
            Type::Paren(inner) => names_own_type(&inner.elem, type_name),
            Type::Group(inner) => names_own_type(&inner.elem, type_name),
            _ => false,
        }
    }
    match output {
        ReturnType::Default => false,
        ReturnType::Type(_, ty) => names_own_type(ty, type_name),
    }
}

/// The type a parameter of type `ty` holds an object of, through references, the smart
/// pointers model code shares layers with and `Option` (which the IR erases, as it does
/// `Some(x)`): `Arc<RotaryEmbedding>`, `&RotaryEmbedding`, `Box<Block>`,
/// `Option<Arc<RotaryEmbedding>>` → its [`type_name`]. Not a generic type's, and not
/// `Tensor` (a file may `impl SomeTrait for Tensor`, which makes it a class here, but its
/// values are tensors).
/// The struct a field's declared type holds (`Arc<RotaryEmbedding>`, `Option<Block>`), or
/// holds a list of (`Vec<Block>`, `true`).
fn declared_struct_type(ty: &Type) -> Option<(String, bool)> {
    if let Type::Path(p) = ty {
        let last = p.path.segments.last()?;
        if p.qself.is_none() && last.ident == "Vec" {
            if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                if let [syn::GenericArgument::Type(inner)] =
                    args.args.iter().collect::<Vec<_>>().as_slice()
                {
                    return held_type_name(inner).map(|name| (name, true));
                }
            }
            return None;
        }
    }
    held_type_name(ty).map(|name| (name, false))
}

fn held_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(r) => held_type_name(&r.elem),
        Type::Paren(p) => held_type_name(&p.elem),
        Type::Group(g) => held_type_name(&g.elem),
        Type::Path(p) if p.qself.is_none() => match &p.path.segments.last()?.arguments {
            syn::PathArguments::None => Some(type_name(ty)).filter(|name| name != "Tensor"),
            syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                let pointer = type_name(ty);
                match args.args.first()? {
                    syn::GenericArgument::Type(inner)
                        if matches!(pointer.as_str(), "Arc" | "Rc" | "Box" | "Option") =>
                    {
                        held_type_name(inner)
                    }
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `ty` is a primitive integer (`usize`, `i64`, `&usize`): a number, never a tensor.
pub(super) fn is_integer_type(ty: &Type) -> bool {
    const INTEGERS: [&str; 12] = [
        "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128",
    ];
    match ty {
        Type::Reference(r) => is_integer_type(&r.elem),
        Type::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| INTEGERS.contains(&unraw(i).as_str())),
        _ => false,
    }
}
