//! Interaction logs simulated over real documents and grades: the privileged features PFD was
//! made for (impressions, clicks, displayed position, dwell time) and the sparse conversion label
//! of its e-commerce setting, as a search engine's logs would hold them.
//!
//! For every query:
//! 1. a **logging ranker** scores the documents: by default a weak linear model, least squares on
//!    the grades of a fraction of the first file's queries (production rankers are imperfect);
//! 2. each of `sessions` **impressions** perturbs that order (standard Gumbel noise of scale
//!    `shuffle` on the standardised scores: a Plackett-Luce draw) and shows the top `shown`
//!    documents;
//! 3. a **click model** (Chuklin, Markov and de Rijke, *Click Models for Web Search*, 2015) turns
//!    the shown list into clicks, with attractiveness
//!    `a(r) = eps + (1 - eps) (2^r - 1) / (2^r_max - 1)` for grade r:
//!    - PBM, the position-based model: a document at rank k is examined with probability
//!      `(1/k)^eta` (eta = position bias) and clicked when examined and attractive;
//!    - cascade: the user scans from the top, clicks the first attractive document and stops;
//!    - DCM, the dependent click model: as cascade, but after a click the user goes on with
//!      probability lambda;
//! 4. a click **dwells** `exp(ln d0 + 0.5 r + 0.8 N(0,1))` seconds (skewed, longer for higher
//!    grades) and **converts** with probability `min(1, c 2^r)`, c set on the first file so that
//!    `conversion_rate` of its clicks convert.
//!
//! Each document's impressions are aggregated into six columns appended to its features (see
//! [`LogColumns`]). Draws come from a stream keyed by the seed and the query's qid, so a query's
//! logs do not depend on the order of the file or on the other files simulated with it.

use std::collections::BTreeMap;

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::settings::default_of;

/// How a user turns a shown list into clicks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClickModel {
    /// Position-based model: examination `(1/k)^eta` times attractiveness.
    Pbm,
    /// Cascade model: scan down, click the first attractive document, stop.
    Cascade,
    /// Dependent click model: scan down, click attractive documents, continue after a click with
    /// probability `continue_after_click`.
    Dcm,
}

impl ClickModel {
    pub fn name(self) -> &'static str {
        match self {
            ClickModel::Pbm => "pbm",
            ClickModel::Cascade => "cascade",
            ClickModel::Dcm => "dcm",
        }
    }
    pub fn parse(name: &str) -> Option<ClickModel> {
        match name.trim() {
            "pbm" => Some(ClickModel::Pbm),
            "cascade" => Some(ClickModel::Cascade),
            "dcm" => Some(ClickModel::Dcm),
            _ => None,
        }
    }
}

/// The ranker whose orderings the logs record. In JSON, `{"kind": "linear", "fraction": 0.1}`, or
/// its spec as the flag takes it (`"linear:0.1"`, the table of settings' default `"linear"`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "lowercase")]
pub enum LoggingRanker {
    /// Least squares of the grade on the standardised signed-log1p features of this share of the
    /// first file's queries (100 steps of gradient descent): a weak linear model.
    Linear { fraction: f64 },
    /// One feature column (1-based), larger first.
    Feature { column: usize },
    /// No ranker: every impression is a uniform shuffle.
    Random,
}

impl serde::Serialize for LoggingRanker {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        LoggingRanker::serialize(self, s)
    }
}

impl<'de> serde::Deserialize<'de> for LoggingRanker {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(spec) => {
                LoggingRanker::parse(&spec).map_err(|e| D::Error::custom(e.message()))
            }
            serde_json::Value::Object(section) => {
                LoggingRanker::of_section(section).map_err(D::Error::custom)
            }
            other => Err(D::Error::custom(format!(
                "{}, expected a spec in quotes (linear, linear:FRACTION, feature:N or random) or a section {{\"kind\": \"linear\", \"fraction\": 0.1}}",
                crate::error::json_kind(&other)
            ))),
        }
    }
}

impl LoggingRanker {
    /// Reads the section `{"kind": ..., ...}`, field by field: an internally tagged enum reads
    /// its fields after the tag, so serde's own error would name the section, not the field. A
    /// field's error starts `` field `NAME`: ``, which the setup's reader words under the field's
    /// own path. `fraction` may be left out (its default).
    fn of_section(
        mut section: serde_json::Map<String, serde_json::Value>,
    ) -> std::result::Result<Self, String> {
        use serde::Deserialize as _;
        let kind = match section.remove("kind") {
            Some(serde_json::Value::String(kind)) => kind,
            Some(other) => {
                return Err(format!(
                    "field `kind`: {}, expected linear, feature or random in quotes",
                    crate::error::json_kind(&other)
                ))
            }
            None => return Err("a section needs \"kind\": linear, feature or random".into()),
        };
        let known: &[&str] = match kind.as_str() {
            "linear" => &["fraction"],
            "feature" => &["column"],
            "random" => &[],
            other => {
                return Err(format!(
                    "field `kind`: '{}', expected linear, feature or random",
                    crate::error::printable(other)
                ))
            }
        };
        if let Some(extra) = section.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(match known {
                [] => format!("unknown field `{extra}`: the {kind} logging ranker has no settings"),
                _ => format!("unknown field `{extra}`, expected `{}`", known.join("`, `")),
            });
        }
        let field = |name: &str, e: serde_json::Error| format!("field `{name}`: {e}");
        match kind.as_str() {
            "linear" => Ok(LoggingRanker::Linear {
                fraction: match section.remove("fraction") {
                    Some(v) => f64::deserialize(v).map_err(|e| field("fraction", e))?,
                    None => default_of("data.logs.logging_ranker.fraction"),
                },
            }),
            // A count as every count of a setup reads it: a whole number, `3.0` and `3e0` too.
            "feature" => match section.remove("column") {
                Some(v) => match crate::settings::whole_json(&v).map(usize::try_from) {
                    Some(Ok(column)) if column >= 1 => Ok(LoggingRanker::Feature { column }),
                    _ => Err(format!(
                        "field `column`: {}, expected a feature's number, from 1",
                        crate::error::json_kind(&v)
                    )),
                },
                None => Err(
                    "the feature logging ranker needs \"column\": a feature's number (1-based)"
                        .into(),
                ),
            },
            _ => Ok(LoggingRanker::Random),
        }
    }

    /// Reads `linear`, `linear:FRACTION`, `feature:N` or `random`.
    pub fn parse(spec: &str) -> Result<LoggingRanker> {
        let bad = || {
            Error::Config(format!(
                "logging ranker '{}': expected linear, linear:FRACTION (0 < FRACTION <= 1), feature:N or random",
                crate::error::printable(spec)
            ))
        };
        let (kind, value) = match spec.split_once(':') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (spec.trim(), None),
        };
        match (kind, value) {
            // The share of queries whose grades the linear logging ranker learns from.
            ("linear", None) => Ok(LoggingRanker::Linear {
                fraction: default_of("data.logs.logging_ranker.fraction"),
            }),
            ("linear", Some(v)) => match v.parse::<f64>() {
                Ok(fraction) if fraction > 0.0 && fraction <= 1.0 => {
                    Ok(LoggingRanker::Linear { fraction })
                }
                _ => Err(bad()),
            },
            ("feature", Some(v)) => match v.parse::<usize>() {
                Ok(column) if column >= 1 => Ok(LoggingRanker::Feature { column }),
                Ok(_) => Err(Error::Config(format!(
                    "logging ranker '{}': feature columns count from 1",
                    crate::error::printable(spec)
                ))),
                _ => Err(bad()),
            },
            ("random", None) => Ok(LoggingRanker::Random),
            _ => Err(bad()),
        }
    }
    pub fn spec(&self) -> String {
        match self {
            LoggingRanker::Linear { fraction } => format!("linear:{fraction}"),
            LoggingRanker::Feature { column } => format!("feature:{column}"),
            LoggingRanker::Random => "random".into(),
        }
    }
}

/// Every parameter of the simulation (fields left out of a JSON setup take their defaults).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogOptions {
    /// Impressions of every query.
    pub sessions: usize,
    /// Documents shown per impression (the top of the perturbed ranking).
    pub shown: usize,
    pub click_model: ClickModel,
    /// PBM's eta: examination at rank k is `(1/k)^eta` (0: no position bias).
    pub position_bias: f64,
    /// DCM's lambda: the probability of going on down the list after a click.
    pub continue_after_click: f64,
    /// eps: the attractiveness of a grade-0 document (the top grade's is 1).
    pub click_noise: f64,
    /// Scale of the Gumbel noise added to the standardised logging scores at every impression.
    pub shuffle: f64,
    pub logging_ranker: LoggingRanker,
    /// Share of the first file's clicks that convert.
    pub conversion_rate: f64,
    /// Median dwell of a click on a grade-0 document, seconds.
    pub dwell_seconds: f64,
    pub seed: u64,
}

/// The defaults are the table of settings' ([`crate::settings`], fields `data.logs.*`).
impl Default for LogOptions {
    fn default() -> Self {
        crate::settings::defaults("data.logs")
    }
}

/// The most impressions per query a simulation takes.
pub const MAX_SESSIONS: usize = 1_000_000;

