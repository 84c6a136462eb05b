//! The settings of a global objective's classifier training: the ground floor's.

pub use crate::model::objective::{default_dual_rate_factor, Config};
