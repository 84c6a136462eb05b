//! Code shared by several test files.

#[cfg(not(target_arch = "wasm32"))]
pub mod engines;
pub mod gpu_checks;
#[cfg(not(target_arch = "wasm32"))]
pub mod letor_data;
pub mod reference_run;