/// A click model's own parameter: its flag, the click model that reads it, and its value.
type OwnParameter = (&'static str, ClickModel, fn(&LogOptions) -> f64);

impl LogOptions {
    /// Each click model's own parameter: its flag, the model that reads it and its value.
    const OWN_PARAMETERS: [OwnParameter; 2] = [
        ("position-bias", ClickModel::Pbm, |o| o.position_bias),
        ("continue-after-click", ClickModel::Dcm, |o| {
            o.continue_after_click
        }),
    ];

    /// The click models' parameters this click model does not read, by flag, each with why:
    /// PBM alone reads the position bias, DCM alone the chance of scanning on after a click.
    pub fn not_read(&self) -> Vec<(&'static str, String)> {
        Self::OWN_PARAMETERS
            .into_iter()
            .filter(|(_, reader, _)| *reader != self.click_model)
            .map(|(flag, reader, _)| (flag, self.why_not_read(reader)))
            .collect()
    }

    /// [`Self::not_read`]'s parameters this setup gives another value than the default, each
    /// in words (`--position-bias 2 is not used: only the pbm click model reads it, ...`).
    pub fn unused(&self) -> Vec<String> {
        let defaults = LogOptions::default();
        Self::OWN_PARAMETERS
            .into_iter()
            .filter(|(_, reader, value)| {
                *reader != self.click_model && value(self) != value(&defaults)
            })
            .map(|(flag, reader, value)| {
                format!(
                    "--{flag} {} is not used: {}",
                    crate::error::shown(value(self)),
                    self.why_not_read(reader)
                )
            })
            .collect()
    }

    /// Why a parameter only `reader` reads goes unread under this click model.
    fn why_not_read(&self, reader: ClickModel) -> String {
        let name = |m: ClickModel| match serde_json::to_value(m) {
            Ok(serde_json::Value::String(name)) => name,
            _ => format!("{m:?}"),
        };
        format!(
            "only the {} click model reads it, and --click-model is {}",
            name(reader),
            name(self.click_model)
        )
    }

    /// Refuses parameters outside their ranges, naming the flag.
    pub fn validate(&self) -> Result<()> {
        let probability = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "--{name} = {} is a probability: it must lie in [0, 1]",
                    crate::error::shown(v)
                )))
            }
        };
        probability("click-noise", self.click_noise)?;
        probability("continue-after-click", self.continue_after_click)?;
        probability("conversion-rate", self.conversion_rate)?;
        if self.conversion_rate == 0.0 {
            return Err(Error::Config(
                "--conversion-rate = 0: no click would convert and there would be no label y; give a rate in (0, 1]".into(),
            ));
        }
        if self.sessions == 0 || self.sessions > MAX_SESSIONS {
            return Err(Error::Config(format!(
                "--sessions = {}: each query needs 1..={MAX_SESSIONS} impressions",
                self.sessions
            )));
        }
        if self.shown == 0 {
            return Err(Error::Config(
                "--shown = 0: an impression must show at least one document".into(),
            ));
        }
        let non_negative = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "--{name} = {} must be a finite number >= 0",
                    crate::error::shown(v)
                )))
            }
        };
        non_negative("position-bias", self.position_bias)?;
        non_negative("shuffle", self.shuffle)?;
        // A day at most: a click's dwell is minutes, and a median near f64's range would write
        // dwell times of inf that the reader refuses.
        if !(self.dwell_seconds > 0.0 && self.dwell_seconds <= MAX_DWELL_SECONDS) {
            return Err(Error::Config(format!(
                "--dwell-seconds = {} must be a number of seconds in (0, {MAX_DWELL_SECONDS}]",
                crate::error::shown(self.dwell_seconds)
            )));
        }
        if self.logging_ranker == (LoggingRanker::Feature { column: 0 }) {
            return Err(Error::Config(
                "--logging-ranker feature:0: feature columns count from 1".into(),
            ));
        }
        if let LoggingRanker::Linear { fraction } = self.logging_ranker {
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(Error::Config(format!(
                    "the logging ranker's fraction {fraction} must lie in (0, 1]"
                )));
            }
        }
        Ok(())
    }

    /// The click model with the parameters that apply to it, for reports.
    pub fn click_model_summary(&self) -> String {
        let base = match self.click_model {
            ClickModel::Pbm => format!("PBM, position bias eta = {}", self.position_bias),
            ClickModel::Cascade => "cascade".to_string(),
            ClickModel::Dcm => format!(
                "DCM, continue after a click lambda = {}",
                self.continue_after_click
            ),
        };
        format!(
            "{base}, click noise eps = {}, {} sessions a query, top {} shown, shuffle {}, logging ranker {}, {}% of clicks convert",
            self.click_noise,
            self.sessions,
            self.shown,
            self.shuffle,
            self.logging_ranker.spec(),
            self.conversion_rate * 100.0
        )
    }
}

/// The 1-based columns the simulation appends after a file's `n` features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogColumns {
    /// Times the document was shown.
    pub impressions: usize,
    pub clicks: usize,
    /// Clicks per impression (0 when never shown).
    pub ctr: usize,
    /// Mean displayed rank over its impressions (`shown + 1` when never shown).
    pub mean_position: usize,
    /// Mean dwell of its clicks, seconds (0 without clicks).
    pub dwell: usize,
    /// Conversions: the sparse label y = 1[conversions > 0].
    pub conversions: usize,
}

/// How many columns a simulation appends.
pub const LOG_COLUMNS: usize = 6;

impl LogColumns {
    pub fn after(n_features: usize) -> LogColumns {
        LogColumns {
            impressions: n_features + 1,
            clicks: n_features + 2,
            ctr: n_features + 3,
            mean_position: n_features + 4,
            dwell: n_features + 5,
            conversions: n_features + 6,
        }
    }
    /// The privileged features z: every logged interaction but the label.
    pub fn privileged(&self) -> Vec<usize> {
        vec![
            self.impressions,
            self.clicks,
            self.ctr,
            self.mean_position,
            self.dwell,
        ]
    }
    /// The columns of the original file.
    pub fn original(&self) -> std::ops::RangeInclusive<usize> {
        1..=self.impressions - 1
    }
}

/// What the logs of one file hold.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileLogStats {
    pub queries: usize,
    pub docs: usize,
    pub impressions: u64,
    pub clicks: u64,
    pub conversions: u64,
    /// Documents with a conversion (y = 1) and queries with one (positive groups).
    pub converted_docs: usize,
    pub converted_queries: usize,
    /// Click-through rate at displayed ranks 1..=shown.
    pub ctr_by_rank: Vec<f64>,
    /// Click-through rate per impression of a document of each grade.
    pub ctr_by_grade: BTreeMap<u8, f64>,
    /// Conversions per click.
    pub conversion_rate: f64,
}

/// The logs of every file simulated together.
#[derive(Debug, Clone)]
pub struct SimulatedLogs {
    /// The input files with the [`LogColumns`] appended, in the order given.
    pub datasets: Vec<Dataset>,
    pub columns: LogColumns,
    pub stats: Vec<FileLogStats>,
    /// Graded NDCG@10 of the logging ranker on the first file (how imperfect its orderings are).
    pub logging_ranker_ndcg10: Option<f64>,
    /// c in `P(convert | click, grade r) = min(1, c 2^r)`.
    pub conversion_scale: f64,
    /// The top grade, whose attractiveness is 1.
    pub max_grade: u8,
    /// The first file's impressions and clicks of every document at every displayed rank: what
    /// the methods that learn from clicks read ([`crate::ranking::clicks`]).
    pub clicks: ClickTable,
    /// The logging ranker's standardised scores of the first file and the draws' key: enough
    /// to simulate its queries again, impression by impression ([`Self::write_impressions`]).
    first_scores: Vec<f64>,
    key: u64,
}

/// One shown document of one impression of a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impression {
    /// The session, 0-based within its query.
    pub session: u32,
    /// The displayed rank, 1-based.
    pub position: u32,
    /// The document: its 1-based row within its query in the LETOR file.
    pub doc: u32,
    pub click: bool,
    /// The natural logarithm of the probability with which the logging policy showed the
    /// session's list, in its order ([`list_log_probability`]).
    pub list_log_probability: f64,
}

/// The header line of an impressions log ([`SimulatedLogs::write_impressions`],
/// [`read_impressions`]): tab-separated, one line per shown document of each impression.
pub const IMPRESSIONS_HEADER: &str = "qid\tsession\tposition\tdoc\tclick\tlist_log_probability";

/// The header of a log without the logging policy's list probabilities (a user's own log), which
/// [`read_impressions`] reads too.
pub const IMPRESSIONS_HEADER_WITHOUT_PROBABILITY: &str = "qid\tsession\tposition\tdoc\tclick";

/// The columns an impressions log may add after its first five, each at most once and in any
/// order: the logging policy's list probability, and a click's outcome in a user's own log, its
/// conversion (0 or 1) and its dwell time (seconds), both 0 on a row without a click.
pub const IMPRESSIONS_OPTIONAL_COLUMNS: [&str; 3] = ["list_log_probability", "conversion", "dwell"];

/// The longest dwell of one click, seconds (a day); a longer one is refused by line.
pub const MAX_LOGGED_DWELL_SECONDS: f64 = 86_400.0;

/// The natural logarithm of the probability that the logging policy shows `list` (indices into
/// `scores`, best first) at the top: its keys are the scores plus Gumbel noise of scale `shuffle`,
/// which makes each list a Plackett-Luce draw with weights `exp(score / shuffle)`, so
/// `sum_r [s_r / shuffle - ln sum_{j not above r} exp(s_j / shuffle)]`. Without noise the list
/// is certain (0).
pub fn list_log_probability(scores: &[f64], list: &[usize], shuffle: f64) -> f64 {
    if shuffle <= 0.0 {
        return 0.0;
    }
    let mut left: Vec<bool> = vec![true; scores.len()];
    let mut total = 0.0;
    for &i in list {
        let max = scores
            .iter()
            .zip(&left)
            .filter(|(_, &l)| l)
            .fold(f64::NEG_INFINITY, |m, (&s, _)| m.max(s));
        let sum: f64 = scores
            .iter()
            .zip(&left)
            .filter(|(_, &l)| l)
            .map(|(&s, _)| libm::exp((s - max) / shuffle))
            .sum();
        total += (scores[i] - max) / shuffle - libm::log(sum);
        left[i] = false;
    }
    total
}

/// The largest impressions log read, bytes.
pub const MAX_IMPRESSIONS_BYTES: u64 = 8 << 30;

