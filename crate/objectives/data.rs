//! Binary classification data for the global objectives, one example per document: a seeded
//! synthetic imbalanced task, or LETOR files with the label `grade >= threshold`.

use crate::data::prepare::{signed_log1p, widen};
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};
use crate::rng::Rng;

/// Examples with a binary label each.
#[derive(Debug, Clone, PartialEq)]
pub struct BinarySet {
    pub n_features: usize,
    /// `n x n_features`, row-major: in memory, or (on the page) in a buffer the pool's workers
    /// share.
    pub x: Features,
    /// 0 or 1.
    pub y: Vec<f32>,
}

impl BinarySet {
    pub fn len(&self) -> usize {
        self.y.len()
    }
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
    pub fn positives(&self) -> usize {
        self.y.iter().filter(|&&y| y > 0.5).count()
    }
    /// Appends example `i`'s features to `out`.
    pub fn extend_row(&self, i: usize, out: &mut Vec<f32>) {
        self.x
            .extend_from(i * self.n_features..(i + 1) * self.n_features, out);
    }
    /// The examples `indices`, in that order.
    pub fn gather(&self, indices: &[usize]) -> BinarySet {
        let mut x = Vec::with_capacity(indices.len() * self.n_features);
        for &i in indices {
            self.extend_row(i, &mut x);
        }
        BinarySet {
            n_features: self.n_features,
            x: x.into(),
            y: indices.iter().map(|&i| self.y[i]).collect(),
        }
    }
    /// The features as the models' inputs.
    pub fn inputs(&self) -> crate::data::inputs::Inputs<'_> {
        crate::data::inputs::Inputs::of_features(&self.x, self.len())
    }
}

/// Training, validation and test examples.
#[derive(Debug, Clone)]
pub struct BinarySplits {
    pub train: BinarySet,
    pub valid: BinarySet,
    pub test: BinarySet,
    /// Where they came from, for reports.
    pub description: String,
}

impl BinarySplits {
    /// Each split must hold positives and negatives (AUC-PR and AUC-ROC are undefined otherwise):
    /// a split that does not is named (`files`: where each came from, where a file) with
    /// `remedy`, the setting that makes the classes.
    fn check(self, files: [Option<String>; 3], remedy: &str) -> Result<Self> {
        for ((name, set), file) in [
            ("training", &self.train),
            ("validation", &self.valid),
            ("test", &self.test),
        ]
        .into_iter()
        .zip(files)
        {
            let p = set.positives();
            if p == 0 || p == set.len() {
                let from = file.map(|f| format!(" ({f})")).unwrap_or_default();
                return Err(Error::Data(format!(
                    "the {name} split{from} has {p} positive examples of {}: binary metrics need both classes; {remedy}",
                    set.len()
                )));
            }
        }
        Ok(self)
    }
}

/// The synthetic imbalanced task.
///
/// Features x ~ N(0, I). A latent score mixes a linear part, an interaction and a curvature,
///
/// ```text
/// s = w.x / sqrt(d) + 0.8 x_0 x_1 + 0.5 (x_2^2 - 1) + noise * e,     e ~ N(0, 1),
/// ```
///
/// with w ~ N(0, I) drawn once from the seed, and the label is y = 1[s > t], t the
/// `1 - positive_rate` quantile of s over all the examples drawn (so the positives are the rare
/// top of the latent score, and the noise puts negatives among them). One draw of
/// `train + valid + test` examples, cut in that order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthBinaryOptions {
    pub train: usize,
    pub valid: usize,
    pub test: usize,
    pub features: usize,
    /// Share of positives, in (0, 1).
    pub positive_rate: f64,
    /// Standard deviation of the latent noise e (the signal's is about 1.2).
    pub noise: f64,
    pub seed: u64,
}

/// The table of settings' defaults (fields `objectives.data.synthetic.*`).
impl Default for SynthBinaryOptions {
    fn default() -> Self {
        crate::settings::defaults("objectives.data.synthetic")
    }
}

