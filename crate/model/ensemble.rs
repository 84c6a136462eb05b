//! A model as it is served: one MLP, or k MLPs of the same widths trained from different seeds
//! whose scores are averaged (Qin et al. 2021's ensembles). Training steps one member at a time
//! ([`crate::ranking::train`]); scoring, saving, loading and the ONNX graph take the whole.

use super::Mlp;
use crate::rng::Rng;

/// The most members an ensemble takes: each one is a whole training and a whole forward pass
/// at serving.
pub const MAX_MEMBERS: usize = 64;

/// One model, or the mean of `members`' scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Ensemble {
    /// At least one, all of the same inputs and widths.
    pub members: Vec<Mlp<f32>>,
}

impl Ensemble {
    /// A model of one member.
    pub fn single(model: Mlp<f32>) -> Self {
        Ensemble {
            members: vec![model],
        }
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Never: an ensemble has a member. (For the `len` convention.)
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn n_in(&self) -> usize {
        self.members[0].n_in()
    }

    pub fn widths(&self) -> Vec<usize> {
        self.members[0].widths()
    }

    /// Every member's parameters: what serving reads.
    pub fn n_parameters(&self) -> usize {
        self.members.iter().map(Mlp::n_parameters).sum()
    }

    pub fn all_finite(&self) -> bool {
        self.members.iter().all(Mlp::all_finite)
    }
}

/// The seed member `i` of an ensemble trained at `seed` starts from: member 0 trains at `seed`
/// itself (an ensemble of one is the model), the others at seeds drawn from it, so that no member
/// shares its initial weights or batch order with another seed's model.
pub fn member_seed(seed: u64, i: usize) -> u64 {
    if i == 0 {
        return seed;
    }
    Rng::stream(seed, 0x656e_7365_6d62_6c65 ^ i as u64).next_u64()
}

/// The ensemble's scores from its members' (each `n` long): their mean, summed in member order
/// in f32 and divided by k, as the ONNX graph's `Mean` computes it.
pub fn mean_scores(members: &[Vec<f32>]) -> Vec<f32> {
    let k = members.len() as f32;
    let mut out = members[0].clone();
    for scores in &members[1..] {
        for (o, s) in out.iter_mut().zip(scores) {
            *o += s;
        }
    }
    if members.len() > 1 {
        for o in &mut out {
            *o /= k;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_seeds_are_distinct_from_each_other_and_from_nearby_seeds() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..20u64 {
            for i in 0..8 {
                assert!(seen.insert(member_seed(seed, i)), "seed {seed} member {i}");
            }
        }
        assert_eq!(member_seed(7, 0), 7);
    }

    #[test]
    fn the_mean_of_one_member_is_its_scores() {
        let scores = vec![0.5f32, -1.25, 3.0];
        assert_eq!(mean_scores(std::slice::from_ref(&scores)), scores);
        let mean = mean_scores(&[vec![1.0, 2.0], vec![3.0, -2.0], vec![2.0, 0.0]]);
        assert_eq!(mean, vec![2.0, 0.0]);
    }
}
