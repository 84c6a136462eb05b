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
//!
//! # Start here
//!
//! The CLI, the page and the Python package are doors over these few items (each has one path,
//! its own module's: the crate root re-exports nothing):
//!
//! * [`setup::Setup`]: one comparison, as `setup.json` holds it (the settings reference lists
//!   every field); [`setup::Setup::from_json`] reads one and [`setup::Setup::check`] refuses what
//!   cannot work before any data are read.
//! * [`pipeline::preparation::prepare`]: the data a setup names, read and prepared.
//! * [`native::open_engine`] with an [`engine::Backend`]: the CPU engine or the WGSL engine.
//! * [`native::pipeline::compare`] (every [`ranking::distill::Method`] over the seeds) and
//!   [`native::pipeline::fit`] (one method, one seed); [`pipeline::report::results_json`] is
//!   what `results.json` holds, with the paired tests.
//! * [`model_io::save`] / [`model_io::load`] and [`onnx::export`]: the student that serves.
//! * [`error::Error`]: every refusal, naming the file, line and setting at fault.
//!
//! `examples/` holds three programs: a comparison on the bundled data, train and predict, and
//! PFD from a LightGBM teacher. A setup in a few lines:
//!
//! ```
//! use distillrank::ranking::distill::Method;
//! use distillrank::setup::Setup;
//!
//! let setup = Setup::from_json(r#"{"methods": ["no-distillation", "pfd"], "seeds": 3}"#)?;
//! assert_eq!(setup.methods, [Method::NoDistillation, Method::Pfd]);
//! assert_eq!(setup.epochs, Setup::default().epochs); // every field left out takes its default
//! assert!(Setup::from_json(r#"{"epochs": 0}"#).is_err()); // refused, naming the field
//! # Ok::<(), distillrank::error::Error>(())
//! ```
//!
//! The metrics are plain functions; NDCG averages over the orders of tied scores:
//!
//! ```
//! // Gains 2^grade - 1: the best document (grade 2) is ranked second.
//! let ndcg = distillrank::metrics::ndcg_at(3, &[0.9, 0.5, 0.1], &[1.0, 2.0, 0.0]).unwrap();
//! assert!((ndcg - 0.7967).abs() < 1e-3);
//! ```

pub mod bench;
pub mod clock;
pub mod cpu;
pub mod data;
pub mod engine;
pub mod error;
pub mod forest;
pub mod gpu;
pub mod math;
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
