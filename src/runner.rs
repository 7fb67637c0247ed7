//! Between the lints and the file: runs the registry's event rules with the facts they may
//! ask about the source ([`lints::SourceFacts`], answered here from the text and the IR),
//! and turns their findings into [`Diagnostic`]s with the rule's code and severity. The
//! runner-checked rules are made here too: SL999 (syntax errors) in [`syntax_error`];
//! SL900 (the layouts a file asks to see) in [`reveals`]; SL100 in
//! `crate::unused_suppression`.
//!
//! Architecture invariant: the lints never see the source text; everything they need from
//! it is a method of [`lints::SourceFacts`] implemented here.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::analysis::event::OpEvent;
use crate::diagnostic::Diagnostic;
use crate::ir::{self, ExprKind, Language, Span, Stmt};
use crate::layout::CandleBackend;
use crate::lints::{self, Discarded, LintContext, SourceFacts};
use crate::source::SourceFile;

/// Run the event rules on a file's events.
pub fn lint(
    file: &Arc<SourceFile>,
    module: &ir::Module,
    events: &[OpEvent],
    candle_backend: CandleBackend,
) -> Vec<Diagnostic> {
    let facts = FileFacts::new(file, module);
    let ctx = LintContext {
        candle_backend,
        language: module.language,
        source: &facts,
        events,
    };
    let mut diagnostics: Vec<Diagnostic> = lints::run_lints(events, &ctx)
        .into_iter()
        .map(|r| Diagnostic {
            code: r.rule.code,
            severity: r.rule.severity,
            message: r.message,
            file: file.clone(),
            span: r.span,
            chain: r.chain,
            notes: r.notes,
            help: r.help,
            fix: r.fix,
            unsafe_fix: r.unsafe_fix,
            verify: None,
            copy: None,
            subject: r.subject,
        })
        .collect();
    diagnostics.extend(reveals(file, events));
    diagnostics
}

/// SL900: the layouts the file asks to see — each `reveal_layout(x)` call's argument, and
/// the result of the outermost op call on each line with a `# stridelint: reveal` comment.
/// One info per call, from the function analysed on its own where it was (a caller's
/// context otherwise).
pub fn reveals(file: &Arc<SourceFile>, events: &[OpEvent]) -> Vec<Diagnostic> {
    use lints::sl900_reveal_layout::{reveal, Revealed, REVEAL_OP};
    let text = &file.text;
    let written = |span: Span| -> String {
        let s = text.get(span.range()).unwrap_or("");
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let line_of = |offset: u32| file.location(offset as usize).row.saturating_sub(1);
    // The chosen event of each requested call: the open context's where there is one.
    fn choose<'e>(ev: &'e OpEvent, what: Revealed, chosen: &mut Vec<(&'e OpEvent, Revealed)>) {
        match chosen
            .iter_mut()
            .find(|(c, _)| c.span == ev.span && c.op == ev.op)
        {
            Some(c) if c.0.from_caller && !ev.from_caller => c.0 = ev,
            Some(_) => {}
            None => chosen.push((ev, what)),
        }
    }
    let mut chosen: Vec<(&OpEvent, Revealed)> = Vec::new();
    for ev in events.iter().filter(|ev| ev.op == REVEAL_OP) {
        choose(ev, Revealed::Input, &mut chosen);
    }
    for &line in &file.suppressions().reveal_lines {
        let outermost = events
            .iter()
            .filter(|ev| ev.op != REVEAL_OP && line_of(ev.span.end.saturating_sub(1)) == line)
            .max_by_key(|ev| (ev.span.end - ev.span.start, ev.span.end));
        if let Some(outer) = outermost {
            for ev in events
                .iter()
                .filter(|ev| ev.span == outer.span && ev.op == outer.op)
            {
                choose(ev, Revealed::Result, &mut chosen);
            }
        }
    }
    let rule = lints::registered(lints::REVEAL_LAYOUT);
    chosen
        .into_iter()
        .map(|(ev, what)| {
            let subject = match what {
                // The argument of `reveal_layout(...)`, as written.
                Revealed::Input => written(Span {
                    start: ev.name_span.end,
                    end: ev.span.end,
                })
                .trim()
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
                .unwrap_or_default()
                .trim()
                .to_string(),
                Revealed::Result => written(ev.span),
            };
            let finding = lints::in_source_order(ev, || reveal(ev, &subject, what));
            Diagnostic {
                code: rule.code,
                severity: rule.severity,
                message: finding.message,
                file: file.clone(),
                span: finding.span,
                chain: finding.chain,
                notes: Vec::new(),
                help: finding.help,
                fix: None,
                unsafe_fix: None,
                verify: None,
                copy: None,
                subject: None,
            }
        })
        .collect()
}

/// The SL999 diagnostic for a file's first syntax error. The Python parser recovers from
/// a syntax error and the rest of the file is analysed; syn does not recover, so a Rust
/// file with one is skipped (the Rust frontend's own refusals, e.g. of too deeply nested
/// input, already say so).
pub fn syntax_error(
    file: &Arc<SourceFile>,
    span: Span,
    message: &str,
    is_rust: bool,
) -> Diagnostic {
    let consequence = match is_rust {
        _ if message.ends_with("not analysed") => "",
        false => " (the rest of the file is analysed as far as it parses)",
        true => "; the file is not analysed",
    };
    let rule = lints::registered(lints::SYNTAX_ERROR);
    Diagnostic {
        code: rule.code,
        severity: rule.severity,
        message: format!("syntax error: {message}{consequence}"),
        file: file.clone(),
        span,
        chain: Vec::new(),
        notes: Vec::new(),
        help: None,
        fix: None,
        unsafe_fix: None,
        verify: None,
        copy: None,
        subject: None,
    }
}

/// What the lints may ask about one file.
struct FileFacts<'a> {
    file: &'a SourceFile,
    module: &'a ir::Module,
    /// Expression statements that are a method call: call span → receiver.
    discarded: HashMap<Span, Discarded>,
    /// Every function definition's span.
    functions: Vec<Span>,
}