/// Impressions and clicks of every document of a file at each displayed rank 1..=`shown`,
/// summed over its query's sessions, with the examination probabilities that made them where
/// the click model has them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClickTable {
    /// Ranks per document.
    pub shown: usize,
    /// The most sessions of a query (for reports; each query's own count is its impressions at
    /// rank 1).
    pub sessions: usize,
    /// `impressions[d * shown + k]`: sessions that showed document d at rank k + 1.
    pub impressions: Vec<u32>,
    /// `clicks[d * shown + k]`: clicks on document d at rank k + 1.
    pub clicks: Vec<u32>,
    /// The simulator's examination probability at each rank, `(1/k)^eta` under PBM; None under
    /// cascade and DCM, where examination depends on the clicks above and not on the rank alone.
    pub examination: Option<Vec<f64>>,
    /// The group offsets and query ids of the file, in its order.
    pub group_offsets: Vec<usize>,
    pub qids: Vec<u64>,
    /// Made from one impression a row ([`clicks_of_rows`], Python's `position=`): each row is a
    /// document of its own, shown once, and the rows' y are the clicks, with no grades beside.
    #[serde(default)]
    pub from_rows: bool,
    /// `conversions[d]`: the conversions of document d over its sessions, where the log has a
    /// `conversion` column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversions: Option<Vec<u32>>,
    /// `dwell_ms[d]`: the dwell of document d's clicks summed over its sessions, in whole
    /// milliseconds (each row's dwell rounded to the millisecond, so that the sum is of integers
    /// and no order of addition changes it), where the log has a `dwell` column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwell_ms: Option<Vec<u64>>,
}

/// Writes `table` to `path` (atomically): one line of JSON with everything but the counts, then
/// the impressions and the clicks as little-endian u32, each `n_docs * shown` of them.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_click_table(path: &std::path::Path, table: &ClickTable) -> Result<()> {
    let head = ClickTable {
        impressions: Vec::new(),
        clicks: Vec::new(),
        ..table.clone()
    };
    let mut bytes = serde_json::to_vec(&head).expect("a click table serialises");
    bytes.push(b'\n');
    bytes.reserve(8 * table.impressions.len());
    for counts in [&table.impressions, &table.clicks] {
        for v in counts.iter() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    crate::output::write_atomic(path, &bytes)
}

/// Reads what [`write_click_table`] wrote, checking that the counts fill the table's shape.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_click_table(path: &std::path::Path) -> Result<ClickTable> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_click_table(
        &path.display().to_string(),
        &bytes,
        "expected the clicks by rank distillrank wrote beside prepared splits (delete it to prepare again)",
    )
}

/// Whether bytes begin as [`write_click_table`] writes a table.
pub fn is_click_table(bytes: &[u8]) -> bool {
    bytes.starts_with(b"{\"shown\":")
}

/// A table [`write_click_table`] wrote, from its bytes; `expected` ends every refusal.
pub fn parse_click_table(name: &str, bytes: &[u8], expected: &str) -> Result<ClickTable> {
    let bad = |what: &str| Error::Data(format!("{name}: {what}: {expected}"));
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no header line"))?;
    let mut table: ClickTable =
        serde_json::from_slice(&bytes[..end]).map_err(|e| bad(&e.to_string()))?;
    // The queries' offsets must cut the documents in order, one more than the queries: a table
    // edited or cut otherwise would index past its counts.
    let offsets = &table.group_offsets;
    if offsets.first() != Some(&0)
        || offsets.windows(2).any(|w| w[0] > w[1])
        || offsets.len() != table.qids.len() + 1
    {
        return Err(bad(&format!(
            "group_offsets must start at 0, never decrease and number one more than the {} qids",
            table.qids.len()
        )));
    }
    let cells = table
        .n_docs()
        .checked_mul(table.shown)
        .ok_or_else(|| bad("a shape past memory"))?;
    let body = &bytes[end + 1..];
    if Some(body.len()) != cells.checked_mul(8) {
        return Err(bad(&format!(
            "{} bytes of counts where {} documents at {} ranks need {}",
            body.len(),
            table.n_docs(),
            table.shown,
            cells * 8
        )));
    }
    for (column, len) in [
        ("conversions", table.conversions.as_ref().map(Vec::len)),
        ("dwell_ms", table.dwell_ms.as_ref().map(Vec::len)),
    ] {
        if let Some(len) = len.filter(|&len| len != table.n_docs()) {
            return Err(bad(&format!(
                "{len} {column} for {} documents: expected one per document",
                table.n_docs()
            )));
        }
    }
    let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let (impressions, clicks) = body.split_at(cells * 4);
    table.impressions = impressions.chunks_exact(4).map(word).collect();
    table.clicks = clicks.chunks_exact(4).map(word).collect();
    check_click_counts(&table).map_err(|what| bad(&what))?;
    Ok(table)
}

/// Refuses examination probabilities (where the table has them) that are not one a rank, each
/// in (0, 1]: inverse propensity weights divide by them.
pub fn check_examination(table: &ClickTable) -> std::result::Result<(), String> {
    let Some(examination) = &table.examination else {
        return Ok(());
    };
    if examination.len() != table.shown {
        return Err(format!(
            "{} examination probabilities for {} ranks: expected one a rank",
            examination.len(),
            table.shown
        ));
    }
    match examination
        .iter()
        .enumerate()
        .find(|(_, p)| !(**p > 0.0 && **p <= 1.0))
    {
        Some((k, p)) => Err(format!(
            "the examination probability at rank {} is {}: expected a probability in (0, 1]",
            k + 1,
            crate::error::shown(*p)
        )),
        None => Ok(()),
    }
}

/// Refuses counts no log sums to: more clicks than impressions at a rank, conversions or dwell
/// without clicks, examination probabilities outside (0, 1] or not one a rank.
fn check_click_counts(table: &ClickTable) -> std::result::Result<(), String> {
    check_examination(table)?;
    let qid_of = |d: usize| {
        let g = table.group_offsets.partition_point(|&start| start <= d) - 1;
        table.qids[g]
    };
    for d in 0..table.n_docs() {
        let (shown, clicked) = table.of(d);
        if let Some(k) = (0..table.shown).find(|&k| clicked[k] > shown[k]) {
            return Err(format!(
                "document {} (qid {}) has {} clicks in {} impressions at rank {}: expected at most one click an impression",
                d + 1,
                qid_of(d),
                clicked[k],
                shown[k],
                k + 1
            ));
        }
        let clicks: u64 = clicked.iter().map(|&c| c as u64).sum();
        let conversions = table.conversions.as_ref().map_or(0, |c| c[d] as u64);
        let dwell = table.dwell_ms.as_ref().map_or(0, |w| w[d]);
        if conversions > clicks || (dwell > 0 && clicks == 0) {
            return Err(format!(
                "document {} (qid {}) has {conversions} conversions and {dwell} ms of dwell from {clicks} clicks: expected at most one conversion a click, and dwell only where it was clicked",
                d + 1,
                qid_of(d)
            ));
        }
    }
    Ok(())
}

impl ClickTable {
    pub fn n_docs(&self) -> usize {
        self.group_offsets.last().copied().unwrap_or(0)
    }
    /// The same table without its rows.
    pub fn clone_empty(&self) -> ClickTable {
        ClickTable {
            impressions: Vec::new(),
            clicks: Vec::new(),
            group_offsets: vec![0],
            qids: Vec::new(),
            examination: self.examination.clone(),
            conversions: None,
            dwell_ms: None,
            ..*self
        }
    }
    /// Impressions and clicks of document `d` at ranks 1..=shown.
    pub fn of(&self, d: usize) -> (&[u32], &[u32]) {
        let r = d * self.shown..(d + 1) * self.shown;
        (&self.impressions[r.clone()], &self.clicks[r])
    }
}

impl SimulatedLogs {
    /// Writes the first file's impressions, one line per shown document of each session
    /// (`qid, session, position, doc, click, list_log_probability`, after
    /// [`IMPRESSIONS_HEADER`]), query by query in
    /// the file's order: each query simulated again from its own draws, so the log is the one
    /// whose sums are [`Self::clicks`] and memory holds one query's sessions at a time.
    pub fn write_impressions(
        &self,
        first: &Dataset,
        options: &LogOptions,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        writeln!(w, "{IMPRESSIONS_HEADER}")?;
        let mut record = Vec::new();
        for g in 0..first.n_groups() {
            record.clear();
            simulate_query(
                first,
                g,
                &self.first_scores,
                options,
                self.max_grade,
                self.key,
                Keep {
                    by_rank: false,
                    record: Some(&mut record),
                },
            );
            let qid = first.qids[g];
            for r in &record {
                writeln!(
                    w,
                    "{qid}\t{}\t{}\t{}\t{}\t{}",
                    r.session, r.position, r.doc, r.click as u8, r.list_log_probability
                )?;
            }
        }
        Ok(())
    }

    /// The JSON sidecar of the `index`-th file: which columns hold what, every parameter, and
    /// the file's statistics.
    pub fn sidecar(&self, index: usize, options: &LogOptions, source: &str) -> serde_json::Value {
        serde_json::json!({
            "format": SIDECAR_FORMAT,
            "version": 1,
            "source": source,
            "original_features": self.columns.impressions - 1,
            "columns": self.columns,
            "privileged_columns": self.columns.privileged(),
            "label_column": self.columns.conversions,
            "label": "y = 1[conversions > 0]; the grades stay the graded ground truth",
            "options": options,
            "click_model": options.click_model_summary(),
            "max_grade": self.max_grade,
            "conversion_scale": self.conversion_scale,
            "logging_ranker_graded_ndcg@10": self.logging_ranker_ndcg10,
            "stats": self.stats[index],
        })
    }
}

/// The JSON sidecar of a file whose log columns `data aggregate-logs` summed from the logs
/// `sources` (the same for every file of a run, so that the files are known to belong together).
pub fn logged_sidecar(
    columns: LogColumns,
    sources: &[String],
    source: &str,
    stats: &FileLogStats,
) -> serde_json::Value {
    serde_json::json!({
        "format": SIDECAR_FORMAT,
        "version": 1,
        "source": source,
        "original_features": columns.impressions - 1,
        "columns": columns,
        "privileged_columns": columns.privileged(),
        "label_column": columns.conversions,
        "label": "y = 1[conversions > 0]; the grades stay the graded ground truth",
        "options": {"aggregated_from": sources},
        "aggregated_from": sources,
        "click_model": format!("logged impressions ({})", sources.join(", ")),
        "stats": stats,
    })
}

/// The largest median dwell time of a click, seconds: a day.
pub const MAX_DWELL_SECONDS: f64 = 86_400.0;

/// The `format` field of a sidecar.
pub const SIDECAR_FORMAT: &str = "distillrank-simulated-logs";

