//! Standard input and output as the commands need them: open, and a reader that went away
//! (`stridelint check . | head -1`) ends the command quietly with exit 0, as in Ruff.
//!
//! A descriptor closed by the caller (`>&-`, `<&-`) cannot be seen from `main`: the Rust
//! runtime reopens a closed 0, 1 or 2 on `/dev/null` before `main` runs, so a closed stdout
//! would swallow the report and a closed stdin read as an empty file. So on Linux a
//! constructor, which runs before the runtime's set-up, records which were closed.

use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};

const STDIN_CLOSED: u8 = 1;
const STDOUT_CLOSED: u8 = 2;

static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

#[cfg(any(target_os = "linux", target_os = "android"))]
#[used]
#[link_section = ".init_array"]
static RECORD_CLOSED_STREAMS: extern "C" fn() = record_closed_streams;

#[cfg(any(target_os = "linux", target_os = "android"))]
extern "C" fn record_closed_streams() {
    let mut closed = 0;
    for (fd, flag) in [(0, STDIN_CLOSED), (1, STDOUT_CLOSED)] {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            closed |= flag;
        }
    }
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// The error for a command that needs standard input (`-`) when it was closed.
pub fn stdin_error() -> Option<&'static str> {
    (CLOSED_AT_START.load(Ordering::Relaxed) & STDIN_CLOSED != 0)
        .then_some("standard input is closed; nothing to read for `-`")
}

/// The error for a command that writes its result to standard output when it was closed.
pub fn stdout_error() -> Option<&'static str> {
    (CLOSED_AT_START.load(Ordering::Relaxed) & STDOUT_CLOSED != 0)
        .then_some("standard output is closed; nowhere to write the result (try -o FILE)")
}

/// Did the reader of standard output go away?
pub fn is_broken_pipe(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
}

/// The exit code once writing the result failed with `error`: 0 when the reader went away
/// (nothing more to do), else 2 after saying why.
pub fn write_failed(error: &io::Error) -> ExitCode {
    if is_broken_pipe(error) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: cannot write output: {error}");
    ExitCode::from(2)
}

/// Writes `text` to standard output; `Err` holds the code to end the command with (see
/// [`write_failed`]).
pub fn print(text: &str) -> Result<(), ExitCode> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| write_failed(&e))
}
