//! The PFD paper's data preparation (spec §1, paper section 4.1), in order:
//! filter groups -> signed log1p -> seeded Gumbel binary labels -> positive/negative groups ->
//! privileged split (by |Pearson correlation| with y on the training split, or explicit columns, or
//! the discriminative z of Figure 5) -> a 10% validation holdout when there is no validation split.

pub use crate::data::features::Scratch;
use crate::data::transform::{ColumnMap, Transform};
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};
use crate::math::ln_1p;
use crate::rng::Rng;

/// How the privileged features z are chosen.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PrivilegedSplit {
    /// The `d_z` features with the largest |Pearson correlation| with y on the training split.
    TopCorrelation(usize),
    /// The same, with `d_z` a share of the informative (non-constant) training features, rounded,
    /// at least one informative feature left regular, and one at least where two are informative. [`PrivilegedSplit::FILE_DEFAULT`] is
    /// the PFD paper's share (top 40 of MSLR-WEB30K's 136 features is 29%): 30%.
    TopShare(f64),
    /// Explicit 1-based feature columns.
    Columns(Vec<usize>),
    /// Figure 5: every original feature is regular; z is one binary feature
    /// `1[t*r + G1 > t*tau_priv + G0]` drawn with the same Gumbel draws as y.
    Discriminative { tau_priv: f64 },
}

impl PrivilegedSplit {
    /// The privileged split of data files when none is named: the top 30% of the informative
    /// features by |correlation| with y. The paper's top 40 is for MSLR-WEB30K's 136 features; a
    /// fixed count would leave a narrower file (MQ2008: 46 features, 6 of them constant) with no
    /// informative regular feature at all.
    pub const FILE_DEFAULT: PrivilegedSplit = PrivilegedSplit::TopShare(0.3);

    /// The split as `--privileged` spells it (`top:12`, `top:30%`, `cols:3-5, 9`, ...).
    pub fn spec(&self) -> String {
        match self {
            PrivilegedSplit::TopCorrelation(n) => format!("top:{n}"),
            PrivilegedSplit::TopShare(share) => format!("top:{}%", share * 100.0),
            PrivilegedSplit::Columns(c) => format!("cols:{}", column_ranges(c)),
            PrivilegedSplit::Discriminative { tau_priv } => format!("discriminative:{tau_priv}"),
        }
    }

    /// Reads `top:N`, `top:P%` (a share of the informative features), `cols:3,7,12` (1-based) or
    /// `discriminative:TAU_PRIV`.
    pub fn parse(spec: &str) -> Result<PrivilegedSplit> {
        let bad = || {
            Error::Config(format!(
                "privileged features '{}': expected top:N, top:P% (0 < P < 100), cols:3,7,12 or discriminative:TAU_PRIV",
                crate::error::printable(spec)
            ))
        };
        let (kind, value) = spec.split_once(':').ok_or_else(bad)?;
        match kind.trim() {
            "top" => match value.trim().strip_suffix('%') {
                Some(percent) => match percent.trim().parse::<f64>() {
                    Ok(p) if p > 0.0 && p < 100.0 => Ok(PrivilegedSplit::TopShare(p / 100.0)),
                    _ => Err(bad()),
                },
                None => match value.trim().parse() {
                    Ok(0) => Err(Error::Config(format!(
                        "privileged features '{}': top:0 makes no feature privileged: expected top:N with N at least 1, top:P% (0 < P < 100), cols:3,7,12 or discriminative:TAU_PRIV",
                        crate::error::printable(spec)
                    ))),
                    Ok(n) => Ok(PrivilegedSplit::TopCorrelation(n)),
                    Err(_) => Err(bad()),
                },
            },
            // Columns and ranges, as `spec` writes them: `cols:3,7,12` or `cols:3-5,9`.
            "cols" => {
                let mut columns = Vec::new();
                for item in value.split(',') {
                    match item.trim().split_once('-') {
                        Some((a, b)) => {
                            let (a, b) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
                            match (a, b) {
                                (Ok(a), Ok(b)) if a <= b && b - a < 1 << 20 => {
                                    columns.extend(a..=b)
                                }
                                _ => return Err(bad()),
                            }
                        }
                        None => columns.push(item.trim().parse::<usize>().map_err(|_| bad())?),
                    }
                }
                // Columns count from 1, as LETOR's feature indices do.
                if columns.contains(&0) {
                    return Err(Error::Config(format!(
                        "privileged features '{}': column 0: expected columns counted from 1, as a LETOR file's features are (cols:1 is feature 1)",
                        crate::error::printable(spec)
                    )));
                }
                // A column named twice (`cols:1,1`, `cols:1-3,2`) is a slip, not one column.
                let mut seen = std::collections::HashSet::new();
                if let Some(twice) = columns.iter().find(|&&c| !seen.insert(c)) {
                    return Err(Error::Config(format!(
                        "privileged features '{}': column {twice} is named twice; name each privileged column once",
                        crate::error::printable(spec)
                    )));
                }
                Ok(PrivilegedSplit::Columns(columns))
            }
            "discriminative" => match value.trim().parse::<f64>() {
                Ok(tau_priv) if tau_priv.is_finite() => {
                    crate::settings::check("tau-priv", tau_priv).map_err(|e| {
                        Error::Config(format!(
                            "privileged features '{}': {}",
                            crate::error::printable(spec),
                            e.message()
                        ))
                    })?;
                    Ok(PrivilegedSplit::Discriminative { tau_priv })
                }
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PrepareOptions {
    /// Drop groups with fewer documents than this (paper: 10).
    pub min_group_size: usize,
    /// Temperature t of the Gumbel labelling (paper: 4).
    pub t: f64,
    /// Threshold tau_target of the Gumbel labelling (paper: 4.8 for grades 0..4).
    pub tau_target: f64,
    pub privileged: PrivilegedSplit,
    /// Share of training queries held out for validation when no validation split is given.
    pub holdout: f64,
    pub seed: u64,
    /// Labels from a column instead of the Gumbel labelling: y = 1[value > 0] of this 1-based
    /// column (the conversions of simulated logs, [`crate::data::logs`]). The column is neither
    /// regular nor privileged.
    #[serde(default)]
    pub label_column: Option<usize>,
    /// y = the grade (`labels: grades`) instead of the Gumbel labelling; t and tau_target are
    /// not used.
    #[serde(default)]
    pub grades: bool,
    /// 1-based columns neither regular nor privileged: logged signals that follow from the label
    /// column (a click's CTR and dwell when y is the click).
    #[serde(default)]
    pub unused_columns: Vec<usize>,
    /// What follows the signed log1p: a map per column fitted on the training split
    /// ([`crate::data::transform`]), applied to every split.
    #[serde(default, skip_serializing_if = "Transform::is_default")]
    pub transform: Transform,
}

impl PrepareOptions {
    /// The labelling's settings, checked once for every command that labels data (`train`,
    /// `compare`, `sweep`, `eval --labels binary`, the page, Python).
    pub fn validate(&self) -> Result<()> {
        if !(self.t.is_finite() && self.t > 0.0) {
            return Err(Error::Config(format!(
                "t = {} must be a positive number",
                crate::error::shown(self.t)
            )));
        }
        if !self.tau_target.is_finite() {
            return Err(Error::Config(format!(
                "tau_target = {} must be a finite number (grades are 0..={})",
                crate::error::shown(self.tau_target),
                crate::data::letor::MAX_GRADE
            )));
        }
        Ok(())
    }
}

impl Default for PrepareOptions {
    fn default() -> Self {
        PrepareOptions {
            min_group_size: 10,
            t: 4.0,
            tau_target: 4.8,
            privileged: PrivilegedSplit::FILE_DEFAULT,
            holdout: 0.1,
            seed: 0,
            label_column: None,
            grades: false,
            unused_columns: Vec::new(),
            transform: Transform::default(),
        }
    }
}

/// One split, prepared: regular features x, privileged features z, binary labels y.
#[derive(Debug, Clone, PartialEq)]
pub struct RankingSet {
    /// `n_docs x d_x`, row-major, after the signed log1p: built in memory, or mapped in place
    /// from a prepared-splits file ([`crate::data::prepared_cache`]).
    pub regular: Features,
    pub d_x: usize,
    /// `n_docs x d_z`, row-major; owned or mapped as `regular` is.
    pub privileged: Features,
    pub d_z: usize,
    pub grades: Vec<u8>,
    /// Binary labels y in {0, 1}.
    pub labels: Vec<f32>,
    pub group_offsets: Vec<usize>,
    /// Whether each group has at least one y = 1 (S_label); the others are unlabeled (S_unlabel).
    pub positive_group: Vec<bool>,
    /// The query id of each group, as the source data name it.
    pub qids: Vec<u64>,
}

/// Which features a model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureView {
    /// x only: the student, the self-distillation teacher, serving.
    #[default]
    Regular,
    /// z only: the GenD teacher.
    Privileged,
    /// x and z: the PFD teacher.
    Both,
}

impl RankingSet {
    pub fn n_docs(&self) -> usize {
        self.labels.len()
    }
    pub fn n_groups(&self) -> usize {
        self.group_offsets.len() - 1
    }
    pub fn group(&self, g: usize) -> std::ops::Range<usize> {
        self.group_offsets[g]..self.group_offsets[g + 1]
    }
    /// Width of the input a model with this view sees.
    pub fn width(&self, view: FeatureView) -> usize {
        match view {
            FeatureView::Regular => self.d_x,
            FeatureView::Privileged => self.d_z,
            FeatureView::Both => self.d_x + self.d_z,
        }
    }
    pub fn positive_groups(&self) -> usize {
        self.positive_group.iter().filter(|&&p| p).count()
    }
    /// Whether NDCG on this split can tell two models apart: some group holds both a y = 1 and
    /// a y = 0 document.
    pub fn ranks_models(&self) -> bool {
        (0..self.n_groups()).any(|g| {
            let y = &self.labels[self.group(g)];
            y.iter().any(|&v| v > 0.0) && y.iter().any(|&v| v <= 0.0)
        })
    }
}

/// What the group filter removed from one split.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FilterReport {
    pub groups_in: usize,
    pub docs_in: usize,
    pub no_relevant_groups: usize,
    pub no_relevant_docs: usize,
    pub small_groups: usize,
    pub small_docs: usize,
    pub groups_out: usize,
    pub docs_out: usize,
}

impl std::fmt::Display for FilterReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} groups / {} docs in; removed {} groups ({} docs) with no grade > 0 and {} groups ({} docs) with too few docs; {} groups / {} docs kept",
            self.groups_in, self.docs_in, self.no_relevant_groups, self.no_relevant_docs, self.small_groups, self.small_docs, self.groups_out, self.docs_out
        )
    }
}

