//! Synthetic ranking data: the embedded default dataset, needing no files.
//!
//! * [`SynthKind::Letor`]: query groups of varying size; regular features x; hidden factors u that
//!   the model never sees; observed privileged features z that are noisy functions of u, as clicks
//!   or dwell time are of a document's true appeal; graded relevance 0..4 from a nonlinear function
//!   of x and a function of u, plus noise, plus an optional shift per query. `privileged_strength`
//!   is the share of the relevance signal that only u explains.
//! * [`SynthKind::Linear`]: the PFD paper's section 5 model, y = x.w* + u.v* + noise with z = u
//!   observed with noise, cut into grades 0..4.
//!
//! The privileged features are the last `privileged` columns; [`Synthetic::privileged_columns`]
//! names them.

use crate::data::Dataset;
use crate::rng::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SynthKind {
    Letor,
    Linear,
}

/// The generator's options. In a setup (`data.source.synthetic.options`) the fields left out take
/// the table of settings' defaults ([`SynthOptions::of_table`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthOptions {
    pub kind: SynthKind,
    pub queries: usize,
    pub min_docs: usize,
    pub max_docs: usize,
    /// Number of regular features x.
    pub regular: usize,
    /// Number of observed privileged features z (also the number of hidden factors u).
    pub privileged: usize,
    /// Share of the relevance signal explained only by the hidden factors u, in [0, 1].
    pub privileged_strength: f64,
    /// Standard deviation of the relevance noise (the signal has unit variance).
    pub noise: f64,
    /// Standard deviation of the noise in z around its function of u.
    pub privileged_noise: f64,
    /// Share of the variance of each hidden factor u that a linear function of x explains, in
    /// [0, 1]: 0 makes u (and z) independent of x; above 0, z is correlated with x as clicks are
    /// with a document's text-match features, and part of u's signal can be learned from x.
    pub privileged_correlation: f64,
    /// Standard deviation of a per-query shift of relevance (the documents' signal has unit
    /// variance): above 0, some queries have many relevant documents and many have none, so
    /// positive groups are fewer, as in logs where most queries end without a purchase.
    pub query_spread: f64,
    pub seed: u64,
}

/// A small, quick draw: the web page's base (it sets the group sizes, privileged strength and
/// correlation and seed from its controls) and the tests'. A setup's synthetic defaults (the
/// table of settings, `crate/settings.rs`) are larger: the regime in which the PFD paper's
/// section 5 expects privileged features to help the student.
impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            kind: SynthKind::Letor,
            queries: 1000,
            min_docs: 10,
            max_docs: 40,
            regular: 24,
            privileged: 6,
            privileged_strength: 0.5,
            noise: 0.5,
            privileged_noise: 0.3,
            privileged_correlation: 0.0,
            query_spread: 0.0,
            seed: 7,
        }
    }
}

impl SynthOptions {
    /// The options of a setup's synthetic data, from the table of settings (fields
    /// `data.source.synthetic.options.*`): larger than [`SynthOptions::default`].
    pub fn of_table() -> SynthOptions {
        crate::settings::defaults("data.source.synthetic.options")
    }

    /// "privileged strength S" and, when z depends on x, "z's correlation with x R": the words
    /// reports use for the privileged side of the data.
    pub fn privileged_summary(&self) -> String {
        let mut s = format!("privileged strength {}", self.privileged_strength);
        if self.privileged_correlation > 0.0 {
            s += &format!(", z's correlation with x {}", self.privileged_correlation);
        }
        s
    }

    /// Checks the options ([`SynthOptions::validate`]) and, before anything is allocated, that
    /// `queries` queries of these options fit in memory: up to `max_docs` documents each, every
    /// feature drawn in double precision, then stored and cut into splits in single precision;
    /// and the generator's truth
    /// ([`Truth::draw`]), whose mixing of the privileged factors grows with their count squared.
    /// The error names the bytes needed.
    pub fn check_size(&self, queries: usize) -> crate::error::Result<()> {
        self.validate()?;
        let (dx, du) = (self.regular as u128, self.privileged as u128);
        let features = dx + du;
        let truth = 8 * (du * du + du * dx + (TRUTH_HIDDEN_UNITS as u128 + 1) * dx + du);
        let bytes = queries as u128 * self.max_docs as u128 * (16 * features + 32) + truth;
        crate::memory::check_fits(
            bytes,
            &format!(
                "synthetic data of {queries} queries of up to {} documents with {features} features each ({} privileged, mixed pairwise)",
                self.max_docs, self.privileged
            ),
            "choose fewer queries, documents per query, regular or privileged features",
        )
    }
}

