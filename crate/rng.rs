//! Seeded random numbers that are bit-identical on every platform.
//!
//! ChaCha8 gives the same stream everywhere; the transforms to Gaussian and Gumbel draws use `libm`
//! (a software implementation) rather than the platform's `ln`/`cos`, so native and wasm32 builds
//! draw the same labels and the same initial weights from the same seed.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

pub struct Rng(ChaCha8Rng);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(ChaCha8Rng::seed_from_u64(seed))
    }
    /// An independent stream for a named purpose, so that adding draws in one place does not shift
    /// the draws elsewhere.
    pub fn stream(seed: u64, purpose: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(purpose);
        Rng(rng)
    }
    /// Uniform in the open interval (0, 1): 52 random bits, centred in their cell, so that neither
    /// 0 nor 1 can come out (ln 0 and ln(-ln 1) would be infinite).
    pub fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 12) as f64 + 0.5) * (1.0 / (1u64 << 52) as f64)
    }
    /// 64 raw random bits (for fair coins taken 64 at a time, and integer draws without floats).
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [lo, hi).
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    /// Uniform integer in lo..=hi.
    pub fn int_range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.uniform() * (hi - lo + 1) as f64) as usize
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
    }
    /// Standard Gumbel: -ln(-ln U).
    pub fn gumbel(&mut self) -> f64 {
        -libm::log(-libm::log(self.uniform()))
    }
    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.0.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}
