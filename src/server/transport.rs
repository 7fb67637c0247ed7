//! JSON-RPC frames over a byte stream: `Content-Length: N`, a blank line, N bytes of JSON.
//!
//! lsp-server's reader ends the connection at the first frame it cannot read; this one
//! answers it and reads on. A frame that cannot be read is a ParseError (id null), a JSON
//! value that is not a message an InvalidRequest; after a broken header the reader skips
//! to the next `Content-Length:`. Header lines and bodies are bounded, so what a frame
//! claims cannot make the server allocate more than those bounds.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::thread::{self, JoinHandle};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use lsp_server::{ErrorCode, Message, RequestId};

/// The longest header line read, in bytes.
const MAX_HEADER_LINE: u64 = 1024;
/// The most header lines one frame may have.
const MAX_HEADERS: usize = 16;
/// The largest body read: a `didOpen` of the largest file the server analyses, escaped.
const MAX_BODY: usize = 4 * crate::MAX_FILE_BYTES as usize;
/// The header that starts a frame, as the reader looks for it after a broken one.
const CONTENT_LENGTH: &[u8] = b"content-length:";
/// Frames the reader may decode ahead of the main loop.
const READ_AHEAD: usize = 64;

/// What the reader hands the main loop.
pub enum Incoming {
    Message(Message),
    /// A frame that is not a message, and the error that answers it.
    Invalid(Rejection),
}

/// An error answering a frame; its id is null when the frame had none that could be read.
pub struct Rejection {
    pub id: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
}

/// What the main loop hands the writer.
pub enum Outgoing {
    Message(Message),
    Rejection(Rejection),
}

impl From<Message> for Outgoing {
    fn from(message: Message) -> Self {
        Outgoing::Message(message)
    }
}

/// The two ends the main loop uses, and the writer thread to wait for at the end.
pub struct Transport {
    pub incoming: Receiver<Incoming>,
    pub outgoing: Sender<Outgoing>,
    pub writer: JoinHandle<()>,
}

/// Read frames from `input` and write messages to `output`, each on a thread of its own.
/// The reader ends at the end of the input or when the main loop stops listening; the
/// writer once every sender of `outgoing` is dropped (or `output` fails).
pub fn start(input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> Transport {
    let (to_loop, incoming) = bounded(READ_AHEAD);
    let (outgoing, to_writer) = unbounded::<Outgoing>();
    thread::Builder::new()
        .name("stridelint-lsp-reader".into())
        .spawn(move || {
            let mut frames = FrameReader::new(BufReader::new(input));
            // A read error (a closed or broken stdin) ends the input like its end does.
            while let Ok(Some(frame)) = frames.next_frame() {
                if to_loop.send(frame).is_err() {
                    return;
                }
            }
        })
        .expect("a thread for the reader");
    let writer = thread::Builder::new()
        .name("stridelint-lsp-writer".into())
        .spawn(move || {
            let mut output = output;
            for item in to_writer {
                if write_frame(&mut output, &item).is_err() {
                    return;
                }
            }
        })
        .expect("a thread for the writer");
    Transport {
        incoming,
        outgoing,
        writer,
    }
}

fn write_frame(output: &mut impl Write, item: &Outgoing) -> io::Result<()> {
    match item {
        Outgoing::Message(message) => message.write(output),
        // lsp-server's `Response` cannot have a null id: this answer is written by hand.
        Outgoing::Rejection(r) => {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": r.id,
                "error": {"code": r.code as i32, "message": r.message},
            })
            .to_string();
            write!(output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
            output.flush()
        }
    }
}

/// One header line, without its line break.
enum Line {
    Text(Vec<u8>),
    TooLong,
    End,
}

/// Frames read from a byte stream, each as a message or the error that answers it.
struct FrameReader<R> {
    input: R,
    /// After a broken frame, where the next one starts.
    resume: Resume,
}

enum Resume {
    /// Here: the last frame was read whole.
    Here,
    /// At the next `Content-Length:` in the input.
    AtNextHeader,
    /// With this line, the end of one read already (`{}Content-Length: 2`: garbage
    /// without a line break, then a frame).
    WithLine(Vec<u8>),
}

impl<R: BufRead> FrameReader<R> {
    fn new(input: R) -> Self {
        FrameReader {
            input,
            resume: Resume::Here,
        }
    }

    /// The next frame; None at the end of the input.
    fn next_frame(&mut self) -> io::Result<Option<Incoming>> {
        let length = match self.read_headers()? {
            None => return Ok(None),
            Some(Ok(length)) => length,
            Some(Err(why)) => return Ok(Some(Incoming::Invalid(parse_error(why)))),
        };
        let mut body = Vec::with_capacity(length.min(1 << 16));
        (&mut self.input)
            .take(length as u64)
            .read_to_end(&mut body)?;
        if body.len() < length {
            return Ok(None);
        }
        Ok(Some(decode(&body)))
    }

