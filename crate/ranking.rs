//! The ranking side: one model's training loop ([`train`]), the methods and Ranking
//! Distillation ([`distill`]), the comparison of methods over seeds ([`experiment`]); the ranking
//! metrics are the ground floor's ([`crate::metrics`]).

pub mod clicks;
pub mod distill;
pub mod experiment;
pub mod train;
