//! Input transforms fitted on the training split, with or after the signed log1p of spec §1.3.
//!
//! Neural rankers need inputs of comparable scale; trees do not. Qin et al. (ICLR 2021, "Are
//! Neural Rankers still Outperformed by Gradient Boosted Decision Trees?") close most of the gap
//! to LambdaMART with an input transformation alone. Three choices, one [`Transform`] each:
//!
//! - `signed-log1p`: the PFD paper's sign(x) ln(1 + |x|), nothing fitted (the default);
//! - `standardize`: then (v - mean) / std per column, both from the training split;
//! - `rank-gauss`: each column through its training distribution to a standard normal
//!   (v -> Phi^-1(F(v))), with F the empirical distribution function at up to
//!   [`MAX_KNOTS`] training values, linear between them (a quantile transform, as scikit-learn's
//!   `QuantileTransformer(output_distribution="normal")`). A monotone transform before it would
//!   change nothing but where it interpolates, so it maps the raw values: a saved model and its
//!   ONNX graph then compute its inputs with the same few f32 operations, bit for bit, where a
//!   log(1 + |x|) of another library's would differ in the last place and a steep stretch of the
//!   map would magnify that.
//!
//! A fitted transform is one [`ColumnMap`] per column. Preparation fits the maps of x and z on
//! the training split and applies them to every split's matrices, so both engines, every model and
//! every door read the transformed inputs; a saved model carries the maps of its columns and
//! applies them itself ([`crate::model_io`]), and the ONNX graph holds them ([`crate::onnx`]).
//!
//! A constant column maps to 0 under both fitted transforms, on every split: it carries nothing,
//! and a value never seen in training still gives a finite input.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the inputs are transformed after the signed log1p.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transform {
    /// The signed log1p alone (spec §1.3).
    #[default]
    SignedLog1p,
    /// The signed log1p, then each column standardised by the training split's mean and
    /// standard deviation.
    Standardize,
    /// Each column through its training distribution to a standard normal (a quantile
    /// transform), from the raw values: no signed log1p, which would change nothing but where
    /// the map interpolates.
    RankGauss,
}

impl Transform {
    /// Every transform, in the order the help lists them.
    pub const ALL: [Transform; 3] = [
        Transform::SignedLog1p,
        Transform::Standardize,
        Transform::RankGauss,
    ];

    /// The name as a setup, a flag and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Transform::SignedLog1p => "signed-log1p",
            Transform::Standardize => "standardize",
            Transform::RankGauss => "rank-gauss",
        }
    }

    pub fn parse(name: &str) -> Result<Transform> {
        Transform::ALL
            .into_iter()
            .find(|t| t.name() == name.trim())
            .ok_or_else(|| {
                Error::Config(format!(
                    "transform '{}': expected {}",
                    crate::error::printable(name),
                    Transform::ALL.map(Transform::name).join(", ")
                ))
            })
    }

    /// What it does, in words: the page's tooltip and the help's list.
    pub fn help(self) -> &'static str {
        match self {
            Transform::SignedLog1p => "sign(x) ln(1 + |x|) alone: the PFD paper's",
            Transform::Standardize => {
                "the signed log1p, then each column less its mean, over its standard deviation (on the training split)"
            }
            Transform::RankGauss => {
                "each column through its quantiles on the training split to a standard normal (no signed log1p: a monotone map before it would change nothing)"
            }
        }
    }

    /// Every transform's name and help, as the page builds its form and Python lists them.
    pub fn all_json() -> serde_json::Value {
        Transform::ALL
            .map(|t| serde_json::json!({"name": t.name(), "help": t.help()}))
            .to_vec()
            .into()
    }

    /// Whether the signed log1p comes first (every transform but rank-gauss).
    pub fn signed_log1p(self) -> bool {
        self != Transform::RankGauss
    }

    pub fn is_default(&self) -> bool {
        *self == Transform::default()
    }

    /// The maps of the `width` columns of a row-major matrix of `n_rows` rows, fitted on it;
    /// empty for the signed log1p alone, which fits nothing.
    pub fn fit(self, matrix: &[f32], width: usize) -> Vec<ColumnMap> {
        if self == Transform::SignedLog1p || width == 0 {
            return Vec::new();
        }
        let n_rows = matrix.len() / width;
        let stride = n_rows.div_ceil(MAX_FIT_ROWS).max(1);
        let fit_every = |j: usize, stride: usize| {
            let column = matrix
                .chunks_exact(width)
                .step_by(stride)
                .map(move |row| row[j]);
            match self {
                Transform::Standardize => standardize(column),
                _ => rank_gauss(column.collect()),
            }
        };
        // A sparse column whose values all lie on rows the sample skips would look constant:
        // one that does is fitted again on every row.
        let fit_column = |j: usize| match fit_every(j, stride) {
            map if stride > 1 && map.is_constant() => fit_every(j, 1),
            map => map,
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            (0..width).into_par_iter().map(fit_column).collect()
        }
        #[cfg(target_arch = "wasm32")]
        (0..width).map(fit_column).collect()
    }
}