/// Step 2: drops groups with no document of grade > 0, then groups with fewer than `min_size`
/// documents.
pub fn filter_groups(data: &Dataset, min_size: usize) -> (Dataset, FilterReport) {
    let all: Vec<usize> = (0..data.n_groups()).collect();
    let (keep, report) = kept_groups(data, &all, min_size);
    (select_groups(data, &keep), report)
}

/// [`filter_groups`] over `groups` of `data`: the groups kept, in order, and what was removed.
fn kept_groups(data: &Dataset, groups: &[usize], min_size: usize) -> (Vec<usize>, FilterReport) {
    let mut report = FilterReport {
        groups_in: groups.len(),
        ..Default::default()
    };
    let mut keep = Vec::new();
    for &g in groups {
        let docs = data.group(g);
        report.docs_in += docs.len();
        if data.grades[docs.clone()].iter().all(|&r| r == 0) {
            report.no_relevant_groups += 1;
            report.no_relevant_docs += docs.len();
        } else if docs.len() < min_size {
            report.small_groups += 1;
            report.small_docs += docs.len();
        } else {
            report.groups_out += 1;
            report.docs_out += docs.len();
            keep.push(g);
        }
    }
    (keep, report)
}

/// Holds out `share` of the training queries, drawn from `seed`, as the test split of data that
/// have none: (the remaining training queries, the test split), each in the original order.
/// Both front doors use it ([`crate::setup::HOLDOUT`]).
pub fn hold_out_test(train: &Dataset, share: f64, seed: u64) -> Result<(Dataset, Dataset)> {
    let (rest, test) = hold_out_test_groups(train.n_groups(), share, seed)?;
    Ok((select_groups(train, &rest), select_groups(train, &test)))
}

/// The draw of [`hold_out_test`] over `n` groups: (the remaining groups, the test groups), each in
/// order.
pub fn hold_out_test_groups(n: usize, share: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if n < 3 {
        return Err(Error::Data(format!(
            "only {n} training groups: cannot hold out a test split and a validation split; give a test file"
        )));
    }
    let mut order: Vec<usize> = (0..n).collect();
    Rng::stream(seed, 0x7465_7374).shuffle(&mut order);
    let n_test = ((n as f64 * share).round() as usize).clamp(1, n - 2);
    let (mut test, mut rest) = (order[..n_test].to_vec(), order[n_test..].to_vec());
    test.sort_unstable();
    rest.sort_unstable();
    Ok((rest, test))
}

/// The dataset restricted to groups `keep`, in that order.
pub fn select_groups(data: &Dataset, keep: &[usize]) -> Dataset {
    let nf = data.n_features;
    // Sized once: growing a matrix of gigabytes by doubling copies it over and over.
    let docs: usize = keep.iter().map(|&g| data.group(g).len()).sum();
    let mut features = Vec::with_capacity(docs * nf);
    let mut out = Dataset {
        n_features: nf,
        features: Features::default(),
        grades: Vec::with_capacity(docs),
        group_offsets: Vec::with_capacity(keep.len() + 1),
        qids: Vec::with_capacity(keep.len()),
        source: data.source.clone(),
        feature_names: data.feature_names.clone(),
    };
    out.group_offsets.push(0);
    for &g in keep {
        let docs = data.group(g);
        features.extend_from_slice(&data.features[docs.start * nf..docs.end * nf]);
        out.grades.extend_from_slice(&data.grades[docs.clone()]);
        out.group_offsets.push(out.grades.len());
        out.qids.push(data.qids[g]);
    }
    out.features = features.into();
    out
}

/// Step 3: x <- sign(x) * ln(1 + |x|).
pub fn signed_log1p_value(x: f32) -> f32 {
    x.signum() * ln_1p(x.abs())
}

/// [`signed_log1p_value`] of every value; in parallel natively.
pub fn signed_log1p(values: &mut [f32]) {
    let transform = |chunk: &mut [f32]| {
        for v in chunk {
            *v = signed_log1p_value(*v);
        }
    };
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        values.par_chunks_mut(1 << 16).for_each(transform);
    }
    #[cfg(target_arch = "wasm32")]
    transform(values);
}

/// Rows per piece of the parallel passes over a feature matrix. Pieces are reduced in order, so
/// the sums (and the privileged split they decide) are the same for any number of threads.
const ROWS_PER_PIECE: usize = 4096;

/// `f` over pieces of [`ROWS_PER_PIECE`] rows of an `n x width` matrix, in parallel natively;
/// the results in the pieces' order.
fn over_row_pieces<T: Send>(
    features: &[f32],
    width: usize,
    f: impl Fn(usize, &[f32]) -> T + Sync + Send,
) -> Vec<T> {
    let piece = ROWS_PER_PIECE * width.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        features
            .par_chunks(piece)
            .enumerate()
            .map(|(i, rows)| f(i * ROWS_PER_PIECE, rows))
            .collect()
    }
    #[cfg(target_arch = "wasm32")]
    {
        features
            .chunks(piece)
            .enumerate()
            .map(|(i, rows)| f(i * ROWS_PER_PIECE, rows))
            .collect()
    }
}

/// Each split draws its labels from its own random stream (so a test file gets the same labels
/// whatever the training file is).
pub const SPLIT_TRAIN: u64 = 0;
pub const SPLIT_VALID: u64 = 1;
pub const SPLIT_TEST: u64 = 2;

/// A validation or test file labelled exactly as [`prepare`] labels it: the same group filter,
/// then binary labels from the split's Gumbel stream over the documents kept. Returns the kept
/// groups and their labels (before the log1p transform, which a saved model applies itself).
pub fn label_like_prepare(
    data: &Dataset,
    split: u64,
    options: &PrepareOptions,
) -> Result<(Dataset, Vec<f32>, FilterReport)> {
    options.validate()?;
    let (kept, report) = filter_groups(data, options.min_group_size);
    let labels = match options.label_column {
        Some(column) => column_labels(&kept, column),
        None => GumbelDraws::new(kept.n_docs(), options.seed, split).labels(
            &kept.grades,
            options.t,
            options.tau_target,
        ),
    };
    // Labels that cannot rank are refused here as `train` refuses them: every metric would be
    // 1 (every document y = 1), or n/a (none).
    let name = data
        .source
        .as_ref()
        .map_or("the data".to_string(), |p| p.display().to_string());
    let settings = format!("t = {}, tau_target = {}", options.t, options.tau_target);
    if !labels.is_empty() && labels.iter().all(|&y| y > 0.0) {
        return Err(Error::Data(format!(
            "every document of {name} got y = 1 ({settings}): the labels carry no information and every ranking would score 1; raise --tau-target to about the grade above which a document counts as relevant"
        )));
    }
    if !labels.iter().any(|&y| y > 0.0) {
        return Err(Error::Data(format!(
            "no document of {name} got y = 1 ({settings}, {} groups after filtering): no metric can be measured; lower --tau-target",
            kept.n_groups()
        )));
    }
    Ok((kept, labels, report))
}