impl<'a> FileFacts<'a> {
    fn new(file: &'a SourceFile, module: &'a ir::Module) -> Self {
        let mut facts = FileFacts {
            file,
            module,
            discarded: HashMap::default(),
            functions: Vec::new(),
        };
        let language = module.language;
        facts.statements(&module.body, language, None);
        for f in &module.functions {
            facts.function(f, language);
        }
        for c in &module.classes {
            for m in &c.methods {
                facts.function(m, language);
            }
        }
        facts
    }

    fn function(&mut self, f: &ir::Function, language: Language) {
        self.functions.push(f.span);
        let mut locals: HashSet<String> = f.params.iter().map(|p| p.name.clone()).collect();
        assigned_names(&f.body, &mut locals);
        self.statements(&f.body, language, Some(&locals));
    }

    /// `locals`: the names the enclosing function binds (`None` at module level, where
    /// every name is the module's own).
    fn statements(&mut self, body: &[Stmt], language: Language, locals: Option<&HashSet<String>>) {
        for stmt in body {
            match stmt {
                Stmt::Expr(e) => self.expression_statement(e, language, locals),
                Stmt::FunctionDef(f) => self.function(f, language),
                Stmt::ClassDef(c) => {
                    for m in &c.methods {
                        self.function(m, language);
                    }
                }
                _ => stmt.for_each_block(|b| self.statements(b, language, locals)),
            }
        }
    }

    /// A method call the IR holds as an expression statement is a discarded value only
    /// when the text around it is a whole statement: the frontends also lower other
    /// evaluated-for-effect expressions this way (a `match` subject, a macro argument, the
    /// value of `let _ = …`).
    fn expression_statement(
        &mut self,
        e: &ir::Expr,
        language: Language,
        locals: Option<&HashSet<String>>,
    ) {
        let Some((func, _)) = e.kind.as_call() else {
            return;
        };
        let ExprKind::Attr { value, .. } = &func.kind else {
            return;
        };
        let text = &self.file.text;
        let (Some(before), Some(after)) = (
            text.get(..e.span.start as usize),
            text.get(e.span.end as usize..),
        ) else {
            return;
        };
        let line_before = before.rsplit('\n').next().unwrap_or("").trim();
        let line_after = after.split('\n').next().unwrap_or("").trim();
        let whole = match language {
            Language::Python => {
                (line_before.is_empty() || line_before.ends_with(';'))
                    && (line_after.is_empty()
                        || line_after.starts_with('#')
                        || line_after.starts_with(';'))
            }
            Language::Rust => {
                (line_before.is_empty() || line_before.ends_with([';', '{', '}']))
                    && (line_after.starts_with(';') || line_after.starts_with("?;"))
            }
        };
        if whole {
            // Assigning to the receiver changes no scope when it is an attribute, or a
            // name the function binds anyway (a parameter, a local variable).
            let rebinding_is_local = match &value.kind {
                ExprKind::Name(name) => locals.is_none_or(|l| l.contains(name.as_str())),
                ExprKind::Attr { .. } => value.dotted_name().is_some(),
                _ => false,
            };
            self.discarded.insert(
                e.span,
                Discarded {
                    receiver: value.dotted_name(),
                    rebinding_is_local,
                },
            );
        }
    }
}

