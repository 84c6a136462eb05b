//! Global objectives (Eban et al., "Scalable Learning of Non-Decomposable Objectives", AISTATS
//! 2017; spec §7): training a binary classifier for AUC-PR, recall at a fixed precision, precision
//! at a fixed recall, the true positive rate at a fixed false positive rate, AUC-ROC or F-beta
//! instead of log-loss. This is the application: its data ([`data`]), its training loop
//! ([`train`]), its comparisons ([`experiment`]) and its metrics ([`metrics`]). The objectives'
//! maths and settings are the ground floor's ([`crate::model::objective`]);
//! their steps are the engines' ([`crate::cpu::classifier`], [`crate::gpu::objective`]).

pub mod data;
pub mod experiment;
pub mod metrics;
pub mod train;