/// y = 1[value > 0] of a 1-based column (0 where a narrower file lacks it).
pub fn column_labels(data: &Dataset, column: usize) -> Vec<f32> {
    (0..data.n_docs())
        .map(|d| (data.row(d).get(column - 1).is_some_and(|&v| v > 0.0)) as u8 as f32)
        .collect()
}

/// The Gumbel draws behind one split's labels; shared with the discriminative z.
pub struct GumbelDraws {
    pub g0: Vec<f64>,
    pub g1: Vec<f64>,
}

impl GumbelDraws {
    pub fn new(n_docs: usize, seed: u64, split: u64) -> Self {
        let mut rng = Rng::stream(seed, 0x6c61_6265_6c00 + split);
        let mut g0 = Vec::with_capacity(n_docs);
        let mut g1 = Vec::with_capacity(n_docs);
        for _ in 0..n_docs {
            g0.push(rng.gumbel());
            g1.push(rng.gumbel());
        }
        GumbelDraws { g0, g1 }
    }
    /// Step 4: `1[t*r + G1 > t*tau + G0]`, so `P(1) = sigmoid(t*(r - tau))`.
    pub fn labels(&self, grades: &[u8], t: f64, tau: f64) -> Vec<f32> {
        grades
            .iter()
            .enumerate()
            .map(|(i, &r)| (t * r as f64 + self.g1[i] > t * tau + self.g0[i]) as u8 as f32)
            .collect()
    }
}

/// Pearson correlation of each feature column with `y`; zero-variance columns get 0. Two passes
/// (means, then centred sums), each over pieces of rows in parallel natively.
pub fn correlations(features: &[f32], n_features: usize, y: &[f32]) -> Vec<f64> {
    correlations_of(features, n_features, y, |v| v)
}

/// [`correlations`] of `value` of each feature value: the signed log1p of a matrix that does not
/// hold it (the rank-Gauss transform's raw values), so that the privileged split is the same
/// whatever the transform.
pub fn correlations_of(
    features: &[f32],
    n_features: usize,
    y: &[f32],
    value: fn(f32) -> f32,
) -> Vec<f64> {
    let n = y.len() as f64;
    let mean_y = y.iter().map(|&v| v as f64).sum::<f64>() / n;
    let mut mean = vec![0f64; n_features];
    for part in over_row_pieces(features, n_features, |_, rows| {
        let mut sum = vec![0f64; n_features];
        for row in rows.chunks_exact(n_features) {
            for (m, &v) in sum.iter_mut().zip(row) {
                *m += value(v) as f64;
            }
        }
        sum
    }) {
        mean.iter_mut().zip(part).for_each(|(m, p)| *m += p);
    }
    mean.iter_mut().for_each(|m| *m /= n);
    let (mut sxy, mut sxx) = (vec![0f64; n_features], vec![0f64; n_features]);
    let mut syy = 0f64;
    for (part_xy, part_xx, part_yy) in over_row_pieces(features, n_features, |first, rows| {
        let (mut sxy, mut sxx) = (vec![0f64; n_features], vec![0f64; n_features]);
        let mut syy = 0f64;
        for (row, &yv) in rows.chunks_exact(n_features).zip(&y[first..]) {
            let dy = yv as f64 - mean_y;
            syy += dy * dy;
            for j in 0..n_features {
                let dx = value(row[j]) as f64 - mean[j];
                sxy[j] += dx * dy;
                sxx[j] += dx * dx;
            }
        }
        (sxy, sxx, syy)
    }) {
        sxy.iter_mut().zip(part_xy).for_each(|(a, b)| *a += b);
        sxx.iter_mut().zip(part_xx).for_each(|(a, b)| *a += b);
        syy += part_yy;
    }
    (0..n_features)
        .map(|j| {
            let denom = (sxx[j] * syy).sqrt();
            // Constant features (and constant labels) carry no signal: correlation 0.
            if denom > 1e-12 * n {
                sxy[j] / denom
            } else {
                0.0
            }
        })
        .collect()
}

/// The prepared splits and what preparation did.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub train: RankingSet,
    pub valid: RankingSet,
    pub test: Option<RankingSet>,
    /// 1-based columns of the original file that became z (empty for the discriminative z).
    pub privileged_columns: Vec<usize>,
    /// 1-based columns that stayed regular x.
    pub regular_columns: Vec<usize>,
    /// The regular and the privileged columns that are constant on the training split (they
    /// carry nothing a model could learn from).
    pub constant_regular: Vec<usize>,
    pub constant_privileged: Vec<usize>,
    /// What the data allow but a user should know: a test split on which NDCG cannot be measured.
    pub warnings: Vec<String>,
    /// |correlation| with y of every original column, on the training split.
    pub correlations: Vec<f64>,
    pub filter: Vec<(String, FilterReport)>,
    /// True when validation is a holdout of the training queries.
    pub holdout: bool,
    /// The maps of x's and z's columns that followed the signed log1p, fitted on the training
    /// split (both empty under the signed log1p alone): a saved model applies its columns' maps.
    pub input_maps: InputMaps,
}

/// The fitted maps of [`PrepareOptions::transform`]: one per column of x, one per column of z.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputMaps {
    pub regular: Vec<ColumnMap>,
    pub privileged: Vec<ColumnMap>,
    /// Whether the signed log1p came first (every transform but rank-gauss, which maps the raw
    /// values).
    #[serde(default = "yes")]
    pub signed_log1p: bool,
}

fn yes() -> bool {
    true
}

impl Default for InputMaps {
    fn default() -> Self {
        InputMaps {
            regular: Vec::new(),
            privileged: Vec::new(),
            signed_log1p: true,
        }
    }
}

impl InputMaps {
    /// A saved model's `transform`: what comes before the maps.
    pub fn model_transform(&self) -> &'static str {
        if self.signed_log1p {
            "signed_log1p"
        } else {
            "none"
        }
    }

    /// The maps of what a model with `view` reads, in its order; None when nothing was fitted.
    pub fn of_view(&self, view: FeatureView) -> Option<Vec<ColumnMap>> {
        if self.regular.is_empty() && self.privileged.is_empty() {
            return None;
        }
        Some(match view {
            FeatureView::Regular => self.regular.clone(),
            FeatureView::Privileged => self.privileged.clone(),
            FeatureView::Both => [self.regular.clone(), self.privileged.clone()].concat(),
        })
    }
}

/// Runs every step of spec §1 on a training split and optional validation and test splits.
pub fn prepare(
    train: &Dataset,
    valid: Option<&Dataset>,
    test: Option<&Dataset>,
    options: &PrepareOptions,
) -> Result<Prepared> {
    prepare_with_progress(train, valid, test, options, &mut |_| {})
}

/// The version of what preparation computes. Prepared splits kept on disk
/// ([`crate::data::prepared_cache`]) are keyed by it: bump it with any change that gives other
/// prepared splits for the same data and settings (this module, the labelling, the log simulator,
/// the generator), and files of the older version are prepared again. `tests/prepared_cache.rs`
/// holds the splits' fingerprint at this version and fails when they change without it.
pub const PREPARATION_VERSION: u32 = 2;

/// The steps [`prepare_with_progress`] reports, in order.
pub const PREPARE_STEPS: [&str; 4] = [
    "filtering groups and log1p",
    "labelling",
    "correlations and the privileged split",
    "building the splits",
];

/// [`prepare`], calling `on_step(name)` as each of [`PREPARE_STEPS`] begins.
pub fn prepare_with_progress(
    train: &Dataset,
    valid: Option<&Dataset>,
    test: Option<&Dataset>,
    options: &PrepareOptions,
    on_step: &mut dyn FnMut(&str),
) -> Result<Prepared> {
    let mut sources = Vec::new();
    let train = add_source(&mut sources, Source::Borrowed(train));
    let valid = valid.map(|v| add_source(&mut sources, Source::Borrowed(v)));
    let test = test.map(|t| add_source(&mut sources, Source::Borrowed(t)));
    prepare_parts(
        sources,
        (train, valid, test),
        options,
        &Scratch::Memory,
        on_step,
    )
}

/// The raw splits of a run, handed over to preparation ([`prepare_raw`]).
pub struct RawSplits {
    pub train: Dataset,
    pub valid: Option<Dataset>,
    pub test: Option<Dataset>,
    /// Without a test file: hold out this share of the training queries as the test split,
    /// drawn from this seed (the draw of [`hold_out_test`]).
    pub hold_out_test: Option<(f64, u64)>,
}