/// The names a body binds (assignment targets, loop and `with` targets), not descending
/// into nested definitions.
fn assigned_names(body: &[Stmt], out: &mut HashSet<String>) {
    fn target(t: &ir::Target, out: &mut HashSet<String>) {
        match t {
            ir::Target::Name(n, _) => {
                out.insert(n.to_string());
            }
            ir::Target::Tuple(ts, _) => ts.iter().for_each(|t| target(t, out)),
            ir::Target::Starred(t, _) => target(t, out),
            _ => {}
        }
    }
    for stmt in body {
        match stmt {
            Stmt::Assign { targets, .. } => targets.iter().for_each(|t| target(t, out)),
            Stmt::AugAssign { target: t, .. } => target(t, out),
            Stmt::Loop {
                target: Some(t), ..
            } => target(t, out),
            Stmt::With { items, .. } => items
                .iter()
                .filter_map(|(_, t)| t.as_ref())
                .for_each(|t| target(t, out)),
            Stmt::Import { module, alias, .. } => {
                let name = alias
                    .as_deref()
                    .unwrap_or_else(|| module.split('.').next().unwrap_or(""));
                out.insert(name.to_string());
            }
            Stmt::FunctionDef(f) => {
                out.insert(f.name.clone());
            }
            Stmt::ClassDef(c) => {
                out.insert(c.name.clone());
            }
            _ => {}
        }
        stmt.for_each_block(|b| assigned_names(b, out));
    }
}

impl SourceFacts for FileFacts<'_> {
    fn line(&self, offset: u32) -> usize {
        self.file.location(offset as usize).row
    }

    fn method_call(&self, name_span: Span) -> Option<(u32, String)> {
        let text = &self.file.text;
        let name = text.get(name_span.range())?;
        let before = text.get(..name_span.start as usize)?;
        let dot = before.trim_end().strip_suffix('.').map(|s| s.len())?;
        Some((dot as u32, name.to_string()))
    }

    fn discarded_call(&self, span: Span) -> Option<Discarded> {
        self.discarded.get(&span).cloned()
    }

    fn function_of(&self, offset: u32) -> Option<Span> {
        self.functions
            .iter()
            .filter(|f| f.start <= offset && offset < f.end)
            .min_by_key(|f| f.end - f.start)
            .copied()
    }

    fn autograd_gradients(&self, offset: u32) -> Vec<String> {
        let backward = self
            .module
            .classes
            .iter()
            .filter(|c| c.bases.iter().any(|b| is_autograd_function(b)))
            .flat_map(|c| c.methods.iter())
            .find(|m| m.name == "backward" && m.span.start <= offset && offset < m.span.end);
        let Some(backward) = backward else {
            return Vec::new();
        };
        // A static `backward(ctx, *grads)`; a method's receiver is not among its params.
        let skip = usize::from(!backward.is_method);
        backward
            .params
            .iter()
            .skip(skip)
            .map(|p| p.name.clone())
            .collect()
    }

    fn written(&self, span: Span) -> Option<String> {
        const MAX_CHARS: usize = 48;
        let text = self.file.text.get(span.range())?;
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        Some(match one_line.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => format!("{}…", &one_line[..cut]),
            None => one_line,
        })
    }

    fn operands(&self, span: Span, n: usize) -> Option<Vec<String>> {
        let text = self.file.text.get(span.range())?;
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        written_operands(&one_line, n)
    }

    fn flows_only_along(&self, calls: &[Span]) -> bool {
        let Some(last) = calls.last() else {
            return false;
        };
        let Some(function) = self
            .function_of(last.start)
            .and_then(|span| function_with_span(self.module, span))
        else {
            return false;
        };
        let within =
            |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
        // Every binding of a name in the function, with the latest call of the chain its
        // value holds (the call whose value the name gets).
        let mut bindings: Vec<Binding> = Vec::new();
        let mut unpacked = false;
        collect_bindings(&function.body, &mut |target, value_span| match target {
            ir::Target::Name(name, at) => bindings.push(Binding {
                name: name.to_string(),
                at: at.start,
                after: value_span.end,
                call: calls.iter().rposition(|c| within(value_span, *c)),
            }),
            _ => unpacked |= calls.iter().any(|c| within(value_span, *c)),
        });
        if unpacked {
            return false;
        }
        let Some(text) = self.file.text.get(function.span.range()) else {
            return false;
        };
        let end = calls.len() - 1;
        let mut names: Vec<&str> = bindings
            .iter()
            .filter(|b| b.call.is_some_and(|i| i < end))
            .map(|b| b.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.into_iter().all(|name| {
            identifier_reads(text, name).all(|offset| {
                let at = function.span.start + offset as u32;
                if bindings.iter().any(|b| b.at == at && b.name == name) {
                    return true;
                }
                // The value the read sees: the latest binding of the name before it (a
                // binding takes effect once its value is computed: `att = att * s` reads
                // the old `att`).
                let seen = bindings
                    .iter()
                    .filter(|b| b.name == name && b.after <= at)
                    .max_by_key(|b| b.after);
                match seen.and_then(|b| b.call) {
                    Some(i) if i < end => {
                        calls[i + 1..].iter().any(|c| c.start <= at && at < c.end)
                    }
                    _ => true,
                }
            })
        })
    }
}

