//! The ground floor: the words every engine and every application shares, and nothing else. The
//! model and its weights ([`mlp`]), k of them averaged ([`ensemble`]), the losses' names and the weights that make each a mean
//! ([`loss`]), Adam's settings ([`adam`]), the global objectives and their reference maths
//! ([`objective`]), and what one training step needs ([`step`]: the batch, the plan of its
//! losses, the losses it reports).
//!
//! Both engines ([`crate::cpu`], [`crate::gpu`]) and both applications ([`crate::ranking`],
//! [`crate::objectives`]) import these; this module imports nothing above it (only
//! [`crate::error`] and [`crate::rng`]), and `tests/architecture.rs` fails on any upward import.

pub mod adam;
pub mod attention;
pub mod dropout;
pub mod ensemble;
pub mod loss;
pub mod mlp;
pub mod objective;
pub mod step;

pub use adam::AdamConfig;
pub use attention::Attention;
pub use ensemble::Ensemble;
pub use loss::LossKind;
pub use mlp::{Dense, LayerNorm, Mlp, Norm};
pub use objective::Objective;
pub use step::{LossPlan, StepBatch, StepLosses};

/// A floating-point type the engine runs in: f32 for training, f64 for gradient checks.
pub trait Real:
    num_traits::Float
    + num_traits::FromPrimitive
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + std::iter::Sum
    + crate::math::Libm
    + 'static
{
}
impl Real for f32 {}
impl Real for f64 {}

/// max(v, 0) as a comparison and a select (NaN gives 0). `f32::max` is a call to `fmaxf` on
/// wasm32, where the max instruction treats NaN otherwise, and that call, never inlined nor
/// vectorised, took a quarter of the page's training time in the ReLU alone.
#[inline]
pub fn positive_part<T: Real>(v: T) -> T {
    if v > T::zero() {
        v
    } else {
        T::zero()
    }
}

#[inline]
pub fn real<T: Real>(v: f64) -> T {
    T::from_f64(v).unwrap()
}