/// [`prepare_with_progress`] on splits it owns: as it turns each window of a split's rows into
/// the prepared matrices, it gives that window's memory back (a binary cache's mapped pages, or
/// the parsed matrix's), so that the raw and the prepared matrices are never both in memory whole.
/// The result is the same as [`prepare_with_progress`]'s on the same splits, bit for bit.
pub fn prepare_raw(
    raw: RawSplits,
    options: &PrepareOptions,
    on_step: &mut dyn FnMut(&str),
) -> Result<Prepared> {
    prepare_raw_in(raw, options, &Scratch::Memory, on_step)
}

/// [`prepare_raw`] with its matrices kept where `scratch` says: in scratch files, preparation
/// itself is not bound by memory (`--prepared-cache`, whose file it writes next). The result is
/// the same, bit for bit.
pub fn prepare_raw_in(
    raw: RawSplits,
    options: &PrepareOptions,
    scratch: &Scratch,
    on_step: &mut dyn FnMut(&str),
) -> Result<Prepared> {
    let held_out = match (raw.hold_out_test, &raw.test) {
        (Some((share, seed)), None) => {
            Some(hold_out_test_groups(raw.train.n_groups(), share, seed)?)
        }
        _ => None,
    };
    let mut sources = Vec::new();
    let mut train = add_source(&mut sources, Source::Owned(raw.train));
    let valid = raw
        .valid
        .map(|v| add_source(&mut sources, Source::Owned(v)));
    let test = match (raw.test, held_out) {
        (Some(t), _) => Some(add_source(&mut sources, Source::Owned(t))),
        (None, Some((rest, test))) => {
            train.groups = rest;
            Some(Part {
                source: train.source,
                groups: test,
            })
        }
        (None, None) => None,
    };
    prepare_parts(sources, (train, valid, test), options, scratch, on_step)
}

/// A dataset given to preparation: borrowed, or owned and given back window by window.
enum Source<'a> {
    Borrowed(&'a Dataset),
    Owned(Dataset),
}

impl Source<'_> {
    fn data(&self) -> &Dataset {
        match self {
            Source::Borrowed(data) => data,
            Source::Owned(data) => data,
        }
    }

    /// Gives back the memory of rows that will not be read again (owned data only).
    fn release(&mut self, rows: std::ops::Range<usize>) {
        if let Source::Owned(data) = self {
            let nf = data.n_features;
            data.features.release(rows.start * nf..rows.end * nf);
        }
    }
}

/// Adds a source; returns the part that is all of it.
fn add_source<'a>(sources: &mut Vec<Source<'a>>, source: Source<'a>) -> Part {
    let groups = (0..source.data().n_groups()).collect();
    sources.push(source);
    Part {
        source: sources.len() - 1,
        groups,
    }
}

/// A split's documents: groups of one source, in order.
struct Part {
    source: usize,
    groups: Vec<usize>,
}

impl Part {
    fn n_docs(&self, data: &Dataset) -> usize {
        self.groups.iter().map(|&g| data.group(g).len()).sum()
    }

    /// The source row of each document.
    fn rows(&self, data: &Dataset) -> Vec<usize> {
        let mut rows = Vec::with_capacity(self.n_docs(data));
        for &g in &self.groups {
            rows.extend(data.group(g));
        }
        rows
    }

    /// The split as a dataset of its own, with `features` (its rows, prepared).
    fn dataset(&self, data: &Dataset, features: Features, n_features: usize) -> Dataset {
        let mut grades = Vec::with_capacity(self.n_docs(data));
        let mut group_offsets = Vec::with_capacity(self.groups.len() + 1);
        group_offsets.push(0);
        for &g in &self.groups {
            grades.extend_from_slice(&data.grades[data.group(g)]);
            group_offsets.push(grades.len());
        }
        Dataset {
            n_features,
            features,
            grades,
            group_offsets,
            qids: self.groups.iter().map(|&g| data.qids[g]).collect(),
            source: data.source.clone(),
            // Prepared columns: no longer the source's.
            feature_names: None,
        }
    }
}

/// Bytes of a source's rows read between two releases.
const WINDOW_BYTES: usize = 16 << 20;

/// Step 3 for every part at once: each part's rows through the signed log1p (unless `log1p` is
/// false: the rank-Gauss transform maps raw values), as an
/// `n_docs x n_features` matrix (a narrower source's missing columns are 0). One pass over each
/// source, window by window; a window's memory is given back once every part has read it. In
/// parallel natively.
fn gather_log1p(
    sources: &mut [Source],
    parts: &[&Part],
    n_features: usize,
    log1p: bool,
    scratch: &Scratch,
) -> Result<Vec<Features>> {
    let rows: Vec<Vec<usize>> = parts
        .iter()
        .map(|p| p.rows(sources[p.source].data()))
        .collect();
    // Zeroed pages cost nothing until written: the matrices grow as the sources shrink.
    let mut out: Vec<Features> = rows
        .iter()
        .map(|r| scratch.zeros(r.len() * n_features))
        .collect::<Result<_>>()?;
    for (s, source) in sources.iter_mut().enumerate() {
        let (n_rows, width) = (source.data().n_docs(), source.data().n_features);
        let window = (WINDOW_BYTES / (4 * width.max(1))).max(1);
        let mut start = 0;
        while start < n_rows {
            let end = (start + window).min(n_rows);
            let features = &source.data().features;
            for (p, part) in parts.iter().enumerate() {
                if part.source != s {
                    continue;
                }
                let (first, last) = (
                    rows[p].partition_point(|&r| r < start),
                    rows[p].partition_point(|&r| r < end),
                );
                let fill = |(to, from): (&mut [f32], &[usize])| {
                    for (to, &r) in to.chunks_exact_mut(n_features).zip(from) {
                        let row = &features[r * width..(r + 1) * width];
                        for (t, &v) in to.iter_mut().zip(row) {
                            *t = if log1p { signed_log1p_value(v) } else { v };
                        }
                    }
                };
                let to = &mut out[p].as_mut_slice()[first * n_features..last * n_features];
                let from = &rows[p][first..last];
                #[cfg(not(target_arch = "wasm32"))]
                {
                    use rayon::prelude::*;
                    to.par_chunks_mut(ROWS_PER_PIECE * n_features)
                        .zip(from.par_chunks(ROWS_PER_PIECE))
                        .for_each(fill);
                }
                #[cfg(target_arch = "wasm32")]
                to.chunks_mut(ROWS_PER_PIECE * n_features)
                    .zip(from.chunks(ROWS_PER_PIECE))
                    .for_each(fill);
            }
            source.release(start..end);
            start = end;
        }
    }
    Ok(out)
}

/// Splits an `n_docs x n_features` matrix into the regular and the privileged columns (1-based)
/// without holding two copies: z is gathered out (where `scratch` keeps matrices), then x is
/// packed in place, front to back, and the matrix shrunk to it.
fn split_columns(
    mut matrix: Features,
    n_features: usize,
    regular: &[usize],
    privileged: &[usize],
    scratch: &Scratch,
) -> Result<(Features, Features)> {
    let n_docs = matrix.len().checked_div(n_features).unwrap_or(0);
    let mut z = scratch.zeros(n_docs * privileged.len())?;
    gather_into(z.as_mut_slice(), &matrix, n_features, privileged);
    if regular.iter().copied().eq(1..=n_features) {
        return Ok((matrix, z));
    }
    // Row d's x lands at d * d_x + k <= d * n_features + (regular[k] - 1), which is read before
    // it is written (the columns are sorted): packing front to back never overwrites a value
    // still to be read.
    // Unsorted columns would overwrite values still to be read: never silently.
    assert!(
        regular.windows(2).all(|w| w[0] < w[1]),
        "regular columns in increasing order"
    );
    let d_x = regular.len();
    let values = matrix.as_mut_slice();
    for d in 0..n_docs {
        for (k, &c) in regular.iter().enumerate() {
            values[d * d_x + k] = values[d * n_features + c - 1];
        }
    }
    matrix.truncate(n_docs * d_x);
    Ok((matrix, z))
}

/// Checks the sources against the training split's `nf` features and the options: features to
/// learn from, a label column that exists, no later split wider than the training split.
fn check_sources(sources: &[Source], nf: usize, options: &PrepareOptions) -> Result<()> {
    if nf == 0 {
        return Err(Error::Data("the training data have no features".into()));
    }
    options.validate()?;
    if let Some(column) = options.label_column {
        if column == 0 || column > nf {
            return Err(Error::Config(format!(
                "label column {column} does not exist: the data have columns 1..={nf}"
            )));
        }
    }
    for other in sources {
        if other.data().n_features > nf {
            // A later split may have fewer trailing sparse columns than the training split, not more.
            return Err(Error::Config(format!(
                "a validation/test file has {} features but the training file only {nf}",
                other.data().n_features
            )));
        }
    }
    Ok(())
}