pub fn synthetic(options: &SynthBinaryOptions) -> Result<BinarySplits> {
    let o = options;
    if o.train == 0 || o.valid == 0 || o.test == 0 {
        return Err(Error::Config(format!(
            "synthetic binary data need at least one training, validation and test example (got {}, {}, {})",
            o.train, o.valid, o.test
        )));
    }
    if o.features < 3 {
        return Err(Error::Config(format!(
            "synthetic binary data need at least 3 features (got {})",
            o.features
        )));
    }
    let examples = o.train as u128 + o.valid as u128 + o.test as u128;
    // The features, their standardised copy and the latent scores, in f32 and f64.
    crate::memory::check_fits(
        examples * (8 * o.features as u128 + 32),
        &format!(
            "a synthetic binary task of {examples} examples with {} features",
            o.features
        ),
        "choose fewer examples (--train-examples, --valid-examples, --test-examples) or --features",
    )?;
    if !(o.positive_rate > 0.0 && o.positive_rate < 1.0) {
        return Err(Error::Config(format!(
            "positive rate {} must lie strictly between 0 and 1",
            o.positive_rate
        )));
    }
    if !(o.noise.is_finite() && o.noise >= 0.0) {
        return Err(Error::Config(format!(
            "noise {} must be finite and >= 0",
            o.noise
        )));
    }
    let d = o.features;
    let n = o.train + o.valid + o.test;
    let mut weights_rng = Rng::stream(o.seed, 0x6269_6e77);
    let w: Vec<f64> = (0..d).map(|_| weights_rng.normal()).collect();
    let mut rng = Rng::stream(o.seed, 0x6269_6e78);
    let mut x = Vec::with_capacity(n * d);
    let mut latent = Vec::with_capacity(n);
    let scale = 1.0 / (d as f64).sqrt();
    for _ in 0..n {
        let row: Vec<f64> = (0..d).map(|_| rng.normal()).collect();
        let linear: f64 = row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() * scale;
        let s =
            linear + 0.8 * row[0] * row[1] + 0.5 * (row[2] * row[2] - 1.0) + o.noise * rng.normal();
        latent.push(s);
        x.extend(row.iter().map(|&v| v as f32));
    }
    let mut sorted = latent.clone();
    sorted.sort_by(f64::total_cmp);
    let cut = ((n as f64 * (1.0 - o.positive_rate)).floor() as usize).min(n - 1);
    let threshold = sorted[cut];
    let y: Vec<f32> = latent
        .iter()
        .map(|&s| (s >= threshold) as u8 as f32)
        .collect();
    let all = BinarySet {
        n_features: d,
        x: x.into(),
        y,
    };
    let indices: Vec<usize> = (0..n).collect();
    let (a, b) = (o.train, o.train + o.valid);
    BinarySplits {
        train: all.gather(&indices[..a]),
        valid: all.gather(&indices[a..b]),
        test: all.gather(&indices[b..]),
        description: format!(
            "synthetic imbalanced binary task ({} train / {} valid / {} test examples, {} features, {:.1}% positives, noise {}, seed {})",
            o.train, o.valid, o.test, d, 100.0 * o.positive_rate, o.noise, o.seed
        ),
    }
    .check(
        [None, None, None],
        "change --positive-rate, or draw more examples (--train-examples, --valid-examples, --test-examples)",
    )
}

/// LETOR splits read document by document: every document is one example with label
/// `grade >= threshold`, features after the PFD preparation's signed log1p
/// (`x <- sign(x) ln(1 + |x|)`); query groups play no part. Validation and test files may have
/// fewer (trailing sparse) columns than the training file, not more.
pub fn from_letor(
    train: &Dataset,
    valid: &Dataset,
    test: &Dataset,
    threshold: u8,
    description: String,
) -> Result<BinarySplits> {
    if threshold == 0 {
        return Err(Error::Config(
            "label threshold 0 makes every document positive: use 1 or more".into(),
        ));
    }
    if train.n_features == 0 {
        return Err(Error::Data("the training data have no features".into()));
    }
    let name = |data: &Dataset| {
        data.source
            .as_ref()
            .map_or("a validation/test file".to_string(), |p| {
                p.display().to_string()
            })
    };
    let binary = |data: &Dataset| -> Result<BinarySet> {
        if data.n_features > train.n_features {
            return Err(Error::Config(format!(
                "{}: the data have {} feature columns (highest index), the training file only {}: another dataset?",
                name(data),
                data.n_features,
                train.n_features
            )));
        }
        let mut data = data.clone();
        widen(&mut data, train.n_features);
        signed_log1p(data.features.to_mut());
        Ok(BinarySet {
            n_features: data.n_features,
            y: data
                .grades
                .iter()
                .map(|&g| (g >= threshold) as u8 as f32)
                .collect(),
            x: data.features,
        })
    };
    // A narrower file is read with its last columns as 0 (SVMlight leaves zeros out), and the
    // description says so: never without a word.
    let narrower: Vec<String> = [valid, test]
        .iter()
        .filter(|d| d.n_features < train.n_features)
        .map(|d| {
            format!(
                "{} has {} feature columns against the training file's {}: its last {} read as 0",
                name(d),
                d.n_features,
                train.n_features,
                train.n_features - d.n_features
            )
        })
        .collect();
    let description = if narrower.is_empty() {
        description
    } else {
        format!("{description}; {}", narrower.join("; "))
    };
    BinarySplits {
        train: binary(train)?,
        valid: binary(valid)?,
        test: binary(test)?,
        description,
    }
    .check(
        [train, valid, test].map(|d| d.source.as_ref().map(|p| p.display().to_string())),
        &format!(
            "change --label-threshold {threshold} (a document whose grade reaches it is positive)"
        ),
    )
}

