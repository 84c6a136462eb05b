//! Code shared by several test files.

pub mod gpu_checks;