/// The `n` operands of a product written `a @ b`, `f(a, b)` or `a.f(b)` (see
/// [`SourceFacts::operands`]): the arguments when there are `n`, else the receiver first.
fn written_operands(text: &str, n: usize) -> Option<Vec<String>> {
    let owned = |parts: Vec<&str>| parts.into_iter().map(|p| p.trim().to_string()).collect();
    let product = ir::split_top_level(text, '@');
    if product.len() == 2 {
        return (n == 2).then(|| owned(product));
    }
    let open = matching_open(text)?;
    let inner = &text[..text.len() - 1];
    let args: Vec<&str> = ir::split_top_level(&inner[open + 1..], ',')
        .into_iter()
        .filter(|a| !a.trim().is_empty() && !is_keyword_argument(a))
        .collect();
    if args.len() == n {
        return Some(owned(args));
    }
    let (receiver, _) = inner[..open].rsplit_once('.')?;
    (args.len() + 1 == n).then(|| owned(std::iter::once(receiver).chain(args).collect()))
}

/// Where the bracket that closes `text` (its last character) opens.
fn matching_open(text: &str) -> Option<usize> {
    if !text.ends_with(')') {
        return None;
    }
    let mut depth = 0;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `name=value` (not `a == b`).
fn is_keyword_argument(arg: &str) -> bool {
    let arg = arg.trim();
    let name_len = arg
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(arg.len());
    let after = arg[name_len..].trim_start();
    name_len > 0 && after.starts_with('=') && !after.starts_with("==") || arg.starts_with('*')
}

/// A local name bound in a function (see [`FileFacts::flows_only_along`]).
struct Binding {
    name: String,
    /// Where the name is written as the target.
    at: u32,
    /// Where the binding takes effect: the end of the value.
    after: u32,
    /// The index of the latest chain call the bound value holds.
    call: Option<usize>,
}

/// Each assignment target of a body (not of nested definitions) with the span of the value
/// it gets; an augmented assignment's value is its whole statement.
fn collect_bindings(body: &[Stmt], f: &mut dyn FnMut(&ir::Target, Span)) {
    for stmt in body {
        match stmt {
            Stmt::Assign { targets, value, .. } => {
                targets.iter().for_each(|t| f(t, value.span));
            }
            Stmt::AugAssign { target, span, .. } => f(target, *span),
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => continue,
            _ => {}
        }
        stmt.for_each_block(|b| collect_bindings(b, f));
    }
}

/// Offsets in `text` where the identifier `name` occurs other than as an attribute (`.name`).
fn identifier_reads<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = usize> + 't {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).filter_map(move |(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        (!before.is_some_and(|c| is_ident(c) || c == '.') && !after.is_some_and(is_ident))
            .then_some(i)
    })
}

/// The function definition (anywhere in the module) whose span is `span`.
/// A base class naming `torch.autograd.Function` as model code spells it (`Function` from
/// `torch.autograd`, `torch.autograd.Function`, `autograd.Function`).
fn is_autograd_function(base: &str) -> bool {
    base == "Function"
        || base.ends_with("autograd.Function")
        || base.ends_with("autograd.function.Function")
}

fn function_with_span(module: &ir::Module, span: Span) -> Option<&ir::Function> {
    fn in_body(body: &[Stmt], span: Span) -> Option<&ir::Function> {
        body.iter().find_map(|s| match s {
            Stmt::FunctionDef(f) => in_function(f, span),
            Stmt::ClassDef(c) => c.methods.iter().find_map(|m| in_function(m, span)),
            _ => {
                let mut found = None;
                s.for_each_block(|b| {
                    if found.is_none() {
                        found = in_body(b, span);
                    }
                });
                found
            }
        })
    }
    fn in_function(f: &ir::Function, span: Span) -> Option<&ir::Function> {
        if f.span == span {
            return Some(f);
        }
        if f.span.start <= span.start && span.end <= f.span.end {
            return in_body(&f.body, span);
        }
        None
    }
    module
        .functions
        .iter()
        .find_map(|f| in_function(f, span))
        .or_else(|| {
            module
                .classes
                .iter()
                .flat_map(|c| &c.methods)
                .find_map(|m| in_function(m, span))
        })
        .or_else(|| in_body(&module.body, span))
}