/// The global objectives' examples in a buffer the page's workers share: one worker lays them
/// out ([`BinarySplits::to_shared`]), every worker of the pool reads x from that one buffer
/// ([`BinarySplits::from_shared`]).
///
/// Layout: `b"DROBJECT"`, the description's length (u64) and the description (JSON: each split's
/// number of examples and features, and the splits' description), then each split's x
/// (f32, row-major) and y (f32), every section on a [`crate::data::sections::ALIGN`] boundary.
#[cfg(target_arch = "wasm32")]
mod shared {
    use super::{BinarySet, BinarySplits};
    use crate::data::sections::{align, write_sections};
    use crate::data::shared::{buffer_of, SharedBytes};
    use crate::error::{Error, Result};

    const MAGIC: [u8; 8] = *b"DROBJECT";

    #[derive(serde::Serialize, serde::Deserialize)]
    struct About {
        /// (examples, features) of train, valid, test.
        shapes: Vec<(usize, usize)>,
        description: String,
    }

    impl BinarySplits {
        fn sets(&self) -> [&BinarySet; 3] {
            [&self.train, &self.valid, &self.test]
        }

        /// These examples in a new `SharedArrayBuffer`, for every worker of the page's pool.
        pub fn to_shared(&self) -> Result<js_sys::SharedArrayBuffer> {
            let about = serde_json::to_vec(&About {
                shapes: self
                    .sets()
                    .iter()
                    .map(|s| (s.len(), s.n_features))
                    .collect(),
                description: self.description.clone(),
            })
            .expect("a description serialises");
            let mut header = MAGIC.to_vec();
            header.extend_from_slice(&(about.len() as u64).to_le_bytes());
            buffer_of("the objectives' examples", |out| {
                let mut sections: Vec<&[u8]> = vec![&header, &about];
                for set in self.sets() {
                    sections.push(bytemuck::cast_slice(&set.x));
                    sections.push(bytemuck::cast_slice(&set.y));
                }
                write_sections(out, sections, 2)
            })
        }

        /// The examples another worker (or this one) laid out with
        /// [`to_shared`](Self::to_shared), x read from the buffer in place.
        pub fn from_shared(buffer: &js_sys::SharedArrayBuffer) -> Result<BinarySplits> {
            let bad = |what: &str| Error::Config(format!("the pool's shared examples: {what}"));
            let source = SharedBytes(buffer);
            if source.len() < 16 || source.bytes(0..8) != MAGIC {
                return Err(bad("not a layout of the objectives' examples"));
            }
            let about_len = u64::from_le_bytes(source.bytes(8..16).try_into().unwrap()) as usize;
            let about_end = 16usize
                .checked_add(about_len)
                .filter(|&end| end <= source.len())
                .ok_or_else(|| bad("truncated"))?;
            let about: About = serde_json::from_slice(&source.bytes(16..about_end))
                .map_err(|e| bad(&format!("corrupt description: {e}")))?;
            if about.shapes.len() != 3 {
                return Err(bad("three splits expected"));
            }
            let mut at = about_end;
            let mut sets = Vec::with_capacity(3);
            for &(n, d) in &about.shapes {
                let x_at = align(at);
                let y_at = align(x_at + 4 * n * d);
                at = y_at + 4 * n;
                if at > source.len() {
                    return Err(bad("truncated"));
                }
                let y = source
                    .bytes(y_at..at)
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                sets.push(BinarySet {
                    n_features: d,
                    x: source.matrix(x_at, n * d),
                    y,
                });
            }
            let [train, valid, test]: [BinarySet; 3] =
                sets.try_into().map_err(|_| bad("three splits expected"))?;
            Ok(BinarySplits {
                train,
                valid,
                test,
                description: about.description,
            })
        }
    }
}