/// Labels drawn from one grade are pure Gumbel noise, and every metric ranks within a group: a
/// training split without a group of mixed grades has nothing to learn.
fn check_mixed_grades(
    train: &Part,
    train_source: &Dataset,
    split: &str,
    filtered: Option<&FilterReport>,
    min_group_size: usize,
) -> Result<()> {
    let file = train_source
        .source
        .as_ref()
        .map_or(String::new(), |p| format!(" in {}", p.display()));
    // Nothing left to look at: the filter took every group, which says why.
    if train.groups.is_empty() {
        let report = filtered.map_or(String::new(), |r| format!(": {r}"));
        return Err(Error::Data(format!(
            "no {split} groups left{file} after filtering (groups need a document with grade > 0 and at least {min_group_size} documents, --min-group-size){report}"
        )));
    }
    if train
        .groups
        .iter()
        .all(|&g| train_source.group(g).len() == 1)
    {
        return Err(Error::Data(format!(
            "every {split} group{file} holds one document: there is nothing to rank within a query; check the file's qid: column (each query's documents share one)"
        )));
    }
    if !train.groups.iter().any(|&g| {
        let grades = &train_source.grades[train_source.group(g)];
        grades.iter().any(|&r| r != grades[0])
    }) {
        let mut grades: Vec<u8> = train
            .groups
            .iter()
            .flat_map(|&g| &train_source.grades[train_source.group(g)])
            .copied()
            .collect();
        grades.sort_unstable();
        grades.dedup();
        return Err(Error::Data(format!(
            "no {split} group holds documents of different grades (grades present: {grades:?}{file}): labels drawn from them are noise and there is nothing to rank{}; check the file's first column",
            match split {
                "validation" => " or to choose an epoch by",
                "test" => " or to measure",
                _ => "",
            }
        )));
    }
    Ok(())
}

/// Holds out a share (`options.holdout`) of the kept training groups as the validation split,
/// with their Gumbel draws; `train` and `train_draws` keep the rest.
fn hold_out_valid(
    train: &mut Part,
    train_draws: &mut GumbelDraws,
    train_source: &Dataset,
    options: &PrepareOptions,
) -> Result<(Part, GumbelDraws)> {
    let n = train.groups.len();
    let mut order: Vec<usize> = (0..n).collect();
    Rng::stream(options.seed, 0x686f_6c64).shuffle(&mut order);
    let n_valid =
        ((n as f64 * options.holdout).round() as usize).clamp(1, n.saturating_sub(1).max(1));
    if n < 2 {
        return Err(Error::Data(
            "only one training group: cannot hold out a validation split; give --valid".into(),
        ));
    }
    let (mut valid_groups, mut train_groups) =
        (order[..n_valid].to_vec(), order[n_valid..].to_vec());
    valid_groups.sort_unstable();
    train_groups.sort_unstable();
    // The draws of each document of the kept training groups, `at[i]` the first of group i.
    let mut at = Vec::with_capacity(n + 1);
    at.push(0);
    for &g in &train.groups {
        at.push(at[at.len() - 1] + train_source.group(g).len());
    }
    let pick = |draws: &GumbelDraws, chosen: &[usize]| {
        let (mut g0, mut g1) = (Vec::new(), Vec::new());
        for &i in chosen {
            g0.extend_from_slice(&draws.g0[at[i]..at[i + 1]]);
            g1.extend_from_slice(&draws.g1[at[i]..at[i + 1]]);
        }
        GumbelDraws { g0, g1 }
    };
    let groups_of = |chosen: &[usize]| chosen.iter().map(|&i| train.groups[i]).collect();
    let valid = (
        Part {
            source: train.source,
            groups: groups_of(&valid_groups),
        },
        pick(train_draws, &valid_groups),
    );
    *train_draws = pick(train_draws, &train_groups);
    train.groups = groups_of(&train_groups);
    Ok(valid)
}

/// How many of `informative` columns a share makes privileged: the share, rounded, one at least
/// (a share above 0 asks for some), and one informative column left regular.
fn top_share(informative: usize, share: f64) -> usize {
    ((informative as f64 * share).round() as usize)
        .max(1)
        .min(informative.saturating_sub(1))
}

/// The training split's columns (1-based) as the privileged split makes them, and which of each
/// are constant there.
struct Columns {
    privileged: Vec<usize>,
    regular: Vec<usize>,
    constant_regular: Vec<usize>,
    constant_privileged: Vec<usize>,
}

/// Splits the `nf` columns into privileged and regular ones by `options.privileged`, from their
/// `correlation` with y and the `constant` columns (1-based) of the training split; refuses a
/// split that leaves x nothing to learn from.
fn choose_columns(
    correlation: &[f64],
    constant: &[usize],
    nf: usize,
    options: &PrepareOptions,
) -> Result<Columns> {
    let informative = nf - constant.len();
    let top = match &options.privileged {
        PrivilegedSplit::TopCorrelation(d_z) => Some(*d_z),
        PrivilegedSplit::TopShare(share) => Some(top_share(informative, *share)),
        _ => None,
    };
    // The label column and the unused ones are neither regular nor privileged.
    let unused = |c: usize| Some(c) == options.label_column || options.unused_columns.contains(&c);
    let (privileged_columns, regular_columns): (Vec<usize>, Vec<usize>) = match &options.privileged
    {
        PrivilegedSplit::TopCorrelation(_) | PrivilegedSplit::TopShare(_) => {
            let d_z = &top.expect("a top split has a count");
            if *d_z >= nf {
                return Err(Error::Config(format!("{d_z} privileged features asked for, but the data have only {nf}: at least one feature must stay regular")));
            }
            let mut order: Vec<usize> = (0..nf).collect();
            // Largest |correlation| first; ties by column order, so the split is deterministic.
            order.sort_by(|&a, &b| {
                correlation[b]
                    .abs()
                    .total_cmp(&correlation[a].abs())
                    .then(a.cmp(&b))
            });
            let mut z: Vec<usize> = order[..*d_z].iter().map(|&j| j + 1).collect();
            z.sort_unstable();
            let x = (1..=nf).filter(|c| !z.contains(c) && !unused(*c)).collect();
            (z, x)
        }
        PrivilegedSplit::Columns(columns) => {
            let mut z = columns.clone();
            z.sort_unstable();
            z.dedup();
            if let Some(&bad) = z.iter().find(|&&c| c == 0 || c > nf) {
                return Err(Error::Config(format!(
                    "privileged column {bad} does not exist: the data have columns 1..={nf}"
                )));
            }
            if let Some(label) = options.label_column.filter(|c| z.contains(c)) {
                return Err(Error::Config(format!(
                    "column {label} holds the labels y: it cannot also be privileged"
                )));
            }
            let x: Vec<usize> = (1..=nf).filter(|c| !z.contains(c) && !unused(*c)).collect();
            if x.is_empty() {
                return Err(Error::Config("every feature is privileged: the student would see nothing; leave at least one column regular".into()));
            }
            (z, x)
        }
        PrivilegedSplit::Discriminative { .. } => {
            (Vec::new(), (1..=nf).filter(|&c| !unused(c)).collect())
        }
    };
    let constant_in = |columns: &[usize]| -> Vec<usize> {
        columns
            .iter()
            .copied()
            .filter(|c| constant.contains(c))
            .collect()
    };
    let (constant_regular, constant_privileged) = (
        constant_in(&regular_columns),
        constant_in(&privileged_columns),
    );
    if constant_regular.len() == regular_columns.len() {
        return Err(Error::Data(format!(
            "the regular features x are all constant on the training split (columns {}), so a student that sees only x cannot learn: the privileged split {} ({} columns) took every one of the {informative} informative columns; {}",
            column_ranges(&regular_columns),
            options.privileged.spec(),
            privileged_columns.len(),
            match top_share(informative, 0.3) {
                0 => "one informative column cannot be both regular and privileged".to_string(),
                n => format!("leave some regular: --privileged top:{n} (30% of them, the default for files), or fewer cols:"),
            },
        )));
    }
    Ok(Columns {
        privileged: privileged_columns,
        regular: regular_columns,
        constant_regular,
        constant_privileged,
    })
}

/// The training groups with a y = 1 under `labels`.
fn positive_groups(data: &Dataset, labels: &[f32]) -> usize {
    (0..data.n_groups())
        .filter(|&g| labels[data.group(g)].iter().any(|&y| y > 0.0))
        .count()
}

