//! The settings of a global objective's classifier training: the ground floor's.

pub use crate::model::objective::{Config, DEFAULT_DUAL_RATE_FACTOR};
