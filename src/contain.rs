//! A panic while linting one file must not end the run: [`one_file`] runs the work under
//! `catch_unwind` and turns a panic into that file's error, so the other files' findings
//! are still reported (exit 2 at the end, as for a file that cannot be read). The language
//! server contains each handler the same way ([`catching`]).
//!
//! The default panic hook would also print `thread '<unnamed>' panicked at …` and, with
//! `RUST_BACKTRACE`, a backtrace in the middle of the report. While a contained call runs,
//! the hook installed here only records where the panic happened (the payload does not
//! say); any other panic goes to the hook that was there before.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many contained calls this thread is inside.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
    /// `file:line:column` of the last contained panic on this thread.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `work`; a panic inside it becomes `Err` with a message saying it is a bug, what the
/// panic said and where.
pub fn one_file<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catching(work).map_err(|panic| {
        let at = panic
            .location
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        format!(
            "internal error: the analysis panicked{at}: {} (a stridelint bug, please \
             report it); this file's findings are missing",
            panic.message
        )
    })
}

/// A panic caught by [`catching`]: what it said, and where (`file:line:column`).
pub struct Panic {
    pub message: String,
    pub location: Option<String>,
}

/// Runs `work`; a panic inside it becomes `Err`, without the default hook's report.
pub fn catching<T>(work: impl FnOnce() -> T) -> Result<T, Panic> {
    install_hook();
    CONTAINED.with(|c| c.set(c.get() + 1));
    let outcome = panic::catch_unwind(AssertUnwindSafe(work));
    CONTAINED.with(|c| c.set(c.get() - 1));
    outcome.map_err(|payload| Panic {
        message: payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into()),
        location: LOCATION.with(|l| l.borrow_mut().take()),
    })
}

fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CONTAINED.with(Cell::get) == 0 {
                return previous(info);
            }
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            LOCATION.with(|l| *l.borrow_mut() = location);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_and_the_thread_goes_on() {
        let error = one_file(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert!(error.contains("panicked at src/contain.rs:"), "{error}");
        assert!(error.contains("boom 7"), "{error}");
        assert_eq!(one_file(|| 3), Ok(3));
    }
}