/// The most rows a fit reads: every k-th row of a larger split (a quantile of 1M rows is that of
/// every 10th to within 0.001).
pub const MAX_FIT_ROWS: usize = 1 << 20;

/// The most knots a rank-Gauss map keeps: distinct training values, evenly spaced in rank (the
/// first and the last always). The ONNX graph compares every value with all of a column's knots,
/// so this bounds its work per value.
pub const MAX_KNOTS: usize = 64;

/// One column's fitted map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ColumnMap {
    /// v -> (v - shift) * scale.
    Affine { shift: f32, scale: f32 },
    /// v -> linear through the points (knots[i], values[i]), constant beyond the first and the
    /// last knot. Knots strictly increase.
    Knots { knots: Vec<f32>, values: Vec<f32> },
}

impl ColumnMap {
    /// Whether it maps every value to one (a column constant where it was fitted).
    pub fn is_constant(&self) -> bool {
        match self {
            ColumnMap::Affine { scale, .. } => *scale == 0.0,
            ColumnMap::Knots { knots, .. } => knots.len() < 2,
        }
    }

    pub fn apply(&self, v: f32) -> f32 {
        match self {
            ColumnMap::Affine { shift, scale } => (v - shift) * scale,
            ColumnMap::Knots { knots, values } => {
                // The knots at or below v: v lies between knots[i - 1] and knots[i]. The
                // arithmetic is the ONNX graph's, operation for operation ([`crate::onnx`]).
                let i = knots.partition_point(|&k| k <= v);
                if i == 0 {
                    values[0]
                } else if i == knots.len() {
                    values[i - 1]
                } else {
                    let inv_width = 1.0 / (knots[i] - knots[i - 1]);
                    let t = ((v - knots[i - 1]) * inv_width).clamp(0.0, 1.0);
                    values[i - 1] + t * (values[i] - values[i - 1])
                }
            }
        }
    }