/// Per-document sums over a query's impressions.
#[derive(Default, Clone)]
struct DocLog {
    impressions: u32,
    clicks: u32,
    position_sum: u64,
    dwell_sum: f64,
    /// Impressions and clicks at each displayed rank (kept for the first file only).
    by_rank: Vec<(u32, u32)>,
}

/// One query's simulated sessions.
struct QueryLog {
    docs: Vec<DocLog>,
    /// Impressions and clicks at each displayed rank.
    rank_clicks: Vec<u64>,
    rank_impressions: Vec<u64>,
}

/// Simulates the logs of `files` (train first: the logging ranker learns from it and the
/// conversion rate is set on it). Later files may have fewer (trailing, sparse) columns than the
/// first, never more. `names` names each file in errors.
pub fn simulate(
    files: &[&Dataset],
    names: &[String],
    options: &LogOptions,
) -> Result<SimulatedLogs> {
    simulate_with_progress(files, names, options, &mut |_, _| {})
}

/// [`simulate`], telling `progress(done, total)` the queries whose sessions are simulated so
/// far, over every file (a simulation of many sessions runs for minutes).
pub fn simulate_with_progress(
    files: &[&Dataset],
    names: &[String],
    options: &LogOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SimulatedLogs> {
    options.validate()?;
    let first = files
        .first()
        .ok_or_else(|| Error::Config("no file to simulate logs for".into()))?;
    let nf = first.n_features;
    for (file, name) in files.iter().zip(names) {
        if file.n_features > nf {
            return Err(Error::Config(format!(
                "{name} has {} features but the first file only {nf}",
                file.n_features
            )));
        }
        if file.grades.iter().all(|&g| g == 0) {
            return Err(Error::Data(format!(
                "{name}: no document has a grade above 0, so no document is attractive beyond click noise and nothing would convert; the simulator needs the graded relevance of a LETOR file"
            )));
        }
    }
    if let LoggingRanker::Feature { column } = options.logging_ranker {
        if column > nf {
            return Err(Error::Config(format!(
                "--logging-ranker feature:{column}: the data have columns 1..={nf}, and the logging ranker sorts by one of them"
            )));
        }
    }
    let max_grade = files
        .iter()
        .flat_map(|f| f.grades.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1);
    // No session shows more documents than the longest query has: the tables by rank are that
    // long, whatever `shown` asks (a table of documents x shown grew past memory, and the
    // results were those of the longest query's length).
    let longest = files
        .iter()
        .flat_map(|f| f.group_offsets.windows(2).map(|w| w[1] - w[0]))
        .max()
        .unwrap_or(1)
        .max(1);
    let shortened;
    let options = if options.shown > longest {
        shortened = LogOptions {
            shown: longest,
            ..options.clone()
        };
        &shortened
    } else {
        options
    };
    let ranker = fit_logging_ranker(first, options)?;
    let scale = ranker.score_scale(first);
    let key = Rng::stream(options.seed, 0x6c6f_6773).uniform().to_bits();

    let mut logs = Vec::with_capacity(files.len());
    let mut first_scores = Vec::new();
    let total: u64 = files.iter().map(|f| f.n_groups() as u64).sum();
    let mut before = 0;
    for file in files {
        let scores: Vec<f64> = ranker.scores(file).iter().map(|s| s / scale).collect();
        let by_rank = logs.is_empty();
        let mut told = |done: usize| progress(before + done as u64, total);
        logs.push(for_each_group_told(file, &mut told, |g| {
            simulate_query(
                file,
                g,
                &scores,
                options,
                max_grade,
                key,
                Keep::sums(by_rank),
            )
        }));
        before += file.n_groups() as u64;
        if by_rank {
            first_scores = scores;
        }
    }
    let shown = options.shown;
    let mut table = ClickTable {
        shown,
        sessions: options.sessions,
        impressions: Vec::with_capacity(first.n_docs() * shown),
        clicks: Vec::with_capacity(first.n_docs() * shown),
        examination: (options.click_model == ClickModel::Pbm).then(|| {
            (1..=shown)
                .map(|k| libm::pow(k as f64, -options.position_bias))
                .collect()
        }),
        group_offsets: first.group_offsets.clone(),
        qids: first.qids.clone(),
        from_rows: false,
        conversions: None,
        dwell_ms: None,
    };
    for doc in logs[0].iter_mut().flat_map(|q| q.docs.iter_mut()) {
        let ranks = std::mem::take(&mut doc.by_rank);
        table.impressions.extend(ranks.iter().map(|r| r.0));
        table.clicks.extend(ranks.iter().map(|r| r.1));
    }

    // c so that `conversion_rate` of the first file's clicks convert (in expectation; a grade
    // whose probability reaches 1 converts less than its share).
    let weight = |r: u8| libm::exp2(r as f64 - max_grade as f64);
    let (mut clicks, mut weighted) = (0f64, 0f64);
    for (g, query) in logs[0].iter().enumerate() {
        for (d, doc) in first.group(g).zip(&query.docs) {
            clicks += doc.clicks as f64;
            weighted += doc.clicks as f64 * weight(first.grades[d]);
        }
    }
    if clicks == 0.0 {
        return Err(Error::Data(format!(
            "{}: no click in {} sessions of {} queries ({}): there is nothing to log; raise --sessions or --click-noise",
            names[0],
            options.sessions,
            first.n_groups(),
            options.click_model_summary()
        )));
    }
    let conversion_scale = options.conversion_rate * clicks / weighted;

    let columns = LogColumns::after(nf);
    let mut datasets = Vec::with_capacity(files.len());
    let mut stats = Vec::with_capacity(files.len());
    for (file, query_logs) in files.iter().zip(&logs) {
        let conversions: Vec<Vec<u32>> = for_each_group(file, |g| {
            let mut rng = Rng::stream(key ^ 0x636f_6e76, file.qids[g]);
            file.group(g)
                .zip(&query_logs[g].docs)
                .map(|(d, doc)| {
                    let p = (conversion_scale * weight(file.grades[d])).min(1.0);
                    (0..doc.clicks).filter(|_| rng.uniform() < p).count() as u32
                })
                .collect()
        });
        let width = nf + LOG_COLUMNS;
        let mut features = Vec::with_capacity(file.n_docs() * width);
        for g in 0..file.n_groups() {
            for ((d, doc), &conv) in file.group(g).zip(&query_logs[g].docs).zip(&conversions[g]) {
                let row = file.row(d);
                features.extend_from_slice(row);
                features.extend(std::iter::repeat_n(0.0, nf - row.len()));
                let shown = doc.impressions.max(1) as f64;
                features.push(doc.impressions as f32);
                features.push(doc.clicks as f32);
                features.push((doc.clicks as f64 / shown) as f32);
                features.push(if doc.impressions > 0 {
                    (doc.position_sum as f64 / doc.impressions as f64) as f32
                } else {
                    (options.shown + 1) as f32
                });
                features.push(if doc.clicks > 0 {
                    (doc.dwell_sum / doc.clicks as f64) as f32
                } else {
                    0.0
                });
                features.push(conv as f32);
            }
        }
        stats.push(file_stats(file, query_logs, &conversions));
        datasets.push(Dataset {
            n_features: width,
            features: features.into(),
            grades: file.grades.clone(),
            group_offsets: file.group_offsets.clone(),
            qids: file.qids.clone(),
            source: file.source.clone(),
            feature_names: None,
        });
    }
    Ok(SimulatedLogs {
        datasets,
        columns,
        stats,
        logging_ranker_ndcg10: ranker.graded_ndcg10(first),
        conversion_scale,
        max_grade,
        clicks: table,
        first_scores,
        key,
    })
}

/// `data` with the six [`LogColumns`] appended from a logged click table of its documents
/// (`table`, as [`read_impressions`] reads a user's impressions log against `data`), as
/// [`simulate`] appends simulated ones: impressions, clicks, click-through rate, mean displayed
/// rank (`shown + 1` for a document never shown), mean dwell of its clicks in seconds (0 without a
/// click or without a `dwell` column) and conversions (0 without a `conversion` column). With the
/// statistics `data simulate-logs` reports of a file. The columns come after `original_features`
/// (at least the data's width; a narrower file's last columns are 0), as a training file's; a
/// document never shown has the mean rank `shown + 1`, with `shown` the deepest rank of all the
/// files summed together (at least the table's), so that it means the same in every split.
pub fn logged_columns(
    data: &Dataset,
    table: &ClickTable,
    original_features: usize,
    shown_in_all: usize,
) -> Result<(Dataset, FileLogStats)> {
    if table.group_offsets != data.group_offsets || table.qids != data.qids {
        return Err(Error::Data(
            "the click table was read against another file: its queries are not the data's".into(),
        ));
    }
    let nf = original_features.max(data.n_features);
    let width = nf + LOG_COLUMNS;
    let shown = table.shown;
    let mut features = Vec::with_capacity(data.n_docs() * width);
    let mut sums = StatsSums::new(shown);
    for g in 0..data.n_groups() {
        for d in data.group(g) {
            let (impressions, clicks) = table.of(d);
            let (mut n, mut c, mut rank_sum) = (0u64, 0u64, 0u64);
            for k in 0..shown {
                n += impressions[k] as u64;
                c += clicks[k] as u64;
                rank_sum += (k as u64 + 1) * impressions[k] as u64;
                sums.rank_impressions[k] += impressions[k] as u64;
                sums.rank_clicks[k] += clicks[k] as u64;
            }
            let conversions = table.conversions.as_ref().map_or(0, |v| v[d]);
            let dwell_ms = table.dwell_ms.as_ref().map_or(0, |v| v[d]);
            let row = data.row(d);
            features.extend_from_slice(row);
            features.extend(std::iter::repeat_n(0.0, nf - row.len()));
            features.push(n as f32);
            features.push(c as f32);
            features.push(if n > 0 {
                (c as f64 / n as f64) as f32
            } else {
                0.0
            });
            features.push(if n > 0 {
                (rank_sum as f64 / n as f64) as f32
            } else {
                (shown.max(shown_in_all) + 1) as f32
            });
            features.push(if c > 0 {
                (dwell_ms as f64 / 1000.0 / c as f64) as f32
            } else {
                0.0
            });
            features.push(conversions as f32);
            sums.document(data.grades[d], n, c, conversions as u64);
        }
        sums.end_query();
    }
    let stats = sums.stats(data);
    let logged = Dataset {
        n_features: width,
        features: features.into(),
        grades: data.grades.clone(),
        group_offsets: data.group_offsets.clone(),
        qids: data.qids.clone(),
        source: data.source.clone(),
        feature_names: None,
    };
    Ok((logged, stats))
}

/// Groups simulated between two calls of a progress callback: natively enough to keep every
/// core busy between them, on the page (one thread) few enough to move often.
const GROUPS_TOLD: usize = if cfg!(target_arch = "wasm32") {
    16
} else {
    1024
};

/// [`for_each_group`], telling `told(done)` the groups done after every [`GROUPS_TOLD`] of them
/// (from the calling thread: each chunk of groups runs in parallel natively, and each group's
/// result depends only on the group, so the chunks change no result).
fn for_each_group_told<T: Send>(
    data: &Dataset,
    told: &mut dyn FnMut(usize),
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    let n = data.n_groups();
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let end = (start + GROUPS_TOLD).min(n);
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            out.par_extend((start..end).into_par_iter().map(&f));
        }
        #[cfg(target_arch = "wasm32")]
        out.extend((start..end).map(&f));
        start = end;
        told(start);
    }
    out
}

