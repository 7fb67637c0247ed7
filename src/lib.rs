//! stridelint: a static analyzer for tensor layout bugs and hidden copies in PyTorch,
//! candle and tch-rs model code. See `ARCHITECTURE.md` for the map of the code.

pub mod analysis;
pub mod diagnostic;
pub mod frontend;
pub mod ir;
pub mod layout;
pub mod lints;
pub mod ops;
pub mod report;
pub mod source;
pub mod verify;
