//! The progress bar over files, for long runs on a terminal.
//!
//! It is drawn on stderr, and only when a person is watching a human-readable report: stderr
//! is a terminal, the output format is `full`, `concise` or `grouped`, and there are enough
//! files for the run to take a while. Machine-readable formats, pipes and CI logs never see
//! it, so their output stays byte-for-byte the findings. The bar is cleared when the run
//! ends, before the report is printed.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Below this many files a run is quick enough that a bar would only flicker.
pub const MIN_FILES: usize = 100;

/// Whether a run over `files` files shows a bar.
pub fn should_show(files: usize, human_format: bool, stderr_is_terminal: bool) -> bool {
    human_format && stderr_is_terminal && files > MIN_FILES
}

/// A progress bar, or nothing when [`should_show`] says no. Safe to share across threads.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(files: usize, human_format: bool) -> Self {
        if !should_show(files, human_format, std::io::stderr().is_terminal()) {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(files as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} Checking {pos}/{len} files {wide_bar} {elapsed}",
        ) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    /// One more file done.
    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Remove the bar from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_human_runs_on_a_terminal() {
        assert!(should_show(MIN_FILES + 1, true, true));
        assert!(!should_show(MIN_FILES, true, true));
        assert!(!should_show(5000, false, true), "machine-readable format");
        assert!(!should_show(5000, true, false), "stderr is not a terminal");
    }

    #[test]
    fn a_hidden_bar_accepts_calls() {
        let p = Progress { bar: None };
        p.inc();
        p.finish();
        assert!(!p.is_shown());
    }
}