/// A generated dataset and where its privileged features are.
pub struct Synthetic {
    pub dataset: Dataset,
    /// 1-based columns of z (the last ones).
    pub privileged_columns: Vec<usize>,
}

/// Synthetic training, validation and test splits: one draw of `train + valid + test` queries,
/// cut in that order.
pub struct SyntheticSplits {
    pub train: Dataset,
    pub valid: Dataset,
    pub test: Dataset,
    /// 1-based columns of z (the last ones).
    pub privileged_columns: Vec<usize>,
}

/// Generates `n_train + n_valid + n_test` queries with `options` (whose `queries` is ignored) and
/// cuts them into three splits.
pub fn generate_splits(
    options: &SynthOptions,
    n_train: usize,
    n_valid: usize,
    n_test: usize,
) -> crate::error::Result<SyntheticSplits> {
    if n_train == 0 || n_valid == 0 || n_test == 0 {
        return Err(crate::error::Error::Config(format!(
            "synthetic data need at least 1 training, validation and test query (got {n_train}, {n_valid}, {n_test})"
        )));
    }
    let total = n_train
        .checked_add(n_valid)
        .and_then(|n| n.checked_add(n_test))
        .ok_or_else(|| {
            crate::error::Error::Config(format!(
                "synthetic data of {n_train} + {n_valid} + {n_test} queries: too many to count"
            ))
        })?;
    let synthetic = generate(&SynthOptions {
        queries: total,
        ..options.clone()
    })?;
    let groups: Vec<usize> = (0..synthetic.dataset.n_groups()).collect();
    let (a, b) = (n_train, n_train + n_valid);
    let pick = |r: &[usize]| crate::data::prepare::select_groups(&synthetic.dataset, r);
    Ok(SyntheticSplits {
        train: pick(&groups[..a]),
        valid: pick(&groups[a..b]),
        test: pick(&groups[b..]),
        privileged_columns: synthetic.privileged_columns,
    })
}

/// Grade thresholds on the standardised relevance: grades 0..4 with about 50%, 25%, 14%, 7%, 4%.
const GRADE_THRESHOLDS: [f64; 4] = [0.0, 0.7, 1.25, 1.75];

pub fn generate(options: &SynthOptions) -> crate::error::Result<Synthetic> {
    let o = options;
    o.validate()?;
    o.check_size(o.queries)?;
    let truth = Truth::draw(o);
    // One stream, in this order: the group sizes, x and u, the relevance noise, z's noise.
    let mut rng = Rng::stream(o.seed, 2);
    let sizes: Vec<usize> = (0..o.queries)
        .map(|_| rng.int_range(o.min_docs, o.max_docs))
        .collect();
    let (x, u) = hidden_factors(o, &truth, sizes.iter().sum(), &mut rng);
    let relevance = relevance(o, &truth, (&x, &u), &sizes, &mut rng);
    let features = features(o, &truth, (&x, &u), &mut rng);
    let grades = relevance
        .iter()
        .map(|&r| GRADE_THRESHOLDS.iter().filter(|&&t| r > t).count() as u8)
        .collect();
    let mut group_offsets = vec![0];
    for s in &sizes {
        group_offsets.push(group_offsets.last().unwrap() + s);
    }
    let (dx, du) = (o.regular, o.privileged);
    Ok(Synthetic {
        dataset: Dataset {
            n_features: dx + du,
            features: features.into(),
            grades,
            group_offsets,
            qids: (1..=o.queries as u64).collect(),
            source: None,
            feature_names: None,
        },
        privileged_columns: (dx + 1..=dx + du).collect(),
    })
}

