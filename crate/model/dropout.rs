//! Dropout on the hidden layers (Srivastava et al. 2014): in training, each hidden unit of each
//! document is zeroed with probability `rate` and the others are scaled by 1 / (1 - rate), so
//! that scoring (no dropout) sees the same expected activations.
//!
//! The mask comes from a counter-based hash, not a stream: unit `i` of a layer's output at one
//! step is kept when `pcg(key ^ pcg(i)) >= threshold`, `key` drawn from the model's seed, the
//! step and the layer ([`Mask::of`]). Both engines compute the same u32 arithmetic (the WGSL
//! `dropout` kernel in `shaders/dense.wgsl`, [`Mask::apply`] here), so they drop the same units
//! at every step and train alike, with no mask to upload.

use super::{real, Real};

/// The dropout of a model's training: its rate and the seed its masks are drawn from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dropout {
    /// The probability of zeroing a hidden unit, in [0, 1).
    pub rate: f64,
    pub seed: u64,
}

/// PCG's output permutation of a 32-bit state (O'Neill 2014, the "RXS M XS" hash of Jarzynski
/// and Olano 2020): a well-mixed u32 from a u32.
pub fn pcg(x: u32) -> u32 {
    let state = x.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// The mask of one hidden layer at one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mask {
    /// Drawn from the seed, the step and the layer.
    pub key: u32,
    /// A unit is kept when its hash is at least this: rate x 2^32.
    pub threshold: u32,
    /// 1 / (1 - rate), in f32 (the GPU receives its bits).
    pub scale: f32,
}

impl Mask {
    /// Layer `layer`'s mask at step `step` (1 for a model's first step) of a model trained with
    /// `dropout`.
    pub fn of(dropout: &Dropout, step: u64, layer: usize) -> Mask {
        let (seed, step) = (dropout.seed, step);
        let key = pcg((seed as u32)
            ^ pcg(((seed >> 32) as u32)
                ^ pcg((step as u32) ^ pcg(((step >> 32) as u32) ^ pcg(layer as u32)))));
        Mask {
            key,
            threshold: (dropout.rate * 4_294_967_296.0).min(u32::MAX as f64) as u32,
            scale: (1.0 / (1.0 - dropout.rate)) as f32,
        }
    }

    /// Whether unit `i` of the layer's output (row-major, documents x units) is kept.
    pub fn keeps(&self, i: usize) -> bool {
        pcg(self.key ^ pcg(i as u32)) >= self.threshold
    }

    /// Applies the mask to a layer's output, or to the gradient with respect to it: zero where
    /// dropped, times the scale where kept.
    pub fn apply<T: Real>(&self, values: &mut [T]) {
        let scale: T = real(f64::from(self.scale));
        for (i, v) in values.iter_mut().enumerate() {
            *v = if self.keeps(i) { *v * scale } else { T::zero() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_rate_of_the_units_are_dropped_and_the_rest_scaled() {
        let dropout = Dropout { rate: 0.3, seed: 7 };
        let mask = Mask::of(&dropout, 1, 0);
        let mut values = vec![1.0f32; 100_000];
        mask.apply(&mut values);
        let dropped = values.iter().filter(|&&v| v == 0.0).count() as f64 / 1e5;
        assert!((dropped - 0.3).abs() < 0.01, "{dropped}");
        assert!(values
            .iter()
            .all(|&v| v == 0.0 || v == (1.0 / 0.7f64) as f32));
        // The expected activation is kept.
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / 1e5;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn masks_differ_by_step_and_layer_and_repeat_for_the_same_ones() {
        let dropout = Dropout { rate: 0.5, seed: 3 };
        let kept = |step, layer| -> Vec<bool> {
            let mask = Mask::of(&dropout, step, layer);
            (0..256).map(|i| mask.keeps(i)).collect()
        };
        assert_eq!(kept(1, 0), kept(1, 0));
        assert_ne!(kept(1, 0), kept(2, 0));
        assert_ne!(kept(1, 0), kept(1, 1));
        // A rate of 0 keeps every unit, unscaled.
        let none = Mask::of(&Dropout { rate: 0.0, seed: 3 }, 1, 0);
        assert!((0..10_000).all(|i| none.keeps(i)) && none.scale == 1.0);
    }
}