    /// The body length a frame's headers give, or why they give none; None at the end.
    fn read_headers(&mut self) -> io::Result<Option<Result<usize, String>>> {
        let mut resumed = self.resume()?;
        let mut length = None;
        let mut headers = 0;
        loop {
            let line = match resumed.take() {
                Some(line) => line,
                None => self.read_line()?,
            };
            let text = match line {
                Line::End => return Ok(None),
                Line::TooLong => return Ok(Some(self.broken("a header line is too long"))),
                Line::Text(text) => text,
            };
            if text.is_empty() {
                match length {
                    Some(length) => return Ok(Some(Ok(length))),
                    // A blank line between frames is harmless.
                    None if headers == 0 => continue,
                    None => return Ok(Some(self.broken("no Content-Length header"))),
                }
            }
            if let Some(at) = find_content_length(&text).filter(|&at| at > 0) {
                // Garbage without a line break, then a frame: only the garbage is lost.
                let broken = self.broken(&format!("not a header: {}", preview(&text[..at])));
                self.resume = Resume::WithLine(text[at..].to_vec());
                return Ok(Some(broken));
            }
            headers += 1;
            if headers > MAX_HEADERS {
                return Ok(Some(self.broken("too many header lines")));
            }
            match header(&text) {
                Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                    match content_length(value) {
                        Ok(n) => length = Some(n),
                        Err(why) => return Ok(Some(self.broken(&why))),
                    }
                }
                Some(_) => {} // `Content-Type`, or a header of a later protocol.
                None => {
                    return Ok(Some(
                        self.broken(&format!("not a header: {}", preview(&text))),
                    ))
                }
            }
        }
    }

    /// The frame being read is broken: the next one is looked for from here on.
    fn broken(&mut self, why: &str) -> Result<usize, String> {
        self.resume = Resume::AtNextHeader;
        Err(why.to_string())
    }

    /// The first line of the next frame, after a broken one.
    fn resume(&mut self) -> io::Result<Option<Line>> {
        match std::mem::replace(&mut self.resume, Resume::Here) {
            Resume::Here => Ok(None),
            Resume::WithLine(line) => Ok(Some(Line::Text(line))),
            Resume::AtNextHeader => {
                if !self.skip_past(CONTENT_LENGTH)? {
                    return Ok(Some(Line::End));
                }
                Ok(Some(match self.read_line()? {
                    Line::Text(rest) => Line::Text([CONTENT_LENGTH, &rest].concat()),
                    other => other,
                }))
            }
        }
    }

    fn read_line(&mut self) -> io::Result<Line> {
        let mut line = Vec::new();
        (&mut self.input)
            .take(MAX_HEADER_LINE + 1)
            .read_until(b'\n', &mut line)?;
        if line.last() != Some(&b'\n') {
            let too_long = line.len() as u64 > MAX_HEADER_LINE;
            return Ok(if too_long { Line::TooLong } else { Line::End });
        }
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Line::Text(line))
    }

    /// Consume the input up to and including `needle` (lower-case ASCII whose first byte
    /// occurs in it once, matched ignoring case); false at the end of the input.
    fn skip_past(&mut self, needle: &[u8]) -> io::Result<bool> {
        let mut matched = 0;
        loop {
            let buffer = self.input.fill_buf()?;
            if buffer.is_empty() {
                return Ok(false);
            }
            let mut used = 0;
            for &byte in buffer {
                used += 1;
                let byte = byte.to_ascii_lowercase();
                matched = match byte {
                    _ if byte == needle[matched] => matched + 1,
                    _ if byte == needle[0] => 1,
                    _ => 0,
                };
                if matched == needle.len() {
                    break;
                }
            }
            self.input.consume(used);
            if matched == needle.len() {
                return Ok(true);
            }
        }
    }
}

/// Where `content-length:` starts in `line`, ignoring case.
fn find_content_length(line: &[u8]) -> Option<usize> {
    line.windows(CONTENT_LENGTH.len())
        .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// A header line's name and value, when it is one (`Name: value`, the name a token).
fn header(line: &[u8]) -> Option<(&str, &str)> {
    let line = std::str::from_utf8(line).ok()?;
    let (name, value) = line.split_once(':')?;
    let is_token = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    is_token.then_some((name, value.trim()))
}

fn content_length(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n <= MAX_BODY => Ok(n),
        Ok(n) => Err(format!(
            "a body of {n} bytes is over the {} MiB a message may have",
            MAX_BODY >> 20
        )),
        Err(_) => Err(format!(
            "Content-Length {} is not a length",
            preview(value.as_bytes())
        )),
    }
}

/// A frame's body as a message, or the error that answers it.
fn decode(body: &[u8]) -> Incoming {
    // serde_json refuses invalid UTF-8 and lone surrogates (`"\ud800"`) here too.
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return Incoming::Invalid(parse_error(format!("not JSON: {e}"))),
    };
    if !value.is_object() {
        // serde would read `[1, 2]` as a response, field by field.
        return Incoming::Invalid(Rejection {
            id: None,
            code: ErrorCode::InvalidRequest,
            message: "a message is a JSON object (LSP has no batches)".into(),
        });
    }
    let id = value.get("id").cloned();
    let has_method = value.get("method").is_some();
    let readable_id = id
        .clone()
        .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
    let invalid = |message: String| {
        Incoming::Invalid(Rejection {
            id: readable_id.clone(),
            code: ErrorCode::InvalidRequest,
            message,
        })
    };
    match serde_json::from_value::<Message>(value) {
        // An id lsp-server cannot read (null, 2^40, 1.5) would make a request a notification.
        Ok(Message::Notification(_)) if id.is_some() => invalid(format!(
            "the id {} is neither a string nor a 32-bit integer",
            id.unwrap_or_default()
        )),
        // lsp-server reads `{"id": 1, "method": 5}` as a response.
        Ok(Message::Response(_)) if has_method => invalid("the method is not a string".into()),
        Ok(message) => Incoming::Message(message),
        Err(e) => invalid(format!("not a JSON-RPC message: {e}")),
    }
}

fn parse_error(message: String) -> Rejection {
    Rejection {
        id: None,
        code: ErrorCode::ParseError,
        message,
    }
}

/// The start of some bytes the client sent, for a message.
fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]);
    let more = if bytes.len() > 60 { "…" } else { "" };
    format!("`{text}{more}`")
}