impl SynthOptions {
    /// Checks the options a generator can be given wrong, before anything is drawn.
    fn validate(&self) -> crate::error::Result<()> {
        let o = self;
        if o.max_docs < o.min_docs {
            return Err(crate::error::Error::Config(format!(
                "--min-docs {} is above --max-docs {}: a generated group has min-docs to max-docs documents",
                o.min_docs, o.max_docs
            )));
        }
        if o.queries == 0 || o.min_docs == 0 {
            return Err(crate::error::Error::Config(format!(
                "synthetic data needs a query and 1 <= min_docs <= max_docs: {} queries over the splits, min_docs {}, max_docs {}",
                o.queries, o.min_docs, o.max_docs
            )));
        }
        if o.regular == 0
            || o.noise.is_nan()
            || o.noise < 0.0
            || o.privileged_noise.is_nan()
            || o.privileged_noise < 0.0
        {
            return Err(crate::error::Error::Config(format!(
                "synthetic data needs regular >= 1 and non-negative noise (got regular {}, noise {}, privileged noise {})",
                o.regular, o.noise, o.privileged_noise
            )));
        }
        if !(o.query_spread >= 0.0 && o.query_spread.is_finite()) {
            return Err(crate::error::Error::Config(format!(
                "synthetic data: query spread {} must be a finite number >= 0",
                o.query_spread
            )));
        }
        for (name, value) in [
            ("privileged strength", o.privileged_strength),
            ("privileged correlation", o.privileged_correlation),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(crate::error::Error::Config(format!(
                    "synthetic data: {name} {value} must lie in [0, 1]"
                )));
            }
        }
        Ok(())
    }
}

/// The hidden units of the regular signal g(x).
const TRUTH_HIDDEN_UNITS: usize = 8;

/// The ground truth: fixed random unit directions drawn from the seed (stream 1).
struct Truth {
    /// The hidden units of the regular signal (letor data).
    x_directions: Vec<Vec<f64>>,
    x_linear: Vec<f64>,
    u_direction: Vec<f64>,
    /// Each privileged feature's mixture of u.
    z_mixing: Vec<Vec<f64>>,
    /// Each hidden factor's direction in x, for its share of x (privileged_correlation).
    u_from_x: Vec<Vec<f64>>,
}