    /// Checks a map read from a file: finite numbers, knots strictly increasing and as many
    /// values as knots.
    pub fn check(&self) -> std::result::Result<(), String> {
        match self {
            ColumnMap::Affine { shift, scale } => {
                if !(shift.is_finite() && scale.is_finite()) {
                    return Err(format!(
                        "an affine map's shift {shift} and scale {scale} must be finite"
                    ));
                }
            }
            ColumnMap::Knots { knots, values } => {
                // One more than MAX_KNOTS: the knot at 0 of a gap f32 cannot subtract.
                let most = MAX_KNOTS + 1;
                if knots.is_empty() || knots.len() != values.len() || knots.len() > most {
                    return Err(format!(
                        "a knots map holds {} knots and {} values: expected as many of each, 1 to {most}",
                        knots.len(),
                        values.len()
                    ));
                }
                if knots.iter().chain(values).any(|v| !v.is_finite()) {
                    return Err("a knots map holds a value that is not finite".into());
                }
                if knots.windows(2).any(|w| w[0] >= w[1]) {
                    return Err("a knots map's knots must strictly increase".into());
                }
                if knots.windows(2).any(|w| !(w[1] - w[0]).is_finite()) {
                    return Err(
                        "a knots map holds two knots further apart than f32 can subtract (about 3.4e38)"
                            .into(),
                    );
                }
                if knots.windows(2).any(|w| !is_gap(w[0], w[1])) {
                    return Err(
                        "a knots map holds two knots closer than f32 can divide by (about 3e-39 apart)"
                            .into(),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Applies `maps` (one per column) to every row of a row-major matrix; in parallel natively.
pub fn apply(maps: &[ColumnMap], matrix: &mut [f32]) {
    let width = maps.len();
    if width == 0 {
        return;
    }
    let map_rows = |rows: &mut [f32]| {
        for row in rows.chunks_exact_mut(width) {
            for (v, map) in row.iter_mut().zip(maps) {
                *v = map.apply(*v);
            }
        }
    };
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        matrix.par_chunks_mut(width * 4096).for_each(map_rows);
    }
    #[cfg(target_arch = "wasm32")]
    map_rows(matrix);
}

/// The spread, in f32 steps (epsilon) of its mean's size, that a column must exceed for
/// standardisation to keep it: below, its values differ by rounding.
const ROUNDING_SPREAD: f64 = 4.0;

/// (v - mean) / std; a constant column (std 0, or within [`ROUNDING_SPREAD`] steps of f32 of its
/// mean) maps to 0.
fn standardize(column: impl Iterator<Item = f32>) -> ColumnMap {
    let (mut n, mut mean, mut m2) = (0f64, 0f64, 0f64);
    // Welford's running mean and sum of squares: exact enough at any length.
    for v in column {
        n += 1.0;
        let d = f64::from(v) - mean;
        mean += d / n;
        m2 += d * (f64::from(v) - mean);
    }
    let std = if n > 0.0 { (m2 / n).sqrt() } else { 0.0 };
    // A spread too small for its reciprocal in f32 (below about 3e-39: values that differ only
    // in subnormal digits) is constant as well: its scale would be infinite, and v = mean would
    // give 0 × inf = NaN. So is a spread of a few f32 steps of the mean (1e30 and 1.00001e30,
    // 69.07755 and 69.07756 after the log1p): rounding, not signal, whose scale of 1e5 would
    // send a value off that narrow range (1 on another split) to millions.
    let scale = (1.0 / std) as f32;
    let resolved = std > ROUNDING_SPREAD * f64::from(f32::EPSILON) * mean.abs();
    ColumnMap::Affine {
        shift: mean as f32,
        scale: if std > 0.0 && resolved && scale.is_finite() {
            scale
        } else {
            0.0
        },
    }
}

/// The quantile map of a column's values: each distinct value at the normal quantile of its
/// mid-rank, (rank + 0.5) / n, at up to [`MAX_KNOTS`] distinct values. A constant column maps
/// to 0.
fn rank_gauss(mut column: Vec<f32>) -> ColumnMap {
    column.sort_unstable_by(f32::total_cmp);
    let n = column.len() as f64;
    // Each distinct value and the normal quantile of its mid-rank.
    let mut distinct: Vec<(f32, f32)> = Vec::new();
    let mut start = 0;
    while start < column.len() {
        let v = column[start];
        let end = start + column[start..].partition_point(|&u| u == v);
        let mid_rank = (start + end - 1) as f64 / 2.0;
        distinct.push((v, normal_quantile((mid_rank + 0.5) / n) as f32));
        start = end;
    }
    if distinct.len() <= 1 {
        return ColumnMap::Knots {
            knots: vec![distinct.first().map_or(0.0, |d| d.0)],
            values: vec![0.0],
        };
    }
    let kept: Vec<(f32, f32)> = if distinct.len() <= MAX_KNOTS {
        distinct
    } else {
        let (last, m) = (distinct.len() - 1, MAX_KNOTS - 1);
        (0..MAX_KNOTS)
            .map(|i| distinct[(i * last + m / 2) / m])
            .collect()
    };
    // Knots closer than f32 can take the reciprocal of (about 3e-39 apart) are one knot: the
    // interpolation divides by their gap.
    let mut apart: Vec<(f32, f32)> = Vec::with_capacity(kept.len());
    for (knot, value) in kept {
        match apart.last() {
            Some(&(last, _)) if !is_gap(last, knot) => {}
            _ => apart.push((knot, value)),
        }
    }
    if apart.len() == 1 {
        apart[0].1 = 0.0;
    }
    let (knots, values) = split_wide_gap(apart).into_iter().unzip();
    ColumnMap::Knots { knots, values }
}

/// Knots further apart than f32 can subtract (one below 0, one above, more than about 3.4e38
/// apart in all) get a knot at 0 between them, its value on their line (computed in f64): the
/// interpolation subtracts a knot from the one after it, and from any value between them. Only
/// the gap across 0 can be so wide, so a map has at most one knot more than [`MAX_KNOTS`].
fn split_wide_gap(knots: Vec<(f32, f32)>) -> Vec<(f32, f32)> {
    let mut split = Vec::with_capacity(knots.len() + 1);
    for (i, &(b, vb)) in knots.iter().enumerate() {
        if let Some(&(a, va)) = i.checked_sub(1).map(|p| &knots[p]) {
            if !(b - a).is_finite() {
                let (a, va, b, vb) = (f64::from(a), f64::from(va), f64::from(b), f64::from(vb));
                split.push((0.0, (va + (0.0 - a) / (b - a) * (vb - va)) as f32));
            }
        }
        split.push((b, vb));
    }
    split
}

/// Whether knots `a < b` are far enough apart for [`ColumnMap::apply`] to divide by their gap.
fn is_gap(a: f32, b: f32) -> bool {
    (1.0 / (b - a)).is_finite()
}

/// The standard normal quantile Phi^-1(p) for p in (0, 1): Acklam's rational approximation
/// (relative error below 1.2e-9), refined by one Halley step on erfc.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    const LOW: f64 = 0.02425;
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < LOW {
        tail(libm::sqrt(-2.0 * libm::log(p)))
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail(libm::sqrt(-2.0 * libm::log(1.0 - p)))
    };
    // One Halley step: e = Phi(x) - p.
    let e = 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * libm::sqrt(2.0 * std::f64::consts::PI) * libm::exp(x * x / 2.0);
    x - u / (1.0 + x * u / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_quantile_inverts_the_normal_distribution() {
        for &(p, x) in &[
            (0.5, 0.0),
            (0.975, 1.959963984540054),
            (0.025, -1.959963984540054),
            (0.999, 3.090232306167813),
            (1e-6, -4.753424308822899),
        ] {
            assert!(
                (normal_quantile(p) - x).abs() < 1e-9,
                "{p}: {}",
                normal_quantile(p)
            );
        }
    }

    #[test]
    fn standardize_gives_zero_mean_unit_variance_and_zero_on_a_constant_column() {
        let matrix = [1.0, 5.0, 2.0, 5.0, 3.0, 5.0, 6.0, 5.0];
        let maps = Transform::Standardize.fit(&matrix, 2);
        let mut out = matrix;
        apply(&maps, &mut out);
        let x: Vec<f32> = out.iter().step_by(2).copied().collect();
        let mean = x.iter().sum::<f32>() / 4.0;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 4.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{x:?}");
        assert!(out.iter().skip(1).step_by(2).all(|&v| v == 0.0), "{out:?}");
        // A value never seen in training on the constant column is still 0, finite.
        assert_eq!(maps[1].apply(1e30), 0.0);
    }

    #[test]
    fn a_column_whose_values_the_sample_skips_is_fitted_on_every_row() {
        // More rows than a fit samples: every other row is read, and the one value that
        // varies lies on a row it skips. The map is fitted again on every row, not constant.
        let n = MAX_FIT_ROWS + 2;
        let mut column = vec![0f32; n];
        column[1] = 5.0;
        for transform in [Transform::Standardize, Transform::RankGauss] {
            let maps = transform.fit(&column, 1);
            assert!(!maps[0].is_constant(), "{transform:?}: {:?}", maps[0]);
            assert!(maps[0].apply(5.0) > maps[0].apply(0.0), "{transform:?}");
        }
    }

    /// A column whose values differ by less than f32 can take the reciprocal of (subnormal
    /// digits: 0 and 1e-40) is a constant column for both fitted transforms: every value maps to
    /// a finite number, where the infinite scale gave 0 × inf = NaN at the mean or a knot.
    /// Its spread may be small but within range (1e-30): then it is kept, finite.
    #[test]
    fn a_spread_below_what_f32_can_divide_by_is_a_constant_column() {
        for tiny in [1e-40f32, 1e-45, f32::MIN_POSITIVE / 4.0] {
            let column = [0.0, tiny, 0.0, tiny, tiny, 0.0];
            for transform in [Transform::Standardize, Transform::RankGauss] {
                let maps = transform.fit(&column, 1);
                assert_eq!(maps[0].check(), Ok(()), "{transform:?} on {tiny}");
                for v in [0.0, tiny, 1.0, -1.0, 1e30] {
                    let out = maps[0].apply(v);
                    assert_eq!(out, 0.0, "{transform:?} of {v} on a column of 0 and {tiny}");
                }
            }
        }
        let maps = Transform::Standardize.fit(&[0.0, 1e-30, 0.0, 1e-30], 1);
        assert!([0.0, 1e-30].iter().all(|&v| maps[0].apply(v).abs() == 1.0));
        // Values one or two f32 steps apart (1e30 and 1.00001e30 after the signed log1p) differ
        // by rounding: constant, where a scale of 262,144 sent a 1 elsewhere to -1.8e7.
        let steps = [69.07755f32, 69.07756, 69.07755, 69.07756];
        let maps = Transform::Standardize.fit(&steps, 1);
        for v in [69.07755f32, 69.07756, 1.0] {
            assert_eq!(maps[0].apply(v), 0.0, "{v}");
        }
        // A spread of a thousandth of the mean is kept.
        let maps = Transform::Standardize.fit(&[69.0, 69.07, 69.0, 69.07], 1);
        assert!([69.0f32, 69.07]
            .iter()
            .all(|&v| (maps[0].apply(v).abs() - 1.0).abs() < 1e-3));
        let close = ColumnMap::Knots {
            knots: vec![0.0, 1e-40],
            values: vec![-1.0, 1.0],
        };
        assert!(close.check().is_err());
    }

    #[test]
    fn rank_gauss_is_monotone_symmetric_and_zero_on_a_constant_column() {
        let column: Vec<f32> = (0..1000)
            .map(|i| libm::sinf(i as f32 * 0.37) * 10.0)
            .collect();
        let matrix: Vec<f32> = column.iter().flat_map(|&v| [v, 2.5]).collect();
        let maps = Transform::RankGauss.fit(&matrix, 2);
        maps.iter().for_each(|m| m.check().unwrap());
        let ColumnMap::Knots { knots, .. } = &maps[0] else {
            panic!("{:?}", maps[0])
        };
        assert_eq!(knots.len(), MAX_KNOTS);
        let mut sorted = column.clone();
        sorted.sort_by(f32::total_cmp);
        let mapped: Vec<f32> = sorted.iter().map(|&v| maps[0].apply(v)).collect();
        assert!(mapped.windows(2).all(|w| w[0] <= w[1]));
        // The median maps near 0, the extremes near the quantiles of ranks 0.5 / n.
        assert!(mapped[500].abs() < 0.05, "{}", mapped[500]);
        let extreme = normal_quantile(0.5 / 1000.0) as f32;
        assert!((mapped[0] - extreme).abs() < 1e-4 && (mapped[999] + extreme).abs() < 1e-4);
        assert_eq!(maps[1].apply(2.5), 0.0);
        assert_eq!(maps[1].apply(-7.0), 0.0);
    }

    #[test]
    fn knots_further_apart_than_f32_can_subtract_are_split_at_zero() {
        // Two values whose gap overflows f32: the values between them are interpolated, not
        // read as the first knot's (the gap's reciprocal 0) or NaN (inf × 0).
        let column: Vec<f32> = (0..100)
            .map(|i| if i % 2 == 0 { -2e38 } else { 2e38 })
            .collect();
        let map = &Transform::RankGauss.fit(&column, 1)[0];
        map.check().unwrap();
        let ColumnMap::Knots { knots, values } = map else {
            panic!("{map:?}")
        };
        assert_eq!(knots, &[-2e38, 0.0, 2e38]);
        assert!(values[1].abs() < 1e-6 && (values[0] + values[2]).abs() < 1e-6);
        let mapped: Vec<f32> = [-3e38f32, -2e38, -1e38, 0.0, 1e38, 1.5e38, 2e38, 3e38]
            .iter()
            .map(|&v| map.apply(v))
            .collect();
        assert!(mapped.iter().all(|v| v.is_finite()), "{mapped:?}");
        assert!(mapped[1..7].windows(2).all(|w| w[0] < w[1]), "{mapped:?}");
        assert_eq!((mapped[0], mapped[7]), (mapped[1], mapped[6]));
        assert!((mapped[2] - values[0] / 2.0).abs() < 1e-6, "{mapped:?}");
        // Such a map from a file, without its knot at 0, is refused.
        let wide = ColumnMap::Knots {
            knots: vec![-2e38, 2e38],
            values: vec![-1.0, 1.0],
        };
        assert!(wide.check().unwrap_err().contains("further apart"));
        // A gap f32 holds is left as it is.
        let map = &Transform::RankGauss.fit(&[-1e38, 1e38, 5.0, -5.0], 1)[0];
        let ColumnMap::Knots { knots, .. } = map else {
            panic!("{map:?}")
        };
        assert_eq!(knots, &[-1e38, -5.0, 5.0, 1e38]);
    }

    #[test]
    fn ties_share_their_mid_rank() {
        // Half zeros, half ones: each value at the quantile of its mid-rank.
        let column: Vec<f32> = (0..100).map(|i| (i >= 50) as u8 as f32).collect();
        let map = &Transform::RankGauss.fit(&column, 1)[0];
        let low = normal_quantile((24.5 + 0.5) / 100.0) as f32;
        assert!((map.apply(0.0) - low).abs() < 1e-6 && (map.apply(1.0) + low).abs() < 1e-6);
        assert!((map.apply(0.5)).abs() < 1e-6);
    }

    #[test]
    fn maps_read_from_a_file_are_checked() {
        let bad = [
            ColumnMap::Affine {
                shift: f32::NAN,
                scale: 1.0,
            },
            ColumnMap::Knots {
                knots: vec![],
                values: vec![],
            },
            ColumnMap::Knots {
                knots: vec![1.0, 1.0],
                values: vec![0.0, 1.0],
            },
            ColumnMap::Knots {
                knots: vec![1.0],
                values: vec![0.0, 1.0],
            },
        ];
        for map in bad {
            assert!(map.check().is_err(), "{map:?}");
        }
    }
}
