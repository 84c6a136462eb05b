//! distillrank: learning to rank with privileged features and distillation.
//!
//! * [`data`]: LETOR reading, binary cache, synthetic and bundled data, simulated logs, the PFD
//!   paper's preparation.
//! * [`setup`]: one comparison as both front doors (CLI and page) describe it.
//! * [`ranking`]: the training loop ([`train`]), the methods ([`distill`]), comparisons
//!   ([`experiment`]) and NDCG@k, MAP, MRR, P@k ([`metrics`]).
//! * [`objectives`]: global objectives (AUC-PR, recall at precision, ...) for binary classifiers,
//!   with their loop, data and binary metrics ([`metrics_binary`]).
//! * [`engine`]: where a model trains; [`step`]: what one training step needs on either engine.
//! * [`cpu`]: the CPU engine (MLP, losses, Adam, a ranking step), the reference for the kernels;
//!   [`gpu`]: the WGSL kernels driven by wgpu.
//! * [`model_io`]: saved models (safetensors + JSON); [`output`]: atomic output files.
//! * `web` (wasm32 only): the entry points of the browser page's Web Worker.

pub mod bench;
pub mod clock;
pub mod cpu;
pub mod data;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod metrics;
pub mod model;
pub mod model_io;
pub mod objectives;
pub mod onnx;
#[cfg(not(target_arch = "wasm32"))]
pub mod output;
pub mod pipeline;
pub mod ranking;
pub mod rng;
pub mod settings;
pub mod setup;
pub mod stats;
pub mod stop;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use error::{Error, Result};
/// What one training step needs: the ground floor's.
pub use model::step;
/// The binary metrics, by their former name.
pub use objectives::metrics as metrics_binary;
/// The ranking side's modules, by their short names.
pub use ranking::{distill, experiment, train};
