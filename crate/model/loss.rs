//! The losses' shared words: which loss a model trains with ([`LossKind`]), the targets it takes,
//! and the weights that make each loss a mean ([`loss_weights`]: one rule for both engines, the
//! GPU kernels read the weights it gives). The scalar functions the losses and the objectives
//! are built from live here too, so that both engines compute them alike. The losses themselves
//! are each engine's ([`crate::cpu::loss`], `shaders/*.wgsl`).

use super::{positive_part, real, Real};

/// ln(1 + e^x), without overflow.
#[inline]
pub fn softplus<T: Real>(x: T) -> T {
    if x > T::zero() {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// 1 / (1 + e^-x), without overflow.
#[inline]
pub fn sigmoid<T: Real>(x: T) -> T {
    if x >= T::zero() {
        T::one() / (T::one() + (-x).exp())
    } else {
        let e = x.exp();
        e / (T::one() + e)
    }
}

/// (softplus(x), sigmoid(x)) from one exponential.
#[inline]
pub fn softplus_and_sigmoid<T: Real>(x: T) -> (T, T) {
    let (e, sigmoid) = exp_and_sigmoid(x);
    (positive_part(x) + e.ln_1p(), sigmoid)
}

/// (e^-|x|, sigmoid(x)): the pairwise losses' inner loop, where softplus(x) is
/// max(x, 0) + ln(1 + e^-|x|) and its logarithm goes to a [`Log1pSum`].
#[inline]
pub(crate) fn exp_and_sigmoid<T: Real>(x: T) -> (T, T) {
    let e = (-x.abs()).exp(); // in (0, 1]: no overflow
    let sigmoid = if x >= T::zero() {
        T::one() / (T::one() + e)
    } else {
        e / (T::one() + e)
    };
    (e, sigmoid)
}

/// Which loss a model trains with: one list for every door (the CLI's `--loss` values are these
/// names and help lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum LossKind {
    /// Pointwise binary cross-entropy on the documents.
    #[cfg_attr(feature = "cli", value(name = "rankbce"))]
    RankBce,
    /// Pairwise logistic loss on the document pairs of a group.
    #[cfg_attr(feature = "cli", value(name = "ranknet"))]
    RankNet,
    /// Listwise softmax cross-entropy (ListNet's top-one form) over each group; its teacher loss
    /// takes the teachers' softmax.
    #[cfg_attr(feature = "cli", value(name = "softmax"))]
    Softmax,
    /// RankNet's pairs, each weighted by |delta NDCG| of swapping the pair (LambdaRank); its
    /// teacher loss is RankNet's soft one.
    #[cfg_attr(feature = "cli", value(name = "lambdarank"))]
    LambdaRank,
}

impl LossKind {
    pub const ALL: [LossKind; 4] = [
        LossKind::RankBce,
        LossKind::RankNet,
        LossKind::Softmax,
        LossKind::LambdaRank,
    ];

    /// The name on the command line, on the page and in files.
    pub fn name(self) -> &'static str {
        match self {
            LossKind::RankBce => "rankbce",
            LossKind::RankNet => "ranknet",
            LossKind::Softmax => "softmax",
            LossKind::LambdaRank => "lambdarank",
        }
    }

    pub fn parse(name: &str) -> Option<LossKind> {
        LossKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for LossKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LossKind::RankBce => "RankBCE",
            LossKind::RankNet => "RankNet",
            LossKind::Softmax => "Softmax",
            LossKind::LambdaRank => "LambdaRank",
        })
    }
}

/// The targets a loss takes: hard labels y (the data loss) or the teachers' soft labels.
#[derive(Clone, Copy)]
pub enum Targets<'a, T> {
    Hard(&'a [T]),
    Soft,
}

/// The weights that make each loss a mean, in one place for both engines (the GPU kernels read
/// them after their targets). RankBCE: one per document, 1 / (documents included). RankNet and
/// LambdaRank: one per group, 1 / (the group's pairs x the groups with pairs), where a pair is
/// y_i > y_j with hard targets and any two documents with soft ones. Softmax: one per group,
/// 1 / (the groups of two or more documents, with a label above 0 when the targets are hard).
/// Excluded groups, and groups without pairs, weigh 0.
pub fn loss_weights<T: Real>(
    kind: LossKind,
    targets: Targets<T>,
    offsets: &[usize],
    include: &[bool],
) -> Vec<T> {
    let ranges = || {
        offsets
            .windows(2)
            .zip(include)
            .map(|(w, &inc)| (w[0]..w[1], inc))
    };
    match kind {
        LossKind::Softmax => {
            // Groups of two or more documents, with a label above 0 when the targets are hard.
            let counted: Vec<bool> = ranges()
                .map(|(r, inc)| {
                    inc && r.len() >= 2
                        && match targets {
                            Targets::Hard(labels) => labels[r].iter().any(|&y| y > T::zero()),
                            Targets::Soft => true,
                        }
                })
                .collect();
            let groups = counted.iter().filter(|&&c| c).count();
            counted
                .iter()
                .map(|&c| {
                    if c {
                        T::one() / real(groups as f64)
                    } else {
                        T::zero()
                    }
                })
                .collect()
        }
        LossKind::RankBce => {
            let n: usize = ranges().filter(|g| g.1).map(|g| g.0.len()).sum();
            let w = if n > 0 {
                T::one() / real(n as f64)
            } else {
                T::zero()
            };
            ranges()
                .flat_map(|(r, inc)| std::iter::repeat_n(if inc { w } else { T::zero() }, r.len()))
                .collect()
        }
        LossKind::RankNet | LossKind::LambdaRank => {
            let pairs: Vec<usize> = ranges()
                .map(|(r, inc)| match (inc, targets) {
                    (false, _) => 0,
                    (true, Targets::Soft) => r.len() * r.len().saturating_sub(1) / 2,
                    (true, Targets::Hard(labels)) => r
                        .clone()
                        .map(|i| r.clone().filter(|&j| labels[i] > labels[j]).count())
                        .sum(),
                })
                .collect();
            let with_pairs = pairs.iter().filter(|&&p| p > 0).count();
            pairs
                .iter()
                .map(|&p| {
                    if p > 0 {
                        T::one() / real((p * with_pairs) as f64)
                    } else {
                        T::zero()
                    }
                })
                .collect()
        }
    }
}