impl Truth {
    fn draw(o: &SynthOptions) -> Truth {
        let (dx, du) = (o.regular, o.privileged);
        let mut truth = Rng::stream(o.seed, 1);
        let mut unit = |n: usize| -> Vec<f64> {
            let v: Vec<f64> = (0..n).map(|_| truth.normal()).collect();
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-12);
            v.into_iter().map(|a| a / norm).collect()
        };
        let x_directions: Vec<Vec<f64>> = (0..TRUTH_HIDDEN_UNITS).map(|_| unit(dx)).collect();
        let x_linear = unit(dx);
        let u_direction = unit(du.max(1));
        let z_mixing: Vec<Vec<f64>> = (0..du).map(|_| unit(du)).collect();
        let u_from_x: Vec<Vec<f64>> = (0..du).map(|_| unit(dx)).collect();
        Truth {
            x_directions,
            x_linear,
            u_direction,
            z_mixing,
            u_from_x,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>()
}

/// x (`n_docs x regular`) and the hidden factors u (`n_docs x privileged`), standard normal, u
/// then sqrt(rho) x.d_k + sqrt(1 - rho) e_k: still unit variance, a share rho of it from x.
fn hidden_factors(
    o: &SynthOptions,
    truth: &Truth,
    n_docs: usize,
    rng: &mut Rng,
) -> (Vec<f64>, Vec<f64>) {
    let (dx, du) = (o.regular, o.privileged);
    let mut x = vec![0f64; n_docs * dx];
    let mut u = vec![0f64; n_docs * du];
    x.iter_mut().for_each(|v| *v = rng.normal());
    u.iter_mut().for_each(|v| *v = rng.normal());
    let rho = o.privileged_correlation;
    if rho > 0.0 {
        for d in 0..n_docs {
            let xd = &x[d * dx..(d + 1) * dx];
            for (k, direction) in truth.u_from_x.iter().enumerate() {
                let from_x: f64 = xd.iter().zip(direction).map(|(p, q)| p * q).sum();
                let own = &mut u[d * du + k];
                *own = rho.sqrt() * from_x + (1.0 - rho).sqrt() * *own;
            }
        }
    }
    (x, u)
}

/// Each document's relevance, standardised: the regular signal g(x) and the privileged signal
/// h(u), each of unit variance, mixed by the privileged strength, plus noise and each query's
/// shift (its own stream, 3).
fn relevance(
    o: &SynthOptions,
    truth: &Truth,
    (x, u): (&[f64], &[f64]),
    sizes: &[usize],
    rng: &mut Rng,
) -> Vec<f64> {
    let (dx, du) = (o.regular, o.privileged);
    let n_docs = sizes.iter().sum();
    let mut g: Vec<f64> = (0..n_docs)
        .map(|d| {
            let xd = &x[d * dx..(d + 1) * dx];
            match o.kind {
                SynthKind::Letor => {
                    truth
                        .x_directions
                        .iter()
                        .map(|w| libm::tanh(1.5 * dot(xd, w)))
                        .sum::<f64>()
                        + dot(xd, &truth.x_linear)
                }
                SynthKind::Linear => dot(xd, &truth.x_linear),
            }
        })
        .collect();
    let mut h: Vec<f64> = (0..n_docs)
        .map(|d| {
            if du == 0 {
                return 0.0;
            }
            let ud = &u[d * du..(d + 1) * du];
            match o.kind {
                SynthKind::Letor => {
                    dot(ud, &truth.u_direction) + 0.5 * libm::tanh(ud[0] * ud[du - 1])
                }
                SynthKind::Linear => dot(ud, &truth.u_direction),
            }
        })
        .collect();
    standardise(&mut g);
    standardise(&mut h);
    let s = if du == 0 { 0.0 } else { o.privileged_strength };
    let mut relevance: Vec<f64> = (0..n_docs)
        .map(|d| (1.0 - s).sqrt() * g[d] + s.sqrt() * h[d] + o.noise * rng.normal())
        .collect();
    if o.query_spread > 0.0 {
        let mut queries = Rng::stream(o.seed, 3);
        let mut start = 0;
        for &size in sizes {
            let shift = o.query_spread * queries.normal();
            relevance[start..start + size]
                .iter_mut()
                .for_each(|r| *r += shift);
            start += size;
        }
    }
    standardise(&mut relevance);
    relevance
}

/// The feature matrix (`n_docs x (regular + privileged)`): x, then z, noisy mixtures of u.
fn features(o: &SynthOptions, truth: &Truth, (x, u): (&[f64], &[f64]), rng: &mut Rng) -> Vec<f32> {
    let (dx, du) = (o.regular, o.privileged);
    let n_docs = x.len() / dx;
    let n_features = dx + du;
    let mut features = vec![0f32; n_docs * n_features];
    for d in 0..n_docs {
        let row = &mut features[d * n_features..(d + 1) * n_features];
        for j in 0..dx {
            row[j] = x[d * dx + j] as f32;
        }
        let ud = &u[d * du..(d + 1) * du];
        for k in 0..du {
            let signal = match o.kind {
                // Half the privileged features behave like counts (clicks: non-negative), half like
                // dwell times (positive, skewed); both are noisy mixtures of u.
                SynthKind::Letor if k % 2 == 0 => {
                    (dot(ud, &truth.z_mixing[k]) + o.privileged_noise * rng.normal()).max(0.0) * 3.0
                }
                SynthKind::Letor => {
                    libm::exp(0.5 * dot(ud, &truth.z_mixing[k]) + o.privileged_noise * rng.normal())
                }
                SynthKind::Linear => ud[k] + o.privileged_noise * rng.normal(),
            };
            row[dx + k] = signal as f32;
        }
    }
    features
}

fn standardise(v: &mut [f64]) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / n).sqrt();
    let sd = if sd > 1e-12 { sd } else { 1.0 };
    v.iter_mut().for_each(|a| *a = (*a - mean) / sd);
}
