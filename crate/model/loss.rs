//! The losses' shared words: which loss a model trains with ([`LossKind`]), the targets it takes,
//! and the weights that make each loss a mean ([`loss_weights`]: one rule for both engines, the
//! GPU kernels read the weights it gives). The scalar functions the losses and the objectives
//! are built from live here too, so that both engines compute them alike. The losses themselves
//! are each engine's ([`crate::cpu::loss`], `shaders/*.wgsl`).

use super::{positive_part, real, Real};
use crate::math::{exp, exp2, ln_1p};

/// ln(1 + e^x), without overflow.
#[inline]
pub fn softplus<T: Real>(x: T) -> T {
    if x > T::zero() {
        x + ln_1p(exp(-x))
    } else {
        ln_1p(exp(x))
    }
}

/// 1 / (1 + e^-x), without overflow.
#[inline]
pub fn sigmoid<T: Real>(x: T) -> T {
    if x >= T::zero() {
        T::one() / (T::one() + exp(-x))
    } else {
        let e = exp(x);
        e / (T::one() + e)
    }
}

/// (softplus(x), sigmoid(x)) from one exponential.
#[inline]
pub fn softplus_and_sigmoid<T: Real>(x: T) -> (T, T) {
    let (e, sigmoid) = exp_and_sigmoid(x);
    (positive_part(x) + ln_1p(e), sigmoid)
}

/// (e^-|x|, sigmoid(x)): the pairwise losses' inner loop, where softplus(x) is
/// max(x, 0) + ln(1 + e^-|x|) and its logarithm goes to a [`Log1pSum`].
#[inline]
pub(crate) fn exp_and_sigmoid<T: Real>(x: T) -> (T, T) {
    let e = exp(-x.abs()); // in (0, 1]: no overflow
    let sigmoid = if x >= T::zero() {
        T::one() / (T::one() + e)
    } else {
        e / (T::one() + e)
    };
    (e, sigmoid)
}

/// Which loss a model trains with. Each is described once, by its entry in [`LOSSES`]: its
/// name, label and help, how its terms make a mean and its GPU kernels. The CLI's `--loss`
/// values, the page's choices, Python's names and the tests' lists all read that table; the CPU
/// engine computes each loss in [`crate::cpu::loss`] and the GPU engine runs the kernels its entry
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossKind {
    RankBce,
    RankNet,
    Softmax,
    LambdaRank,
}

/// A WGSL kernel: its file in `shaders/` and its entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wgsl {
    pub file: &'static str,
    pub entry: &'static str,
}

/// How a loss's terms are weighed into a mean ([`loss_weights`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weighing {
    /// One weight per document: 1 / (the documents of the included groups).
    PerDocument,
    /// One weight per group: 1 / (the group's pairs x the groups with pairs), where a pair is
    /// y_i > y_j with hard targets and any two documents with soft ones.
    PerPair,
    /// One weight per group: 1 / (the groups of two or more documents, with a label above 0 when
    /// the targets are hard).
    PerList,
}

/// One loss, described once.
#[derive(Debug)]
pub struct LossEntry {
    pub kind: LossKind,
    /// The name on the command line, on the page, in Python and in files (`ranknet`).
    pub name: &'static str,
    /// The name in tables and reports (`RankNet`).
    pub label: &'static str,
    /// Its family, in a word or two (`pairwise`): the page's choice reads "RankNet (pairwise)".
    pub family: &'static str,
    /// What it computes: the CLI's help line for its value, the page's tooltip.
    pub help: &'static str,
    pub weighing: Weighing,
    /// Whether it learns graded targets (gains 2^y - 1, or the order of grades): what training on
    /// the grades and the relevance estimates of clicks need. RankBCE learns y in {0, 1}.
    pub graded: bool,
    /// The GPU kernels of the data loss (hard labels y), dispatched in order; they read the
    /// weights of [`loss_weights`] after their targets (`shaders/loss_prologue.wgsl`).
    pub hard: &'static [Wgsl],
    /// The GPU kernels of the teacher loss (the teachers' logits as soft labels).
    pub soft: &'static [Wgsl],
}

const fn wgsl(file: &'static str, entry: &'static str) -> Wgsl {
    Wgsl { file, entry }
}

const RANKNET_KERNEL: Wgsl = wgsl("ranknet.wgsl", "ranknet");

