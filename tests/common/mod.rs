//! Code shared by several test files.

pub mod gpu_checks;
pub mod reference_run;