/// Refuses Gumbel labels of the training split a model cannot learn from (no y = 1, or nothing
/// but y = 1), and says which tau_target works: the nearest on a grid of 0.1 below (or above) the
/// one given that gives a tenth of the training groups a y = 1 (or a tenth of the documents a
/// y = 0), measured on the same draws, so that the refusal carries a value that works in
/// whatever door it reaches.
fn check_gumbel_labels(
    data: &Dataset,
    draws: &GumbelDraws,
    labels: &[f32],
    options: &PrepareOptions,
) -> Result<()> {
    let none = positive_groups(data, labels) == 0;
    let all = labels.iter().all(|&y| y > 0.0);
    if !none && !all {
        return Ok(());
    }
    let groups = data.n_groups();
    let largest = data.grades.iter().copied().max().unwrap_or(0);
    // From the given threshold, or from just past the grades when it lies far beyond them.
    let (start, step) = if none {
        (options.tau_target.min(f64::from(largest) + 1.0), -0.1)
    } else {
        (options.tau_target.max(-1.0), 0.1)
    };
    let works = (1..=200).find_map(|k| {
        let tau = ((start + step * k as f64) * 10.0).round() / 10.0;
        let y = draws.labels(&data.grades, options.t, tau);
        let positive = positive_groups(data, &y);
        let negatives = y.iter().filter(|&&v| v == 0.0).count();
        // Enough of each label to learn from: a tenth of the groups with a y = 1, a tenth of
        // the documents with a y = 0.
        let enough = if none {
            positive >= groups.div_ceil(10).max(1) && negatives > 0
        } else {
            positive > 0 && negatives >= y.len().div_ceil(10)
        };
        enough.then_some((tau, positive))
    });
    let advice = match works {
        Some((tau, positive)) => format!(
            "tau_target {tau} (--tau-target {tau}) gives {positive} of the {groups} training groups a y = 1"
        ),
        None => "no tau_target gives the training groups both labels: the grades do not separate the documents".into(),
    };
    let settings = format!(
        "t = {}, tau_target = {}, training grades 0..={largest}",
        options.t, options.tau_target
    );
    Err(Error::Data(if none {
        format!("no positive training groups: with {settings}, no document got y = 1; {advice}")
    } else {
        format!("every training document got y = 1 ({settings}): the labels carry no information; {advice}")
    }))
}

/// What gives logs' labels (their conversions) more documents with a y = 1, by where the logs
/// come from.
const MORE_CONVERSIONS: &str = "logs simulated here or by data simulate-logs convert more with more --sessions or a higher --conversion-rate; a user's logs (data aggregate-logs) can be labelled by the grades instead (--log-labels gumbel --training-labels grades)";

/// Refuses labels a model cannot learn from or be chosen by: a training split without a y = 1,
/// or with nothing but y = 1; a validation split without a y = 1, or whose NDCG is 1.0 whatever
/// the model.
fn check_labels(
    train_set: &RankingSet,
    valid_set: &RankingSet,
    options: &PrepareOptions,
) -> Result<()> {
    // The grades themselves: every kept group has a document of grade > 0, and each split's
    // grades were checked to rank something (`check_mixed_grades`).
    if options.grades {
        return Ok(());
    }
    if train_set.positive_groups() == 0 {
        return Err(Error::Data(match options.label_column {
            Some(column) => format!("no positive training groups: column {column}, the label y, is 0 on every training document; {MORE_CONVERSIONS}"),
            None => format!(
                "no positive training groups: with t = {} and tau_target = {} no document got y = 1; lower --tau-target",
                options.t, options.tau_target
            ),
        }));
    }
    if train_set.labels.iter().all(|&y| y > 0.0) {
        if let Some(column) = options.label_column {
            return Err(Error::Data(format!("every training document has y = 1 (column {column} > 0): the labels carry no information; with simulated logs, lower --conversion-rate or --sessions")));
        }
        return Err(Error::Data(format!(
            "every training document got y = 1 (t = {}, tau_target = {}): the labels carry no information; raise --tau-target to about the grade above which a document counts as relevant",
            options.t, options.tau_target
        )));
    }
    if valid_set.positive_groups() == 0 {
        return Err(Error::Data(format!(
            "the validation split has no group with a y = 1 ({} groups after filtering), so validation NDCG cannot pick an epoch; {}, or give more validation queries (--valid)",
            valid_set.n_groups(),
            match options.label_column {
                Some(_) => MORE_CONVERSIONS,
                None => "lower --tau-target",
            }
        )));
    }
    if !valid_set.ranks_models() {
        return Err(Error::Data(format!(
            "every validation group with a y = 1 has y = 1 on all its documents (tau_target = {}), so validation NDCG is 1.0 whatever the model and cannot pick an epoch; raise --tau-target",
            options.tau_target
        )));
    }
    Ok(())
}

/// Fewer validation groups with a y = 1 than this are warned of: the epoch kept rests on them.
pub const FEW_VALIDATION_GROUPS: usize = 5;

/// What preparation warns of its splits: regular features constant within every query (a
/// student cannot rank there), privileged ones likewise (a teacher that sees z alone, GenD's,
/// cannot), a validation split with few groups to choose the epoch by, and a test split whose
/// NDCG cannot be measured or cannot move.
fn split_warnings(
    [train_set, valid_set]: [&RankingSet; 2],
    test_set: Option<&RankingSet>,
    [regular_columns, privileged_columns]: [&[usize]; 2],
    varied_before: &[[bool; 2]],
    options: &PrepareOptions,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let splits = [
        ("train", Some(train_set)),
        ("validation", Some(valid_set)),
        ("test", test_set),
    ];
    // Whether x (side 0) or z (side 1) of the training split is constant within every query as
    // the model sees it.
    let train_flat = [
        (&train_set.regular[..], train_set.d_x),
        (&train_set.privileged[..], train_set.d_z),
    ]
    .map(|(m, d)| d > 0 && constant_within_queries(m, d, &train_set.group_offsets).len() == d);
    // Where x or z of the split at `index` varied within some query before the fitted transform,
    // it is the transform that makes it constant, not the data: on any split, by columns too
    // close to resolve on the training split (named in a warning of their own); on another
    // split, by the quantile map's ends, which take every value beyond the training range.
    let once_transformed = |index: usize, side: usize| {
        let transform = options.transform;
        if !varied_before.get(index).is_some_and(|v| v[side]) {
            String::new()
        } else if index > 0 && transform == Transform::RankGauss && !train_flat[side] {
            " once transformed (--transform rank-gauss maps the values beyond the training split's range to its ends)".into()
        } else {
            format!(" once transformed (--transform {})", transform.name())
        }
    };
    for (index, (split, set)) in splits.into_iter().enumerate() {
        let Some(set) = set.filter(|s| s.d_x > 0 && s.n_docs() > 0) else {
            continue;
        };
        if constant_within_queries(&set.regular, set.d_x, &set.group_offsets).len() == set.d_x {
            warnings.push(format!(
                "the {split} split's regular features x (columns {}) are each constant within every query{} (at most they vary between queries): a student that sees only x gives every document of a query the same score and cannot rank; its metrics there are those of a random order",
                column_ranges(regular_columns),
                once_transformed(index, 0)
            ));
        }
    }
    // The same of z, where z is columns of the data (not Figure 5's discriminative labels).
    if !privileged_columns.is_empty() {
        for (index, (split, set)) in splits.into_iter().enumerate() {
            let Some(set) = set.filter(|s| s.d_z == privileged_columns.len() && s.n_docs() > 0)
            else {
                continue;
            };
            if constant_within_queries(&set.privileged, set.d_z, &set.group_offsets).len()
                == set.d_z
            {
                warnings.push(format!(
                    "the {split} split's privileged features z (columns {}) are each constant within every query{} (at most they vary between queries): a teacher that sees only z (GenD's) gives every document of a query the same score and cannot rank; its figures there are those of a random order",
                    column_ranges(privileged_columns),
                    once_transformed(index, 1)
                ));
            }
        }
    }
    // The epoch kept is the one best on the validation groups with a y = 1: a handful of them
    // choose it by chance (a split held out of a small training file, a high tau_target).
    let positive = valid_set.positive_groups();
    if positive < FEW_VALIDATION_GROUPS {
        // What makes more of them, by where y comes from.
        let sparser = if options.label_column.is_some() {
            format!("; {MORE_CONVERSIONS}")
        } else if options.grades {
            String::new()
        } else {
            ", or lower --tau-target".into()
        };
        warnings.push(format!(
            "the validation split has {positive} group{} with a y = 1 (of {} after filtering): the epoch kept rests on {}, and early stopping on chance; give more validation queries{sparser}",
            if positive == 1 { "" } else { "s" },
            valid_set.n_groups(),
            if positive == 1 { "it" } else { "them" },
        ));
    }
    if let Some(test) = test_set {
        if test.positive_groups() == 0 {
            warnings.push(format!("the test split has no group with a y = 1 ({} groups after filtering): test NDCG cannot be measured and is reported as n/a; lower --tau-target, or give more test queries (--test)", test.n_groups()));
        } else if !test.ranks_models() {
            warnings.push(format!("every test group with a y = 1 has y = 1 on all its documents: test NDCG is 1.0 whatever the model (tau_target = {})", options.tau_target));
        }
    }
    warnings
}

