//! distillrank: learning to rank with privileged features and distillation.
//!
//! * [`data`]: LETOR reading, binary cache, synthetic data, the PFD paper's preparation.
//! * [`cpu`]: the CPU training engine (MLP, ranking losses, Adam), reference for the GPU kernels.
//! * [`train`]: the training loop; [`metrics`]: NDCG@k, MAP, MRR, P@k.
//! * [`model_io`]: saved models (safetensors + JSON); [`output`]: atomic output files.
//! * [`objectives`]: global objectives (AUC-PR, recall at precision, ...) for binary classifiers;
//!   [`metrics_binary`]: AUC-PR, AUC-ROC, recall at precision and the other binary metrics.
//! * `web` (wasm32 only): the entry points of the browser page's Web Worker.

pub mod bench;
pub mod clock;
pub mod cpu;
pub mod data;
pub mod distill;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod gpu;
pub mod metrics;
pub mod metrics_binary;
pub mod model_io;
pub mod objectives;
#[cfg(not(target_arch = "wasm32"))]
pub mod output;
pub mod rng;
pub mod setup;
pub mod step;
pub mod train;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use error::{Error, Result};