/// `f(g)` for every group of `data`, in order; in parallel natively.
fn for_each_group<T: Send>(data: &Dataset, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        (0..data.n_groups()).into_par_iter().map(f).collect()
    }
    #[cfg(target_arch = "wasm32")]
    {
        (0..data.n_groups()).map(f).collect()
    }
}

/// What a simulation of a query keeps beyond its per-document sums.
struct Keep<'a> {
    /// Impressions and clicks at each rank.
    by_rank: bool,
    /// Every shown document of every session, in order.
    record: Option<&'a mut Vec<Impression>>,
}

impl Keep<'_> {
    fn sums(by_rank: bool) -> Self {
        Keep {
            by_rank,
            record: None,
        }
    }
}

/// The sessions of group `g`.
fn simulate_query(
    data: &Dataset,
    g: usize,
    scores: &[f64],
    options: &LogOptions,
    max_grade: u8,
    key: u64,
    keep: Keep<'_>,
) -> QueryLog {
    let Keep {
        by_rank,
        mut record,
    } = keep;
    let docs = data.group(g);
    let n = docs.len();
    let shown = options.shown.min(n);
    let mut rng = Rng::stream(key, data.qids[g]);
    let top = (1u64 << max_grade) as f64 - 1.0;
    let attractiveness: Vec<f64> = data.grades[docs.clone()]
        .iter()
        .map(|&r| {
            options.click_noise + (1.0 - options.click_noise) * ((1u64 << r) as f64 - 1.0) / top
        })
        .collect();
    let examination: Vec<f64> = (1..=shown)
        .map(|k| libm::pow(k as f64, -options.position_bias))
        .collect();
    let base = &scores[docs.clone()];
    let mut log = QueryLog {
        docs: vec![
            DocLog {
                by_rank: if by_rank {
                    vec![(0, 0); options.shown]
                } else {
                    Vec::new()
                },
                ..DocLog::default()
            };
            n
        ],
        rank_clicks: vec![0; options.shown],
        rank_impressions: vec![0; options.shown],
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut keys = vec![0f64; n];
    for session in 0..options.sessions {
        for (k, &s) in keys.iter_mut().zip(base) {
            *k = s + options.shuffle * rng.gumbel();
        }
        // The top `shown` by perturbed score, larger first; ties by document order.
        let by_key = |a: &usize, b: &usize| keys[*b].total_cmp(&keys[*a]).then(a.cmp(b));
        if shown < n {
            order.select_nth_unstable_by(shown - 1, by_key);
        }
        order[..shown].sort_unstable_by(by_key);
        // The list's probability under the logging policy, for the log (only when recording).
        let list_log_probability = match record {
            Some(_) => list_log_probability(base, &order[..shown], options.shuffle),
            None => 0.0,
        };
        let mut scanning = true;
        for (rank, &i) in order[..shown].iter().enumerate() {
            let doc = &mut log.docs[i];
            doc.impressions += 1;
            doc.position_sum += rank as u64 + 1;
            if let Some(at) = doc.by_rank.get_mut(rank) {
                at.0 += 1;
            }
            log.rank_impressions[rank] += 1;
            let clicked = match options.click_model {
                ClickModel::Pbm => rng.uniform() < examination[rank] * attractiveness[i],
                ClickModel::Cascade | ClickModel::Dcm => {
                    scanning && rng.uniform() < attractiveness[i]
                }
            };
            if let Some(record) = record.as_deref_mut() {
                record.push(Impression {
                    session: session as u32,
                    position: rank as u32 + 1,
                    doc: i as u32 + 1,
                    click: clicked,
                    list_log_probability,
                });
            }
            if clicked {
                doc.clicks += 1;
                if let Some(at) = doc.by_rank.get_mut(rank) {
                    at.1 += 1;
                }
                log.rank_clicks[rank] += 1;
                let grade = data.grades[docs.start + i] as f64;
                doc.dwell_sum +=
                    libm::exp(libm::log(options.dwell_seconds) + 0.5 * grade + 0.8 * rng.normal());
                scanning = match options.click_model {
                    ClickModel::Pbm => true,
                    ClickModel::Cascade => false,
                    ClickModel::Dcm => scanning && rng.uniform() < options.continue_after_click,
                };
            }
        }
    }
    log
}

fn file_stats(data: &Dataset, logs: &[QueryLog], conversions: &[Vec<u32>]) -> FileLogStats {
    let shown = logs.first().map_or(0, |l| l.rank_clicks.len());
    let mut sums = StatsSums::new(shown);
    for (g, (log, conv)) in logs.iter().zip(conversions).enumerate() {
        for k in 0..shown {
            sums.rank_clicks[k] += log.rank_clicks[k];
            sums.rank_impressions[k] += log.rank_impressions[k];
        }
        for ((d, doc), &c) in data.group(g).zip(&log.docs).zip(conv) {
            sums.document(
                data.grades[d],
                doc.impressions as u64,
                doc.clicks as u64,
                c as u64,
            );
        }
        sums.end_query();
    }
    sums.stats(data)
}

/// What [`FileLogStats`] sums over a file's documents, query by query.
struct StatsSums {
    rank_clicks: Vec<u64>,
    rank_impressions: Vec<u64>,
    /// (clicks, impressions) of each grade.
    by_grade: BTreeMap<u8, (u64, u64)>,
    impressions: u64,
    clicks: u64,
    conversions: u64,
    converted_docs: usize,
    converted_queries: usize,
    /// Whether the query being summed has a conversion.
    converted_here: bool,
}

impl StatsSums {
    fn new(shown: usize) -> StatsSums {
        StatsSums {
            rank_clicks: vec![0; shown],
            rank_impressions: vec![0; shown],
            by_grade: BTreeMap::new(),
            impressions: 0,
            clicks: 0,
            conversions: 0,
            converted_docs: 0,
            converted_queries: 0,
            converted_here: false,
        }
    }

    /// One document of the query being summed: its grade and its sums over the sessions.
    fn document(&mut self, grade: u8, impressions: u64, clicks: u64, conversions: u64) {
        let entry = self.by_grade.entry(grade).or_default();
        entry.0 += clicks;
        entry.1 += impressions;
        self.impressions += impressions;
        self.clicks += clicks;
        self.conversions += conversions;
        self.converted_docs += (conversions > 0) as usize;
        self.converted_here |= conversions > 0;
    }

    fn end_query(&mut self) {
        self.converted_queries += self.converted_here as usize;
        self.converted_here = false;
    }

    fn stats(self, data: &Dataset) -> FileLogStats {
        let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        FileLogStats {
            queries: data.n_groups(),
            docs: data.n_docs(),
            impressions: self.impressions,
            clicks: self.clicks,
            conversions: self.conversions,
            converted_docs: self.converted_docs,
            converted_queries: self.converted_queries,
            ctr_by_rank: self
                .rank_clicks
                .iter()
                .zip(&self.rank_impressions)
                .map(|(&c, &i)| ratio(c, i))
                .collect(),
            ctr_by_grade: self
                .by_grade
                .into_iter()
                .map(|(r, (c, i))| (r, ratio(c, i)))
                .collect(),
            conversion_rate: ratio(self.conversions, self.clicks),
        }
    }
}

/// A fitted logging ranker.
enum Ranker {
    /// Weights over the standardised signed-log1p features: `(column, mean, std, weight)`.
    Linear(Vec<(usize, f64, f64, f64)>),
    Feature(usize),
    Random,
}

fn signed_log1p(v: f32) -> f64 {
    let v = v as f64;
    v.signum() * libm::log1p(v.abs())
}

impl Ranker {
    fn scores(&self, data: &Dataset) -> Vec<f64> {
        match self {
            Ranker::Linear(weights) => (0..data.n_docs())
                .map(|d| {
                    let row = data.row(d);
                    weights
                        .iter()
                        .map(|&(j, mean, std, w)| {
                            w * (row.get(j).map_or(0.0, |&v| signed_log1p(v)) - mean) / std
                        })
                        .sum()
                })
                .collect(),
            Ranker::Feature(c) => (0..data.n_docs())
                .map(|d| data.row(d).get(c - 1).map_or(0.0, |&v| signed_log1p(v)))
                .collect(),
            Ranker::Random => vec![0.0; data.n_docs()],
        }
    }

    /// The standard deviation of the scores on `data` (1 when they are constant), so that the
    /// impressions' noise has the same meaning whatever the ranker.
    fn score_scale(&self, data: &Dataset) -> f64 {
        let s = self.scores(data);
        let n = s.len().max(1) as f64;
        let mean = s.iter().sum::<f64>() / n;
        let std = (s.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
        if std > 1e-12 {
            std
        } else {
            1.0
        }
    }

    fn graded_ndcg10(&self, data: &Dataset) -> Option<f64> {
        let scores: Vec<f32> = self.scores(data).iter().map(|&s| s as f32).collect();
        let gains: Vec<f32> = data.grades.iter().map(|&r| r as f32).collect();
        crate::metrics::mean_ndcg(
            10,
            &scores,
            &gains,
            &data.group_offsets,
            crate::metrics::IdcgZero::Exclude,
        )
    }
}

fn fit_logging_ranker(data: &Dataset, options: &LogOptions) -> Result<Ranker> {
    let fraction = match options.logging_ranker {
        LoggingRanker::Feature { column } => return Ok(Ranker::Feature(column)),
        LoggingRanker::Random => return Ok(Ranker::Random),
        LoggingRanker::Linear { fraction } => fraction,
    };
    let mut groups: Vec<usize> = (0..data.n_groups()).collect();
    Rng::stream(options.seed, 0x7261_6e6b).shuffle(&mut groups);
    let take = ((groups.len() as f64 * fraction).round() as usize).clamp(1, groups.len());
    let docs: Vec<usize> = groups[..take].iter().flat_map(|&g| data.group(g)).collect();
    let nf = data.n_features;
    let n = docs.len() as f64;
    let y: Vec<f64> = docs.iter().map(|&d| data.grades[d] as f64).collect();
    let mean_y = y.iter().sum::<f64>() / n;
    // Standardise; constant columns carry nothing and get no weight.
    let (mut sum, mut sum_sq) = (vec![0f64; nf], vec![0f64; nf]);
    for &d in &docs {
        for (j, &v) in data.row(d).iter().enumerate() {
            let v = signed_log1p(v);
            sum[j] += v;
            sum_sq[j] += v * v;
        }
    }
    let columns: Vec<(usize, f64, f64)> = (0..nf)
        .filter_map(|j| {
            let mean = sum[j] / n;
            let var = (sum_sq[j] / n - mean * mean).max(0.0);
            (var > 1e-12).then(|| (j, mean, var.sqrt()))
        })
        .collect();
    if columns.is_empty() {
        return Err(Error::Data(
            "every feature is constant on the logging ranker's queries: it cannot order documents; use --logging-ranker random or a larger linear:FRACTION".into(),
        ));
    }
    let d = columns.len();
    let z: Vec<f64> = docs
        .iter()
        .flat_map(|&doc| {
            let row = data.row(doc);
            columns
                .iter()
                .map(move |&(j, mean, std)| (signed_log1p(row[j]) - mean) / std)
        })
        .collect();
    // Gradient descent on the mean squared error; the step 1/d is safe for standardised
    // columns (the largest eigenvalue of their correlation matrix is at most d).
    let mut w = vec![0f64; d];
    let step = 1.0 / d as f64;
    for _ in 0..100 {
        let mut grad = vec![0f64; d];
        for (row, &target) in z.chunks_exact(d).zip(&y) {
            let residual = row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() - (target - mean_y);
            for (g, &a) in grad.iter_mut().zip(row) {
                *g += residual * a;
            }
        }
        for (wj, gj) in w.iter_mut().zip(&grad) {
            *wj -= step * gj / n;
        }
    }
    Ok(Ranker::Linear(
        columns
            .into_iter()
            .zip(w)
            .map(|((j, mean, std), w)| (j, mean, std, w))
            .collect(),
    ))
}

/// What makes an impressions log's sessions lists: each session's lines consecutive, each
/// document at most once in it and each rank at most once. A log appended twice, a session that
/// shows one document at two ranks, or two documents at one rank would otherwise count
/// impressions that never happened and move every click model's estimates. Ranks may skip (a
/// document of the log missing from the data file leaves a gap).
#[derive(Default)]
struct SessionList {
    /// The session being read: (group, session id, its first line).
    current: Option<(usize, u64, usize)>,
    /// Its documents and ranks so far, each with its line.
    docs: std::collections::HashMap<u64, usize>,
    ranks: std::collections::HashMap<u64, usize>,
    /// Every session read to its end, with its first line.
    ended: std::collections::HashMap<(usize, u64), usize>,
    /// The session's list probability (its log), where the log has the column: one value a
    /// session, as its first line gives it.
    probability: Option<f64>,
    /// Lines are a Parquet log's rows ([`place`]).
    from_parquet: bool,
}

/// Where line `line` of an impressions log's text is, in the log's own words: the line, or for
/// a Parquet log (read as text, row r on line r + 1) the row.
fn place(from_parquet: bool, line: usize) -> String {
    if from_parquet {
        format!("row {}", line.saturating_sub(1))
    } else {
        format!("line {line}")
    }
}

impl SessionList {
    /// Checks one impression (document `doc` at rank `position` of `session` of query `qid`,
    /// group `g`, at `line`, with the list's log probability where the log gives it); the reason
    /// in words when the session is not a list.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        g: usize,
        qid: u64,
        session: u64,
        doc: u64,
        position: u64,
        probability: Option<f64>,
        line: usize,
    ) -> std::result::Result<(), String> {
        let place = |line: usize| place(self.from_parquet, line);
        if self.current.map(|(cg, cs, _)| (cg, cs)) != Some((g, session)) {
            if let Some((cg, cs, first)) = self.current {
                self.ended.insert((cg, cs), first);
            }
            if let Some(&first) = self.ended.get(&(g, session)) {
                return Err(format!(
                    "session {session} of query {qid} began at {}, and other lines came between: a session is one list, its impressions on consecutive lines (a log appended to itself repeats every session)",
                    place(first)
                ));
            }
            self.current = Some((g, session, line));
            self.docs.clear();
            self.ranks.clear();
            self.probability = probability;
        }
        if let (Some(p), Some(first)) = (probability, self.probability) {
            if p != first {
                let began = self.current.map_or(line, |(_, _, at)| at);
                return Err(format!(
                    "list_log_probability {p} in session {session} of query {qid}, whose {} gave {first}: it is the probability of the session's whole list, one value a session",
                    place(began)
                ));
            }
        }
        if let Some(&other) = self.docs.get(&doc) {
            return Err(format!(
                "session {session} of query {qid} shows document {doc} again (first at {}): a session is a list, each document in it at most once",
                place(other)
            ));
        }
        if let Some(&other) = self.ranks.get(&position) {
            return Err(format!(
                "session {session} of query {qid} has a second document at rank {position} (the first at {}): a session is a list, each rank in it at most once",
                place(other)
            ));
        }
        self.docs.insert(doc, line);
        self.ranks.insert(position, line);
        Ok(())
    }
}

/// The impressions and clicks by displayed rank of `data`'s documents, from an impressions log
/// (`name` in errors): the header [`IMPRESSIONS_HEADER`], then one line per shown document.
/// Queries of the log that `data` lacks are refused by line, except those in `held_out` (queries
/// held out of the file as its test split). A log with no impression is refused. Every
/// refusal names the line and the field, with what was expected.
///
/// A document is its row within its query (1-based), or its docid comment in the data file:
/// `docids` gives the file's ([`docids_of`]), asked for at the first doc field that is not a
/// whole number. A log whose fourth column is named `docid` instead of `doc` names every
/// document by its docid, numbers included.
///
/// Each session must be a list (`SessionList`), refused by session and line otherwise. A log
/// may be gzip-compressed, and may start with a byte-order mark.
/// An impressions log's first line as a message shows it when it is not the header: what it
/// looks like (LETOR text, binary bytes), or a header of other names (`qid\tsession\tpos...`)
/// as it is; never other text, which could be a line of any file (`--impressions /etc/passwd`).
fn what_the_first_line_is(line: &str) -> String {
    let looks_binary = line
        .chars()
        .filter(|c| (c.is_control() && *c != '\t') || *c == '\u{fffd}')
        .count()
        > 2;
    if looks_binary {
        "binary bytes, not text".into()
    } else if line.contains(" qid:") || line.starts_with("qid:") {
        "a line of LETOR text (it holds qid:), not an impressions log's header".into()
    } else if line.trim().is_empty() {
        "an empty first line".into()
    } else if names(line.split('\t')) {
        format!("the header '{}'", crate::error::printable(line))
    } else if line.starts_with("qid")
        && names(line.split([',', ';', ' ']).filter(|f| !f.is_empty()))
    {
        "a header of names separated by commas or spaces: an impressions log's columns are separated by tabs".into()
    } else {
        "a first line that is no header of column names (not shown: it could be a line of any file)"
            .into()
    }
}

/// Whether `fields` are a header's column names: five or more (a log's first five are fixed),
/// each of letters, digits and `_`. One word alone is no header (a token, a key).
fn names<'a>(fields: impl Iterator<Item = &'a str>) -> bool {
    let fields: Vec<&str> = fields.collect();
    fields.len() >= 5
        && fields.iter().all(|name| {
            (1..=40).contains(&name.len())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

pub fn read_impressions(
    text: &[u8],
    name: &str,
    data: &Dataset,
    held_out: &[u64],
    examination: Option<Vec<f64>>,
    docids: &mut dyn FnMut() -> Result<DocIds>,
) -> Result<ClickTable> {
    let mut ids: Option<DocIds> = None;
    // Clicks by rank already summed (distillrank.dask.click_table's file) are taken as they are.
    if is_click_table(text) {
        let table = parse_click_table(
            name,
            text,
            "expected an impressions log, or the clicks by rank distillrank.dask.click_table writes",
        )?;
        return click_table_for(table, name, data, held_out, examination);
    }
    // A Parquet log is read as its text: row r on line r + 1, and named by its rows.
    let from_parquet = crate::data::parquet::is_parquet(text);
    let converted;
    let text = if from_parquet {
        converted =
            crate::data::parquet::impressions_as_text(std::path::Path::new(name), text.to_vec())?;
        &converted[..]
    } else {
        text
    };
    let place = |line: usize| place(from_parquet, line);
    // A gzip-compressed log is read as the LETOR reader reads a compressed file; a byte-order
    // mark is not part of the header.
    let unzipped;
    let text = if text.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(text), &mut out)
            .map_err(|e| {
                Error::Data(format!(
                    "{name}: gzip-compressed, and not a whole gzip stream ({e}): expected the impressions log, compressed or not"
                ))
            })?;
        unzipped = out;
        &unzipped[..]
    } else {
        text
    };
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let groups: std::collections::HashMap<u64, usize> =
        data.qids.iter().enumerate().map(|(g, &q)| (q, g)).collect();
    let held_out: std::collections::HashSet<u64> = held_out.iter().copied().collect();
    let bad =
        |line: usize, message: String| Error::Data(format!("{name}, {}: {message}", place(line)));
    let mut lines = text.split(|&b| b == b'\n').enumerate();
    let header = lines
        .next()
        .map(|(_, l)| String::from_utf8_lossy(l).trim_end().to_string());
    // The logging policy's list probabilities are a column of their own, where it is known. A
    // document column named `docid` matches every document by its docid comment, a whole number
    // too (MSLR's and Yahoo's docids are numbers); named `doc`, a whole number is a row.
    let by_docid = header
        .as_deref()
        .is_some_and(|h| h.split('\t').nth(3) == Some("docid"));
    let as_doc = header.as_deref().map(|h| {
        let mut columns: Vec<&str> = h.split('\t').collect();
        if by_docid {
            columns[3] = "doc";
        }
        columns.join("\t")
    });
    let optional = match as_doc
        .as_deref()
        .and_then(|h| h.strip_prefix(IMPRESSIONS_HEADER_WITHOUT_PROBABILITY))
        .map(optional_columns)
    {
        Some(Ok(optional)) => optional,
        Some(Err(why)) => return Err(bad(1, why)),
        None => {
            let expected = format!(
                "expected the header '{}' (tab-separated; docid may stand for doc), then any of {}",
                IMPRESSIONS_HEADER_WITHOUT_PROBABILITY.replace('\t', "\\t"),
                IMPRESSIONS_OPTIONAL_COLUMNS.join(", ")
            );
            return Err(bad(
                1,
                format!(
                    "{}: {expected}",
                    what_the_first_line_is(header.as_deref().unwrap_or(""))
                ),
            ));
        }
    };
    let width = 5 + optional.len();
    let column_of = |name: &str| optional.iter().position(|&c| c == name).map(|k| 5 + k);
    let (probability_at, conversion_at, dwell_at) = (
        column_of("list_log_probability"),
        column_of("conversion"),
        column_of("dwell"),
    );
    // (impressions, clicks) of each document at each rank, grown as ranks appear.
    let mut cells: Vec<Vec<(u32, u32)>> = vec![Vec::new(); data.n_docs()];
    // Each document's conversions and dwell (ms), where the log has the column.
    let mut conversions: Option<Vec<u32>> = conversion_at.map(|_| vec![0; data.n_docs()]);
    let mut dwell_ms: Option<Vec<u64>> = dwell_at.map(|_| vec![0; data.n_docs()]);
    let mut sessions: std::collections::HashMap<usize, std::collections::HashSet<u64>> =
        Default::default();
    let mut list = SessionList {
        from_parquet,
        ..SessionList::default()
    };
    let mut read = 0u64;
    // Impressions of the queries of the files read beside this one, skipped.
    let mut others = 0u64;
    for (i, raw) in lines {
        let line = i + 1;
        let raw = String::from_utf8_lossy(raw);
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = raw.split('\t').collect();
        if fields.len() != width {
            return Err(bad(
                line,
                format!(
                    "{} fields: expected {width} (the header's: {}), tab-separated",
                    fields.len(),
                    header.as_deref().unwrap_or("").replace('\t', ", ")
                ),
            ));
        }
        let mut probability = None;
        if let Some(k) = probability_at {
            let field = fields[k].trim();
            match field.parse::<f64>() {
                Ok(p) if p.is_finite() && p <= 0.0 => probability = Some(p),
                _ => {
                    return Err(bad(
                        line,
                        format!(
                            "list_log_probability '{}': expected the natural logarithm of a probability, a finite number <= 0",
                            crate::error::printable(field)
                        ),
                    ))
                }
            }
        }
        let number = |k: usize, what: &str, expected: &str| -> Result<u64> {
            fields[k].trim().parse::<u64>().map_err(|_| {
                bad(
                    line,
                    format!(
                        "{what} '{}': expected {expected}",
                        crate::error::printable(fields[k])
                    ),
                )
            })
        };
        let whole = "a whole number, 0 or more";
        let qid = number(0, "qid", whole)?;
        let session = number(1, "session", whole)?;
        let position = number(2, "position", "a displayed rank, a whole number from 1")?;
        let click = number(4, "click", whole)?;
        let Some(&g) = groups.get(&qid) else {
            if held_out.contains(&qid) {
                others += 1;
                continue;
            }
            return Err(bad(
                line,
                format!("qid {qid} is not a query of the data file"),
            ));
        };
        let n = data.group(g).len() as u64;
        // A whole number is the document's row within its query (but under a docid column);
        // anything else its docid comment in the data file.
        let field = fields[3].trim();
        let doc = match field.parse::<u64>().ok().filter(|_| !by_docid) {
            Some(row) => row,
            None => {
                if ids.is_none() {
                    ids = Some(docids()?);
                }
                let ids = ids.as_ref().expect("read above");
                if ids.is_empty() {
                    return Err(bad(
                        line,
                        format!(
                            "doc '{}': expected the document's row within its query (a whole number), or its docid, and the data file's lines have no docid comments (or its queries come from a .query file, whose lines carry no qid to match them by)",
                            crate::error::printable(field)
                        ),
                    ));
                }
                match ids.get(&qid).and_then(|q| q.get(field)) {
                    Some(&row) => row as u64 + 1,
                    None => {
                        return Err(bad(
                            line,
                            format!(
                                "doc '{}': query {qid} of the data file has no document with this docid",
                                crate::error::printable(field)
                            ),
                        ))
                    }
                }
            }
        };
        if doc == 0 || doc > n {
            return Err(bad(
                line,
                format!("doc {doc}: query {qid} has documents 1..={n} (rows within the query, in the file's order)"),
            ));
        }
        if position == 0 || position > n {
            return Err(bad(
                line,
                format!("position {position}: expected a displayed rank in 1..={n}, the documents of query {qid}"),
            ));
        }
        if click > 1 {
            return Err(bad(line, format!("click {click}: expected 0 or 1")));
        }
        let outcome = Outcome::read(&fields, conversion_at, dwell_at, click == 1)
            .map_err(|message| bad(line, message))?;
        list.check(g, qid, session, doc, position, probability, line)
            .map_err(|message| bad(line, message))?;
        let row = data.group(g).start + doc as usize - 1;
        if let Some(sums) = conversions.as_mut() {
            sums[row] = sums[row].checked_add(outcome.conversion).ok_or_else(|| {
                bad(
                    line,
                    "more than 2^32 - 1 conversions of one document".into(),
                )
            })?;
        }
        if let Some(sums) = dwell_ms.as_mut() {
            sums[row] = sums[row].saturating_add(outcome.dwell_ms);
        }
        let at = &mut cells[row];
        let k = position as usize - 1;
        if at.len() <= k {
            at.resize(k + 1, (0, 0));
        }
        at[k].0 += 1;
        at[k].1 += click as u32;
        sessions.entry(g).or_default().insert(session);
        read += 1;
    }
    if read == 0 {
        return Err(Error::Data(match others {
            0 => format!("{name}: no impression of the data's queries: the log is empty"),
            n => format!(
                "{name}: no impression of this data file's queries ({} queries, first qid {}): the log's {n} impressions are all of the other files' queries",
                data.n_groups(),
                data.qids.first().copied().unwrap_or_default()
            ),
        }));
    }
    let sessions = sessions.values().map(|s| s.len()).max().unwrap_or(0);
    let mut table = tabulate(&cells, sessions, data, examination, name)?;
    table.conversions = conversions;
    table.dwell_ms = dwell_ms;
    Ok(table)
}

/// The optional columns of an impressions log's header, after its first five (`rest`, with its
/// leading tab): each a name of [`IMPRESSIONS_OPTIONAL_COLUMNS`], at most once.
fn optional_columns(rest: &str) -> std::result::Result<Vec<&'static str>, String> {
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = rest.strip_prefix('\t') else {
        return Err(format!(
            "the header's fifth column is '{}': expected click",
            crate::error::printable(&format!("click{}", rest.split('\t').next().unwrap_or("")))
        ));
    };
    let mut found: Vec<&'static str> = Vec::new();
    for column in rest.split('\t') {
        let Some(&known) = IMPRESSIONS_OPTIONAL_COLUMNS.iter().find(|&&c| c == column) else {
            return Err(format!(
                "the header's column '{}': expected one of {} after click",
                crate::error::printable(column),
                IMPRESSIONS_OPTIONAL_COLUMNS.join(", ")
            ));
        };
        if found.contains(&known) {
            return Err(format!("the header names {known} twice"));
        }
        found.push(known);
    }
    Ok(found)
}