/// Every step of spec §1 over the parts of the given sources.
fn prepare_parts(
    mut sources: Vec<Source>,
    (train, valid, test): (Part, Option<Part>, Option<Part>),
    options: &PrepareOptions,
    scratch: &Scratch,
    on_step: &mut dyn FnMut(&str),
) -> Result<Prepared> {
    on_step(PREPARE_STEPS[0]);
    let nf = sources[train.source].data().n_features;
    check_sources(&sources, nf, options)?;
    let mut filter = Vec::new();
    let mut keep = |name: &str, part: Part, split: u64| -> (Part, GumbelDraws) {
        let data = sources[part.source].data();
        let (groups, report) = kept_groups(data, &part.groups, options.min_group_size);
        filter.push((name.to_string(), report));
        let kept = Part {
            source: part.source,
            groups,
        };
        let draws = GumbelDraws::new(kept.n_docs(data), options.seed, split);
        (kept, draws)
    };
    let (mut train, mut train_draws) = keep("train", train, SPLIT_TRAIN);
    let valid = valid.map(|v| keep("valid", v, SPLIT_VALID));
    let test = test.map(|t| keep("test", t, SPLIT_TEST));

    let train_source = sources[train.source].data();
    let report = |name: &str| filter.iter().find(|(n, _)| n == name).map(|(_, r)| r);
    let min = options.min_group_size;
    check_mixed_grades(&train, train_source, "training", report("train"), min)?;

    // Step 8 (first half): hold out 10% of the training queries when there is no validation split.
    let holdout = valid.is_none();
    let valid = match valid {
        Some(v) => v,
        None => hold_out_valid(&mut train, &mut train_draws, train_source, options)?,
    };
    // A validation split is held to what training is: its grades must rank something, or it
    // cannot choose the epoch (graded labels: a file's own split; with column labels, y).
    if options.label_column.is_none() {
        let data = sources[valid.0.source].data();
        check_mixed_grades(&valid.0, data, "validation", report("valid"), min)?;
        // And so is a test split: labels drawn from grades that rank nothing are noise, and
        // every figure on them would measure it (as `eval --labels binary` refuses them).
        if let Some((part, _)) = &test {
            check_mixed_grades(
                part,
                sources[part.source].data(),
                "test",
                report("test"),
                min,
            )?;
        }
    }

    // Step 3: the signed log1p of every kept document, as each split's own matrix.
    let mut matrices = {
        let mut parts = vec![&train, &valid.0];
        parts.extend(test.as_ref().map(|t| &t.0));
        gather_log1p(
            &mut sources,
            &parts,
            nf,
            options.transform.signed_log1p(),
            scratch,
        )?
    }
    .into_iter();
    let mut split_data = |part: &Part| {
        let matrix = matrices.next().expect("one matrix per part");
        part.dataset(sources[part.source].data(), matrix, nf)
    };
    let (train_data, valid_data) = (split_data(&train), split_data(&valid.0));
    let test_data = test.as_ref().map(|t| split_data(&t.0));
    drop(sources);
    let (valid_draws, test_draws) = (valid.1, test.map(|t| t.1));

    on_step(PREPARE_STEPS[1]);
    let labels_of = |data: &Dataset, draws: &GumbelDraws| match options.label_column {
        Some(column) => column_labels(data, column),
        None if options.grades => data.grades.iter().map(|&g| f32::from(g)).collect(),
        None => draws.labels(&data.grades, options.t, options.tau_target),
    };
    let train_labels = labels_of(&train_data, &train_draws);
    if options.label_column.is_none() && !options.grades {
        check_gumbel_labels(&train_data, &train_draws, &train_labels, options)?;
    }
    on_step(PREPARE_STEPS[2]);
    // On the signed log1p of the features, whatever the transform: the split is the data's.
    let log1p: fn(f32) -> f32 = match options.transform.signed_log1p() {
        true => |v| v,
        false => signed_log1p_value,
    };
    let mut correlation = correlations_of(
        &train_data.features,
        train_data.n_features,
        &train_labels,
        log1p,
    );
    let nf = train_data.n_features;
    let mut constant = constant_columns(&train_data.features, nf);
    // The label column is y itself: never a feature. Counted as constant (uninformative) and
    // with correlation 0, it is never chosen as z, and it is removed from x below.
    if let Some(column) = options.label_column {
        correlation[column - 1] = 0.0;
        if !constant.contains(&column) {
            constant.push(column);
            constant.sort_unstable();
        }
    }
    if constant.len() == nf {
        return Err(Error::Data(format!(
            "every feature of the training split is constant (all {nf} columns, after filtering): the data carry nothing a model could learn from"
        )));
    }
    let Columns {
        privileged: privileged_columns,
        regular: regular_columns,
        constant_regular,
        constant_privileged,
    } = choose_columns(&correlation, &constant, nf, options)?;

    on_step(PREPARE_STEPS[3]);
    // Each split's matrix becomes x and z; the matrix itself is packed into x.
    let build = |data: Dataset, draws: &GumbelDraws| -> Result<RankingSet> {
        let labels = labels_of(&data, draws);
        let positive_group = (0..data.n_groups())
            .map(|g| labels[data.group(g)].iter().any(|&y| y > 0.0))
            .collect();
        let (regular, privileged, d_z) = match &options.privileged {
            PrivilegedSplit::Discriminative { tau_priv } => {
                let z = draws.labels(&data.grades, options.t, *tau_priv);
                let (x, _) = split_columns(data.features, nf, &regular_columns, &[], scratch)?;
                (x, z.into(), 1)
            }
            _ => {
                let (x, z) = split_columns(
                    data.features,
                    nf,
                    &regular_columns,
                    &privileged_columns,
                    scratch,
                )?;
                (x, z, privileged_columns.len())
            }
        };
        Ok(RankingSet {
            regular,
            d_x: regular_columns.len(),
            privileged,
            d_z,
            grades: data.grades,
            labels,
            group_offsets: data.group_offsets,
            positive_group,
            qids: data.qids,
        })
    };
    let mut train_set = build(train_data, &train_draws)?;
    let mut valid_set = build(valid_data, &valid_draws)?;
    check_labels(&train_set, &valid_set, options)?;
    let mut test_set = test_data
        .zip(test_draws)
        .map(|(d, g)| build(d, &g))
        .transpose()?;
    // The transform after the signed log1p: fitted on the training split, applied to each.
    let input_maps = InputMaps {
        regular: options.transform.fit(&train_set.regular, train_set.d_x),
        privileged: options.transform.fit(&train_set.privileged, train_set.d_z),
        signed_log1p: options.transform.signed_log1p(),
    };
    // Whether each split's x and z vary within some query before the fitted maps (none for the
    // signed log1p alone, which fits nothing), for the warnings that they do not after them.
    let varied = |matrix: &[f32], width: usize, set: &RankingSet| {
        width > 0 && constant_within_queries(matrix, width, &set.group_offsets).len() < width
    };
    let varied_before: Vec<[bool; 2]> =
        if input_maps.regular.is_empty() && input_maps.privileged.is_empty() {
            Vec::new()
        } else {
            [&train_set, &valid_set]
                .into_iter()
                .chain(test_set.as_ref())
                .map(|set| {
                    [
                        varied(&set.regular, set.d_x, set),
                        varied(&set.privileged, set.d_z, set),
                    ]
                })
                .collect()
        };
    for set in [&mut train_set, &mut valid_set]
        .into_iter()
        .chain(test_set.as_mut())
    {
        crate::data::transform::apply(&input_maps.regular, set.regular.as_mut_slice());
        crate::data::transform::apply(&input_maps.privileged, set.privileged.as_mut_slice());
    }
    let mut warnings = collapsed_by_transform(
        &train_set,
        [&regular_columns, &privileged_columns],
        &constant,
        options.transform,
    );
    warnings.extend(split_warnings(
        [&train_set, &valid_set],
        test_set.as_ref(),
        [&regular_columns, &privileged_columns],
        &varied_before,
        options,
    ));
    if options.transform == Transform::SignedLog1p {
        warnings.extend(constant_on_training_alone(
            &train_set,
            [
                ("validation", Some(&valid_set)),
                ("test", test_set.as_ref()),
            ],
            [&regular_columns, &privileged_columns],
            &constant,
        ));
    }
    Ok(Prepared {
        train: train_set,
        valid: valid_set,
        test: test_set,
        privileged_columns,
        regular_columns,
        constant_regular,
        constant_privileged,
        warnings,
        correlations: correlation,
        filter,
        holdout,
        input_maps,
    })
}

