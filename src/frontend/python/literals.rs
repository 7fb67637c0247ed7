//! Values of Python number and string literals, decoded from their source text.
//!
//! Only values the analysis can use exactly are produced; anything else (imaginary numbers,
//! bytes, `\N{...}` escapes, out-of-range integers) is `None`, which the lowering turns into
//! an unknown value rather than a guess.

/// Value of an integer literal: `42`, `1_000`, `0x1F`, `0o17`, `0b101`, Python 2's `10L`.
/// `None` for imaginary literals (`3j`), Python 2 octal (`017`: its meaning differs between
/// Python versions) and values outside `i64`.
pub(super) fn parse_int(text: &str) -> Option<i64> {
    let text = text.strip_suffix(['l', 'L']).unwrap_or(text);
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let (radix, body) = match digits.get(..2) {
        Some("0x" | "0X") => (16, &digits[2..]),
        Some("0o" | "0O") => (8, &digits[2..]),
        Some("0b" | "0B") => (2, &digits[2..]),
        _ => (10, digits.as_str()),
    };
    let legacy_octal = radix == 10 && body.len() > 1 && body.starts_with('0');
    if legacy_octal && body.bytes().any(|b| b != b'0') {
        return None;
    }
    // `from_str_radix` accepts a leading sign, which is never part of a Python literal.
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    i64::from_str_radix(body, radix).ok()
}

/// Value of a float literal: `1.5`, `1.`, `.5`, `1e-5`, `1_000.5`. `None` for imaginary
/// literals (`1.5j`).
pub(super) fn parse_float(text: &str) -> Option<f64> {
    if text.ends_with(['j', 'J']) {
        return None;
    }
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    // Rust accepts `inf`/`nan` and signs, Python float literals have neither.
    if !digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    digits.parse().ok()
}

/// How a string literal's prefix (`r`, `b`, `f`, `rb`, `u`, ...) says to read its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StringPrefix {
    raw: bool,
    formatted: bool,
    /// Bytes (`b"..."`) and template strings (`t"..."`) are not `str` values.
    not_a_str: bool,
}

impl StringPrefix {
    /// Reads the prefix from a `string_start` token such as `rb"` or `f'''`.
    pub(super) fn from_string_start(token: &str) -> Self {
        let letters = token.trim_end_matches(['"', '\'']);
        let has = |letter: char| letters.chars().any(|c| c.eq_ignore_ascii_case(&letter));
        StringPrefix {
            raw: has('r'),
            formatted: has('f'),
            not_a_str: has('b') || has('t'),
        }
    }
}

/// The `str` value of a string literal body (the text between the quotes), decoding escape
/// sequences as Python does. For f-strings the caller has already checked that there is no
/// `{...}` interpolation; `{{` and `}}` stand for single braces.
pub(super) fn decode_string_body(prefix: StringPrefix, body: &str) -> Option<String> {
    if prefix.not_a_str {
        return None;
    }
    let unescaped = if prefix.raw {
        body.to_string()
    } else {
        decode_escapes(body)?
    };
    if prefix.formatted {
        Some(unescaped.replace("{{", "{").replace("}}", "}"))
    } else {
        Some(unescaped)
    }
}

/// Decodes backslash escapes of a non-raw `str` literal. `None` for `\N{name}` (this needs
/// the Unicode name table) and escapes that name an invalid code point.
fn decode_escapes(body: &str) -> Option<String> {
    if !body.contains('\\') {
        return Some(body.to_string());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        match escape {
            // A backslash at the end of a line continues the string on the next line.
            '\n' => {}
            '\r' => {
                chars.next_if_eq(&'\n');
            }
            '\\' | '\'' | '"' => out.push(escape),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut value = escape.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(digit) => {
                            value = value * 8 + digit;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value)?);
            }
            'x' => out.push(read_hex_char(&mut chars, 2)?),
            'u' => out.push(read_hex_char(&mut chars, 4)?),
            'U' => out.push(read_hex_char(&mut chars, 8)?),
            'N' => return None,
            // Unknown escapes keep their backslash.
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

fn read_hex_char(chars: &mut impl Iterator<Item = char>, digits: usize) -> Option<char> {
    let mut value: u32 = 0;
    for _ in 0..digits {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    char::from_u32(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_every_python_notation() {
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("0XfF"), Some(255));
        assert_eq!(parse_int("0o17"), Some(15));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("000"), Some(0));
        assert_eq!(parse_int("10L"), Some(10));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
    }

    #[test]
    fn integers_without_an_exact_i64_value() {
        assert_eq!(parse_int("3j"), None);
        assert_eq!(parse_int("017"), None);
        assert_eq!(parse_int("9223372036854775808"), None);
        assert_eq!(parse_int("0x"), None);
        assert_eq!(parse_int(""), None);
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float("1.5"), Some(1.5));
        assert_eq!(parse_float("1."), Some(1.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("1e-3"), Some(0.001));
        assert_eq!(parse_float("1.e5"), Some(100000.0));
        assert_eq!(parse_float("1_000.25"), Some(1000.25));
        assert_eq!(parse_float("1.5j"), None);
        assert_eq!(parse_float("inf"), None);
    }

    #[test]
    fn string_prefixes() {
        let plain = StringPrefix::from_string_start("\"");
        let raw = StringPrefix::from_string_start("R'''");
        let bytes = StringPrefix::from_string_start("rb\"");
        let fstring = StringPrefix::from_string_start("f'");
        assert_eq!(
            decode_string_body(plain, "b t (h d)"),
            Some("b t (h d)".into())
        );
        assert_eq!(decode_string_body(raw, r"a\nb"), Some(r"a\nb".into()));
        assert_eq!(decode_string_body(bytes, "abc"), None);
        assert_eq!(
            decode_string_body(fstring, "{{b}} -> b"),
            Some("{b} -> b".into())
        );
    }

    #[test]
    fn escapes_decode_like_python() {
        let plain = StringPrefix::from_string_start("'");
        let decode = |body: &str| decode_string_body(plain, body);
        assert_eq!(
            decode(r"a\tb\\c\'d\x41\u00e9\U0001F600\101\0"),
            Some("a\tb\\c'dAé😀A\0".into())
        );
        assert_eq!(decode("line\\\ncontinued"), Some("linecontinued".into()));
        assert_eq!(decode(r"\q"), Some(r"\q".into()));
        assert_eq!(decode(r"\N{DASH}"), None);
        assert_eq!(decode(r"\ud800"), None);
        assert_eq!(decode(r"\x4"), None);
    }
}