/// A click's outcome on one line of an impressions log: its conversion (0 or 1) and its dwell
/// in whole milliseconds, 0 where the log lacks the column.
struct Outcome {
    conversion: u32,
    dwell_ms: u64,
}

impl Outcome {
    /// Reads the `conversion` and `dwell` fields (at their columns, where the log has them) of a
    /// line whose click is `clicked`: a conversion or a dwell without a click is refused, as
    /// neither can follow an impression that was not clicked.
    fn read(
        fields: &[&str],
        conversion_at: Option<usize>,
        dwell_at: Option<usize>,
        clicked: bool,
    ) -> std::result::Result<Outcome, String> {
        let mut outcome = Outcome {
            conversion: 0,
            dwell_ms: 0,
        };
        if let Some(k) = conversion_at {
            let field = fields[k].trim();
            outcome.conversion = match field {
                "0" => 0,
                "1" => 1,
                _ => {
                    return Err(format!(
                        "conversion '{}': expected 0 or 1",
                        crate::error::printable(field)
                    ))
                }
            };
            if outcome.conversion == 1 && !clicked {
                return Err(
                    "conversion 1 on a row whose click is 0: a conversion follows a click".into(),
                );
            }
        }
        if let Some(k) = dwell_at {
            let field = fields[k].trim();
            let seconds = match field.parse::<f64>() {
                Ok(v) if (0.0..=MAX_LOGGED_DWELL_SECONDS).contains(&v) => v,
                _ => {
                    return Err(format!(
                        "dwell '{}': expected a click's dwell time in seconds, 0..={MAX_LOGGED_DWELL_SECONDS}",
                        crate::error::printable(field)
                    ))
                }
            };
            if seconds > 0.0 && !clicked {
                return Err(format!(
                    "dwell {seconds} on a row whose click is 0: a dwell time follows a click (0 without one)"
                ));
            }
            outcome.dwell_ms = libm::round(seconds * 1000.0) as u64;
        }
        Ok(outcome)
    }
}

