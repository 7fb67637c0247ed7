//! Numeric ids of the tree-sitter-python grammar fields the lowering reads.
//!
//! `Node::child_by_field_name` looks the name up in the grammar's field table on every
//! call; resolving each name once and calling `child_by_field_id` keeps that lookup off
//! the per-node path. An id of 0 (a name the grammar does not have) simply finds nothing.

use std::sync::OnceLock;

use tree_sitter::Language;

/// Field ids, named after the grammar fields (`type_` for `type`).
pub(super) struct FieldIds {
    pub alias: u16,
    pub alternative: u16,
    pub argument: u16,
    pub arguments: u16,
    pub attribute: u16,
    pub body: u16,
    pub condition: u16,
    pub consequence: u16,
    pub definition: u16,
    pub function: u16,
    pub guard: u16,
    pub left: u16,
    pub module_name: u16,
    pub name: u16,
    pub object: u16,
    pub operator: u16,
    pub operators: u16,
    pub parameters: u16,
    pub right: u16,
    pub subject: u16,
    pub subscript: u16,
    pub superclasses: u16,
    pub type_: u16,
    pub value: u16,
}

/// The field ids of tree-sitter-python, resolved on first use.
pub(super) fn field_ids() -> &'static FieldIds {
    static IDS: OnceLock<FieldIds> = OnceLock::new();
    IDS.get_or_init(|| {
        let language: Language = tree_sitter_python::LANGUAGE.into();
        let id = |name: &str| language.field_id_for_name(name).map_or(0, |id| id.get());
        FieldIds {
            alias: id("alias"),
            alternative: id("alternative"),
            argument: id("argument"),
            arguments: id("arguments"),
            attribute: id("attribute"),
            body: id("body"),
            condition: id("condition"),
            consequence: id("consequence"),
            definition: id("definition"),
            function: id("function"),
            guard: id("guard"),
            left: id("left"),
            module_name: id("module_name"),
            name: id("name"),
            object: id("object"),
            operator: id("operator"),
            operators: id("operators"),
            parameters: id("parameters"),
            right: id("right"),
            subject: id("subject"),
            subscript: id("subscript"),
            superclasses: id("superclasses"),
            type_: id("type"),
            value: id("value"),
        }
    })
}