/// Warnings naming the columns `constant` (sorted) on the training split that take other values on the
/// validation or test split, under the signed log1p alone: a model learned nothing of how they
/// vary, yet their other values move its scores there, as its weights of them happen to be. A
/// fitted transform maps such a column to 0 on every split, and LightGBM never splits on it.
fn constant_on_training_alone(
    train: &RankingSet,
    others: [(&str, Option<&RankingSet>); 2],
    [regular_columns, privileged_columns]: [&[usize]; 2],
    constant: &[usize],
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (split, set) in others {
        let Some(set) = set else { continue };
        let (mut columns, mut documents) = (Vec::new(), vec![false; set.n_docs()]);
        for (matrix, trained, width, names) in [
            (&set.regular, &train.regular, set.d_x, regular_columns),
            (
                &set.privileged,
                &train.privileged,
                set.d_z,
                privileged_columns,
            ),
        ] {
            // The discriminative z is a label, not a column of the file.
            if width == 0 || names.len() != width || train.n_docs() == 0 {
                continue;
            }
            // Each constant column's place in the matrix and its one training value.
            let flat: Vec<(usize, f32)> = (0..width)
                .filter(|&j| constant.binary_search(&names[j]).is_ok())
                .map(|j| (j, trained[j]))
                .collect();
            let mut varies = vec![false; flat.len()];
            for (row, seen) in matrix.chunks_exact(width).zip(documents.iter_mut()) {
                for (k, &(j, value)) in flat.iter().enumerate() {
                    if row[j] != value {
                        (varies[k], *seen) = (true, true);
                    }
                }
            }
            columns.extend(
                flat.iter()
                    .zip(&varies)
                    .filter(|(_, &v)| v)
                    .map(|(&(j, _), _)| names[j]),
            );
        }
        if !columns.is_empty() {
            columns.sort_unstable();
            let (n, take, what) = match columns.len() {
                1 => ("column", "takes", "it varies"),
                _ => ("columns", "take", "they vary"),
            };
            warnings.push(format!(
                "{n} {}, constant on the training split, {take} other values on the {split} split ({} of {} documents): a model learned nothing of how {what}, yet under the signed log1p alone (nothing fitted) those values move its scores there; --transform standardize or rank-gauss maps a column constant on the training split to 0 on every split",
                column_ranges(&columns),
                documents.iter().filter(|&&d| d).count(),
                set.n_docs()
            ));
        }
    }
    warnings
}

/// A warning naming the columns that vary on the training split (not `constant` there) but take
/// one value once transformed: values closer than f32 resolves after the signed log1p (0 and
/// 1e-40), or a spread of a few f32 steps, which standardisation maps to 0. The model sees each
/// as a constant column, and the data's statistics do not.
fn collapsed_by_transform(
    train: &RankingSet,
    [regular_columns, privileged_columns]: [&[usize]; 2],
    constant: &[usize],
    transform: crate::data::transform::Transform,
) -> Vec<String> {
    let views = [
        (&train.regular[..], train.d_x, regular_columns),
        (&train.privileged[..], train.d_z, privileged_columns),
    ];
    let collapsed: Vec<usize> = views
        .into_iter()
        // Figure 5's discriminative z is a label, not columns of the data.
        .filter(|(_, width, columns)| *width > 0 && *width == columns.len())
        .flat_map(|(matrix, width, columns)| {
            constant_columns(matrix, width)
                .into_iter()
                .map(|j| columns[j - 1])
                .filter(|c| !constant.contains(c))
                .collect::<Vec<_>>()
        })
        .collect();
    if collapsed.is_empty() {
        return Vec::new();
    }
    let mut collapsed = collapsed;
    collapsed.sort_unstable();
    let (columns, take, vary) = match collapsed.len() {
        1 => ("column", "takes", "varies"),
        _ => ("columns", "each take", "vary"),
    };
    vec![format!(
        "{columns} {} {take} one value once transformed (--transform {}), though {} on the training split (by less than f32 resolves at its scale): the model sees each as a constant column",
        column_ranges(&collapsed),
        transform.name(),
        if collapsed.len() == 1 { format!("it {vary}") } else { format!("they {vary}") }
    )]
}

/// Pads a split with fewer (trailing, all-zero sparse) columns to `n_features`.
pub fn widen(data: &mut Dataset, n_features: usize) {
    if data.n_features == n_features {
        return;
    }
    let old = data.n_features;
    let mut wide = vec![0f32; data.n_docs() * n_features];
    for (dst, src) in wide
        .chunks_exact_mut(n_features)
        .zip(data.features.chunks_exact(old.max(1)))
    {
        dst[..old].copy_from_slice(&src[..old]);
    }
    data.features = wide.into();
    data.n_features = n_features;
}

/// The `n_docs x columns.len()` matrix of the given 1-based columns; in parallel natively.
pub fn gather_columns(data: &Dataset, columns: &[usize]) -> Vec<f32> {
    gather_from(&data.features, data.n_features, columns)
}

/// [`gather_columns`] of an `n_docs x n_features` matrix.
fn gather_from(features: &[f32], n_features: usize, columns: &[usize]) -> Vec<f32> {
    let mut out = vec![0f32; features.len() / n_features.max(1) * columns.len()];
    gather_into(&mut out, features, n_features, columns);
    out
}

/// [`gather_from`] into `out` (`n_docs x columns.len()`).
fn gather_into(out: &mut [f32], features: &[f32], n_features: usize, columns: &[usize]) {
    let (nf, width) = (n_features.max(1), columns.len());
    if width == 0 {
        return;
    }
    let gather = |(dst, src): (&mut [f32], &[f32])| {
        for (to, row) in dst.chunks_exact_mut(width).zip(src.chunks_exact(nf)) {
            for (t, &c) in to.iter_mut().zip(columns) {
                *t = row[c - 1];
            }
        }
    };
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(ROWS_PER_PIECE * width)
            .zip(features.par_chunks(ROWS_PER_PIECE * nf))
            .for_each(gather);
    }
    #[cfg(target_arch = "wasm32")]
    out.chunks_mut(ROWS_PER_PIECE * width)
        .zip(features.chunks(ROWS_PER_PIECE * nf))
        .for_each(gather);
}

/// The 1-based columns of an `n_docs x n_features` matrix with one value in every row; in
/// parallel natively.
pub fn constant_columns(features: &[f32], n_features: usize) -> Vec<usize> {
    let Some(first) = features.get(..n_features) else {
        return (1..=n_features).collect();
    };
    let mut varies = vec![false; n_features];
    for part in over_row_pieces(features, n_features, |_, rows| {
        let mut varies = vec![false; n_features];
        for row in rows.chunks_exact(n_features) {
            for ((v, &a), &b) in varies.iter_mut().zip(row).zip(first) {
                *v |= a != b;
            }
        }
        varies
    }) {
        varies.iter_mut().zip(part).for_each(|(v, p)| *v |= p);
    }
    (1..=n_features).filter(|&c| !varies[c - 1]).collect()
}

/// The 1-based columns of an `n_docs x n_features` matrix that take one value within each group
/// of `offsets` (columns constant everywhere among them): a model that sees only these gives
/// every document of a query the same score, so it cannot rank within a query, however much the
/// columns vary between queries.
pub fn constant_within_queries(
    features: &[f32],
    n_features: usize,
    offsets: &[usize],
) -> Vec<usize> {
    let mut varies = vec![false; n_features];
    for w in offsets.windows(2) {
        let rows = &features[w[0] * n_features..w[1] * n_features];
        let Some(first) = rows.get(..n_features) else {
            continue;
        };
        for row in rows.chunks_exact(n_features).skip(1) {
            for ((v, &a), &b) in varies.iter_mut().zip(row).zip(first) {
                *v |= a != b;
            }
        }
        if varies.iter().all(|&v| v) {
            break;
        }
    }
    (1..=n_features).filter(|&c| !varies[c - 1]).collect()
}

/// `1-3, 7, 9-10`: sorted 1-based columns as runs.
pub fn column_ranges(columns: &[usize]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < columns.len() {
        let mut j = i;
        while j + 1 < columns.len() && columns[j + 1] == columns[j] + 1 {
            j += 1;
        }
        runs.push(if j == i {
            columns[i].to_string()
        } else {
            format!("{}-{}", columns[i], columns[j])
        });
        i = j + 1;
    }
    runs.join(", ")
}