/// Each query's documents by their docid comments: qid, then docid, then the 0-based row within
/// the query in the file's order ([`docids_of`]). What an impressions log that names documents by
/// docid is matched with.
pub type DocIds = std::collections::HashMap<u64, std::collections::HashMap<String, usize>>;

/// The docid comments of the LETOR text `text` of `name` ([`DocIds`]); empty when its lines have
/// none. A docid written twice in one query is refused by line: a log could not tell the two
/// apart.
pub fn docids_of(name: &std::path::Path, text: impl std::io::Read) -> Result<DocIds> {
    let mut ids = DocIds::new();
    let mut at: Option<(u64, usize)> = None;
    crate::data::letor::scan_letor(
        name,
        text,
        crate::data::letor::DEFAULT_MAX_FEATURE_INDEX,
        &mut |row| {
            let Some(qid) = row.qid else {
                return Ok(());
            };
            let index = match at {
                Some((q, i)) if q == qid => i + 1,
                _ => 0,
            };
            at = Some((qid, index));
            if let Some(id) = row.docid {
                let query = ids.entry(qid).or_default();
                if query.insert(id.to_string(), index).is_some() {
                    return Err(Error::parse(
                        name,
                        row.line,
                        0,
                        format!(
                            "docid {} appears twice in query {qid}: an impressions log could not tell the two documents apart",
                            crate::error::printable(id)
                        ),
                    ));
                }
            }
            Ok(())
        },
    )?;
    Ok(ids)
}

