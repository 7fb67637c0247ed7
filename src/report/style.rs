//! Colours of the one-line human formats (concise, grouped, statistics), matching Ruff's:
//! bold path, cyan `:` separators, bold red rule code. `full` gets its colours from
//! codespan-reporting instead. Colour goes through termcolor (re-exported by
//! codespan-reporting) so that "no colour" is the same code path writing no escapes.

use std::io::{self, Write};

use codespan_reporting::term::termcolor::{Ansi, Color, ColorSpec, NoColor, WriteColor};

/// `w` wrapped so that [`WriteColor::set_color`] emits ANSI codes only when `color`.
pub(crate) fn color_writer<'a>(w: &'a mut dyn Write, color: bool) -> Box<dyn WriteColor + 'a> {
    if color {
        Box::new(Ansi::new(w))
    } else {
        Box::new(NoColor::new(w))
    }
}

pub(crate) fn path() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_bold(true);
    spec
}

/// The file header of the grouped format.
pub(crate) fn path_header() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_underline(true);
    spec
}

pub(crate) fn separator() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_fg(Some(Color::Cyan));
    spec
}

pub(crate) fn rule_code() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_fg(Some(Color::Red)).set_bold(true);
    spec
}

pub(crate) fn count() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_bold(true);
    spec
}

/// The `*` of a `[*]` fixable marker.
pub(crate) fn fix_marker() -> ColorSpec {
    let mut spec = ColorSpec::new();
    spec.set_fg(Some(Color::Cyan));
    spec
}

pub(crate) fn write_styled(
    out: &mut dyn WriteColor,
    spec: &ColorSpec,
    text: &str,
) -> io::Result<()> {
    out.set_color(spec)?;
    out.write_all(text.as_bytes())?;
    out.reset()
}

/// Ruff's `[*] ` marker for a finding with a fix `--fix` would apply.
pub(crate) fn write_fix_marker(out: &mut dyn WriteColor) -> io::Result<()> {
    out.write_all(b"[")?;
    write_styled(out, &fix_marker(), "*")?;
    out.write_all(b"] ")
}