/// Every loss, in the order of [`LossKind`]'s variants.
pub const LOSSES: &[LossEntry] = &[
    LossEntry {
        kind: LossKind::RankBce,
        name: "rankbce",
        label: "RankBCE",
        family: "pointwise",
        help: "Pointwise binary cross-entropy on the documents",
        weighing: Weighing::PerDocument,
        graded: false,
        hard: &[wgsl("bce.wgsl", "bce")],
        soft: &[wgsl("bce.wgsl", "bce")],
    },
    LossEntry {
        kind: LossKind::RankNet,
        name: "ranknet",
        label: "RankNet",
        family: "pairwise",
        help: "Pairwise logistic loss on the document pairs of a group",
        weighing: Weighing::PerPair,
        graded: true,
        hard: &[RANKNET_KERNEL],
        soft: &[RANKNET_KERNEL],
    },
    LossEntry {
        kind: LossKind::Softmax,
        name: "softmax",
        label: "Softmax",
        family: "listwise",
        help: "Listwise softmax cross-entropy (ListNet's top-one form) over each group; its teacher loss takes the teachers' softmax",
        weighing: Weighing::PerList,
        graded: true,
        hard: &[wgsl("listwise.wgsl", "softmax_ce")],
        soft: &[wgsl("listwise.wgsl", "softmax_ce")],
    },
    LossEntry {
        kind: LossKind::LambdaRank,
        name: "lambdarank",
        label: "LambdaRank",
        family: "pairwise, NDCG-weighted",
        help: "RankNet's pairs, each weighted by |delta NDCG| of swapping the pair; its teacher loss is RankNet's soft one",
        weighing: Weighing::PerPair,
        graded: true,
        hard: &[
            wgsl("listwise.wgsl", "lambda_ranks"),
            wgsl("listwise.wgsl", "lambdarank"),
        ],
        soft: &[RANKNET_KERNEL],
    },
];

impl LossKind {
    /// Every loss, in the table's order.
    pub const ALL: [LossKind; LOSSES.len()] = {
        let mut all = [LossKind::RankNet; LOSSES.len()];
        let mut i = 0;
        while i < LOSSES.len() {
            all[i] = LOSSES[i].kind;
            i += 1;
        }
        all
    };

    /// Every loss's name, in the table's order.
    pub const NAMES: [&'static str; LOSSES.len()] = {
        let mut names = [""; LOSSES.len()];
        let mut i = 0;
        while i < LOSSES.len() {
            names[i] = LOSSES[i].name;
            i += 1;
        }
        names
    };

    /// Its entry in [`LOSSES`] (`tests/entries.rs` checks the table's order).
    pub fn entry(self) -> &'static LossEntry {
        &LOSSES[self as usize]
    }

    /// The name on the command line, on the page and in files.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn parse(name: &str) -> Option<LossKind> {
        LOSSES.iter().find(|e| e.name == name).map(|e| e.kind)
    }

    /// The names of every loss, for messages: "rankbce, ranknet, softmax or lambdarank".
    pub fn names() -> String {
        or_list(LossKind::NAMES.iter().copied())
    }

    /// The names of the losses that learn graded targets ([`LossEntry::graded`]), for messages:
    /// "ranknet, softmax or lambdarank".
    pub fn graded_names() -> String {
        or_list(LOSSES.iter().filter(|l| l.graded).map(|l| l.name))
    }
}

/// "a, b or c".
pub fn or_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

impl std::fmt::Display for LossKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.entry().label)
    }
}

impl serde::Serialize for LossKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for LossKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        LossKind::parse(&name)
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, &LossKind::NAMES))
    }
}

/// The CLI's `--loss` values: each loss's name and help, from its entry.
#[cfg(feature = "cli")]
impl clap::ValueEnum for LossKind {
    fn value_variants<'a>() -> &'a [Self] {
        &LossKind::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let entry = self.entry();
        Some(clap::builder::PossibleValue::new(entry.name).help(entry.help))
    }
}

/// Every loss as the page and Python list them: name, label, family and help.
pub fn losses_json() -> serde_json::Value {
    LOSSES
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name, "label": e.label, "family": e.family, "help": e.help,
                "graded": e.graded,
            })
        })
        .collect()
}

/// The targets a loss takes: hard labels y (the data loss) or the teachers' soft labels.
#[derive(Clone, Copy)]
pub enum Targets<'a, T> {
    Hard(&'a [T]),
    Soft,
}

/// A label's gain 2^y - 1, as NDCG and LambdaRank weigh it: the softmax's hard target of a
/// document is its gain over its group's (binary y: y itself, exactly).
pub fn gain<T: Real>(y: T) -> T {
    if y == T::zero() || y == T::one() {
        y
    } else {
        exp2(y) - T::one()
    }
}

/// The softmax cross-entropy's hard targets on both engines: each label's [`gain`].
pub fn gains<T: Real>(labels: &[T]) -> Vec<T> {
    labels.iter().map(|&y| gain(y)).collect()
}

/// The hard targets a loss kernel of `kind` reads: the labels' [`gains`] for the softmax (the
/// kernel divides them by their group's sum), the labels themselves for the others.
pub fn hard_targets<T: Real>(kind: LossKind, labels: &[T]) -> std::borrow::Cow<'_, [T]> {
    match kind {
        LossKind::Softmax => std::borrow::Cow::Owned(gains(labels)),
        _ => std::borrow::Cow::Borrowed(labels),
    }
}

/// The weights that make each loss a mean, in one place for both engines (the GPU kernels read
/// them after their targets), by the loss's [`Weighing`]. Excluded groups, and groups without
/// pairs, weigh 0.
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
    match kind.entry().weighing {
        Weighing::PerList => {
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
        Weighing::PerDocument => {
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
        Weighing::PerPair => {
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