/// Each document's docid comment in the LETOR text `text` of `name`, in the file's order (None
/// for a line without one): what `data simulate-logs` writes back after each line.
pub fn docid_comments(
    name: &std::path::Path,
    text: impl std::io::Read,
) -> Result<Vec<Option<String>>> {
    let mut out = Vec::new();
    crate::data::letor::scan_letor(
        name,
        text,
        crate::data::letor::DEFAULT_MAX_FEATURE_INDEX,
        &mut |row| {
            out.push(row.docid.map(str::to_string));
            Ok(())
        },
    )?;
    Ok(out)
}

/// The clicks by rank of `data`'s documents when each row was shown once, at `positions[d]`
/// (1-based), and clicked or not as `clicks[d]` (0 or 1) says: the shape LightGBM's `position`
/// and XGBoost's unbiased ranking take, one impression per row and each query one list (`name`
/// in errors). Every refusal names the row (1-based) and the field, with what was expected.
pub fn clicks_of_rows(
    data: &Dataset,
    positions: &[u64],
    clicks: &[f64],
    name: &str,
) -> Result<ClickTable> {
    let n_docs = data.n_docs();
    for (what, len) in [("positions", positions.len()), ("clicks", clicks.len())] {
        if len != n_docs {
            return Err(Error::Data(format!(
                "{name}: {len} {what} for {n_docs} rows: expected one per row"
            )));
        }
    }
    // Every position within its list and every click 0 or 1 first: a position past its list is
    // named as such, not as the memory it would take.
    for g in 0..data.n_groups() {
        let docs = data.group(g);
        let n = docs.len() as u64;
        for d in docs {
            // Each field named as the door names it: the positions, and the clicks as y.
            let bad = |field: &str, m: String| Error::Data(format!("{field}, row {}: {m}", d + 1));
            let position = positions[d];
            if position == 0 || position > n {
                return Err(bad(
                    "position",
                    format!(
                        "{position}: expected a displayed rank in 1..={n}, the rows of query {}",
                        data.qids[g]
                    ),
                ));
            }
            let click = clicks[d];
            if click != 0.0 && click != 1.0 {
                return Err(bad("y", format!("click {click}: expected 0 or 1")));
            }
        }
    }
    // The clicks by rank hold a cell per row and rank down to the deepest position: a long
    // list shown deep is refused by its size before anything is allocated.
    let deepest = positions.iter().copied().max().unwrap_or(1) as u128;
    let cells_bytes: u128 = positions.iter().map(|&p| p as u128).sum::<u128>() * 8;
    crate::memory::check_fits(
        cells_bytes + n_docs as u128 * deepest * 8,
        &format!("{name}'s clicks by rank ({n_docs} rows, positions down to {deepest})"),
        "give the positions of the top of each list only (the rows shown first), or fewer rows",
    )?;
    let mut cells: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_docs];
    for (d, cell) in cells.iter_mut().enumerate() {
        let k = positions[d] as usize - 1;
        cell.resize(k + 1, (0, 0));
        cell[k] = (1, clicks[d] as u32);
    }
    // A query's sessions are its rows at position 1: a query without one would train on nothing.
    for g in 0..data.n_groups() {
        let docs = data.group(g);
        if !docs.clone().any(|d| positions[d] == 1) {
            return Err(Error::Data(format!(
                "position, rows {}..={}: query {} has no row at position 1, and a query's sessions are its rows at position 1: give each displayed list from its top",
                docs.start + 1,
                docs.end,
                data.qids[g]
            )));
        }
    }
    let mut table = tabulate(&cells, 1, data, None, name)?;
    table.from_rows = true;
    Ok(table)
}

/// The table of each document's (impressions, clicks) at each rank it was shown at.
/// A click table summed elsewhere (on a cluster, by [`read_impressions`] on each part of a log)
/// as `data`'s: each of its queries takes its documents' rows by qid, and a query of the table
/// that `data` lacks must be one of `held_out`, as a log's would. The result is what
/// [`read_impressions`] gives on the log itself: ranks past the last one `data`'s documents were
/// shown at are left out, and the sessions are the table's, or, where some of its queries are
/// held out, the most impressions at rank 1 of a query of `data` (one per session).
fn click_table_for(
    table: ClickTable,
    name: &str,
    data: &Dataset,
    held_out: &[u64],
    examination: Option<Vec<f64>>,
) -> Result<ClickTable> {
    let groups: std::collections::HashMap<u64, usize> =
        data.qids.iter().enumerate().map(|(g, &q)| (q, g)).collect();
    let held_out: std::collections::HashSet<u64> = held_out.iter().copied().collect();
    let mut cells: Vec<Vec<(u32, u32)>> = vec![Vec::new(); data.n_docs()];
    let mut conversions: Option<Vec<u32>> =
        table.conversions.as_ref().map(|_| vec![0; data.n_docs()]);
    let mut dwell_ms: Option<Vec<u64>> = table.dwell_ms.as_ref().map(|_| vec![0; data.n_docs()]);
    let mut some_held_out = false;
    for (tg, &qid) in table.qids.iter().enumerate() {
        let rows = table.group_offsets[tg]..table.group_offsets[tg + 1];
        let Some(&g) = groups.get(&qid) else {
            if held_out.contains(&qid) {
                some_held_out = true;
                continue;
            }
            return Err(Error::Data(format!(
                "{name}: query {qid} of the click table is not a query of the data file"
            )));
        };
        if rows.len() != data.group(g).len() {
            return Err(Error::Data(format!(
                "{name}: query {qid} has {} documents in the click table and {} in the data file: the table was summed against another file",
                rows.len(),
                data.group(g).len()
            )));
        }
        for (d, row) in data.group(g).zip(rows) {
            if let (Some(to), Some(from)) = (conversions.as_mut(), table.conversions.as_ref()) {
                to[d] = from[row];
            }
            if let (Some(to), Some(from)) = (dwell_ms.as_mut(), table.dwell_ms.as_ref()) {
                to[d] = from[row];
            }
            let (impressions, clicks) = table.of(row);
            let shown = impressions
                .iter()
                .rposition(|&n| n > 0)
                .map_or(0, |k| k + 1);
            cells[d] = impressions[..shown]
                .iter()
                .copied()
                .zip(clicks[..shown].iter().copied())
                .collect();
        }
    }
    if cells.iter().all(Vec::is_empty) {
        return Err(Error::Data(format!(
            "{name}: no impression of the data's queries: the click table is empty"
        )));
    }
    let sessions = if some_held_out {
        (0..data.n_groups())
            .map(|g| {
                data.group(g)
                    .map(|d| cells[d].first().map_or(0, |c| c.0 as usize))
                    .sum()
            })
            .max()
            .unwrap_or(0)
    } else {
        table.sessions
    };
    let mut out = tabulate(&cells, sessions, data, examination, name)?;
    out.conversions = conversions;
    out.dwell_ms = dwell_ms;
    Ok(out)
}

fn tabulate(
    cells: &[Vec<(u32, u32)>],
    sessions: usize,
    data: &Dataset,
    examination: Option<Vec<f64>>,
    name: &str,
) -> Result<ClickTable> {
    let shown = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
    crate::memory::check_fits(
        data.n_docs() as u128 * shown as u128 * 8,
        &format!(
            "{name}'s clicks by rank ({} documents, ranks down to {shown})",
            data.n_docs()
        ),
        "keep the top of each displayed list (the ranks shown first) in the log",
    )?;
    let mut table = ClickTable {
        shown,
        sessions,
        impressions: Vec::with_capacity(data.n_docs() * shown),
        clicks: Vec::with_capacity(data.n_docs() * shown),
        examination: match examination {
            // The simulator's examination covers the ranks it showed; a log past them was not
            // the simulation's.
            Some(e) if e.len() < shown => {
                return Err(Error::Data(format!(
                    "{name}: the log shows documents at rank {shown}, past the {} ranks whose examination its sidecar gives: the log and the sidecar do not belong together",
                    e.len()
                )))
            }
            Some(mut e) => {
                e.truncate(shown);
                Some(e)
            }
            None => None,
        },
        group_offsets: data.group_offsets.clone(),
        qids: data.qids.clone(),
        from_rows: false,
        conversions: None,
        dwell_ms: None,
    };
    for at in cells {
        for k in 0..shown {
            let (n, c) = at.get(k).copied().unwrap_or((0, 0));
            table.impressions.push(n);
            table.clicks.push(c);
        }
    }
    Ok(table)
}
