//! Command-line pieces that are more than argument plumbing: `check --verify`,
//! `check --watch` and the `replay` subcommand. `main.rs` declares the commands and calls
//! into these.

pub mod replay;
mod replay_chain;
mod replay_syntax;
mod replay_table;
pub mod streams;
pub mod verify;
pub mod watch;
