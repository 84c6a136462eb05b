//! The ranking side: one model's training loop ([`train`]), the methods and Ranking
//! Distillation ([`distill`]), the comparison of methods over seeds ([`experiment`]) and the
//! ranking metrics ([`metrics`]).

pub mod distill;
pub mod experiment;
pub mod metrics;
pub mod train;
