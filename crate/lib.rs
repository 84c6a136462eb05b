//! distillrank: learning to rank with privileged features and distillation.
//!
//! * [`data`]: LETOR reading, binary cache, synthetic and bundled data, simulated logs, the PFD
//!   paper's preparation.
//! * [`setup`]: one comparison as both front doors (CLI and page) describe it.
//! * [`ranking`]: the training loop ([`ranking::train`]), the methods ([`ranking::distill`], one
//!   entry each), comparisons ([`ranking::experiment`]); NDCG@k, MAP, MRR, P@k in [`metrics`].
//! * [`objectives`]: global objectives (AUC-PR, recall at precision, ...) for binary classifiers,
//!   with their loop, data and binary metrics ([`objectives::metrics`]).
//! * [`model`]: the words both engines share: the MLP, the losses (one entry each), Adam, the
//!   global objectives and what one training step needs ([`model::step`]).
//! * [`engine`]: where a model trains.
//! * [`cpu`]: the CPU engine (MLP, losses, Adam, a ranking step), the reference for the kernels;
//!   [`gpu`]: the WGSL kernels driven by wgpu.
//! * [`forest`]: LightGBM and XGBoost tree ensembles, read and scored as their libraries do: the
//!   external teachers.
//! * [`model_io`]: saved models (safetensors + JSON); [`output`]: atomic output files.
//! * `web` (wasm32 only): the entry points of the browser page's Web Worker.

pub mod bench;
pub mod clock;
pub mod cpu;
pub mod data;
pub mod engine;
pub mod error;
pub mod forest;
pub mod gpu;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod model_io;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
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
