//! Symbolic sizes (placeholder; implemented by the symbolic-sizes work).
