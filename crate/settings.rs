//! The bounds of every numeric setting, in one table: each setting's name (as its flag spells it),
//! the `setup.json` fields it sets, the range it must lie in, and why.
//!
//! Every door reads the same table. The CLI's flags parse through [`Bound::parse`], so a value
//! out of range is refused before anything runs, naming the flag; `setup.json` (from the CLI, the
//! page or Python) is checked field by field with [`check_setup_fields`]. `tests/flags.rs` walks
//! the CLI's own definition and every numeric field of a setup, and fails on a numeric flag or
//! field that has no row here.
//!
//! With [`OTHER_FLAGS`] (the settings that are not numbers) the table also says which flag fills
//! which `setup.json` field, and a setup's command line and its differences from the defaults
//! are written from it ([`crate::setup::Setup::command_line`]).
//!
//! The ranges keep every run finite and every allocation sized: a size's bound is where a single
//! setting would already ask for more than any machine has (the product of several sizes is
//! checked again where it is allocated), and a weight's is where the losses would overflow.

use crate::error::{shown, Error, Result};

/// One numeric setting's range.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The name as the CLI spells the flag, without the dashes (`batch-docs`).
    pub name: &'static str,
    /// Whether `name` is a flag of the CLI (a few settings live in `setup.json` only).
    pub flag: bool,
    /// The `setup.json` fields this setting fills, as paths from the top (`data.logs.sessions`).
    pub fields: &'static [&'static str],
    pub min: f64,
    pub max: f64,
    /// The range excludes `min` (`(0, 1]`), or `max` (`[0, 1)`).
    pub min_open: bool,
    pub max_open: bool,
    /// A whole number.
    pub integer: bool,
    /// Why the range is what it is, for the message.
    pub why: &'static str,
}

const fn whole(
    name: &'static str,
    fields: &'static [&'static str],
    min: u64,
    max: u64,
    why: &'static str,
) -> Bound {
    Bound {
        name,
        flag: true,
        fields,
        min: min as f64,
        max: max as f64,
        min_open: false,
        max_open: false,
        integer: true,
        why,
    }
}

/// A real number in `[min, max]`; `open` marks which ends are excluded.
const fn real(
    name: &'static str,
    fields: &'static [&'static str],
    (min, max): (f64, f64),
    (min_open, max_open): (bool, bool),
    why: &'static str,
) -> Bound {
    Bound {
        name,
        flag: true,
        fields,
        min,
        max,
        min_open,
        max_open,
        integer: false,
        why,
    }
}

const fn setup_only(bound: Bound) -> Bound {
    Bound {
        flag: false,
        ..bound
    }
}

const CLOSED: (bool, bool) = (false, false);
const OPEN: (bool, bool) = (true, true);
const OPEN_BELOW: (bool, bool) = (true, false);

const SEED: &str = "any 64-bit seed";
const SIZE: &str = "a larger value alone would ask for more memory than any machine has";
const PROBABILITY: &str = "a probability";

/// Every numeric setting. A new numeric flag or `setup.json` field needs a row here
/// (`tests/flags.rs` fails without one).
#[rustfmt::skip]
pub const BOUNDS: &[Bound] = &[
    // Synthetic data (data synth, train, compare, sweep).
    whole("queries", &["data.source.synthetic.options.queries"], 1, 10_000_000, SIZE),
    whole("valid-queries", &["data.source.synthetic.valid_queries"], 1, 10_000_000, SIZE),
    whole("test-queries", &["data.source.synthetic.test_queries"], 1, 10_000_000, SIZE),
    whole("min-docs", &["data.source.synthetic.options.min_docs"], 1, 100_000, SIZE),
    whole("max-docs", &["data.source.synthetic.options.max_docs"], 1, 100_000, SIZE),
    whole("regular", &["data.source.synthetic.options.regular"], 1, 100_000, SIZE),
    whole("privileged-count", &["data.source.synthetic.options.privileged"], 1, 100_000, SIZE),
    real("privileged-strength", &["data.source.synthetic.options.privileged_strength"], (0.0, 1.0), CLOSED, "a share of the relevance signal"),
    real("privileged-correlation", &["data.source.synthetic.options.privileged_correlation"], (0.0, 1.0), CLOSED, "a share of variance"),
    real("noise", &["data.source.synthetic.options.noise", "objectives.data.synthetic.noise"], (0.0, 1000.0), CLOSED, "a standard deviation; the signal has unit variance"),
    setup_only(real("privileged_noise", &["data.source.synthetic.options.privileged_noise"], (0.0, 1000.0), CLOSED, "a standard deviation; the signal has unit variance")),
    real("query-spread", &["data.source.synthetic.options.query_spread"], (0.0, 1000.0), CLOSED, "a standard deviation; the signal has unit variance"),
    whole("synth-seed", &["data.source.synthetic.options.seed", "objectives.data.synthetic.seed"], 0, u64::MAX, SEED),
    // Labelling and filtering.
    real("tau-target", &["data.tau_target"], (-1e6, 1e6), CLOSED, "a threshold on the grade scale"),
    real("t", &["data.t"], (0.0, 1e6), OPEN_BELOW, "a temperature"),
    whole("min-group-size", &["data.min_group_size"], 0, 1_000_000, "documents in a query"),
    whole("data-seed", &["data.data_seed"], 0, u64::MAX, SEED),
    setup_only(real("tau-priv", &[], (-1e6, 1e6), CLOSED, "a threshold on the grade scale")),
    whole("label-threshold", &["objectives.data.files.threshold", "objectives.data.mq2008.threshold"], 1, 31, "a LETOR grade"),
    // Simulated logs.
    whole("sessions", &["data.logs.sessions"], 1, 1_000_000, "impressions of each query"),
    whole("shown", &["data.logs.shown"], 1, 100_000, "documents shown per impression"),
    real("position-bias", &["data.logs.position_bias"], (0.0, 100.0), CLOSED, "an exponent on 1 / rank"),
    real("continue-after-click", &["data.logs.continue_after_click"], (0.0, 1.0), CLOSED, PROBABILITY),
    real("click-noise", &["data.logs.click_noise"], (0.0, 1.0), CLOSED, PROBABILITY),
    real("shuffle", &["data.logs.shuffle"], (0.0, 1000.0), CLOSED, "a scale on standardised scores"),
    setup_only(real("logging-ranker fraction", &["data.logs.logging_ranker.fraction"], (0.0, 1.0), OPEN_BELOW, "a share of the features")),
    real("conversion-rate", &["data.logs.conversion_rate"], (0.0, 1.0), OPEN_BELOW, "a probability; at 0 no click converts"),
    real("dwell-seconds", &["data.logs.dwell_seconds"], (0.0, 86_400.0), OPEN_BELOW, "seconds, a day at most"),
    whole("log-seed", &["data.logs.seed"], 0, u64::MAX, SEED),
    // Training.
    whole("seeds", &["seeds", "objectives.seeds"], 1, 10_000, "each seed trains every method once more"),
    whole("first-seed", &["first_seed", "objectives.first_seed"], 0, u64::MAX, SEED),
    whole("seed", &[], 0, u64::MAX, SEED),
    real("alpha", &["alpha"], (0.0, 1.0), OPEN, "it weighs the data loss against the teacher loss"),
    whole("epochs", &["epochs", "objectives.epochs"], 1, 100_000, "passes over the training data"),
    whole("patience", &["patience", "objectives.patience"], 1, 100_000, "epochs without a better validation NDCG"),
    real("lr", &["lr", "objectives.lr"], (0.0, 10.0), OPEN_BELOW, "Adam's step size"),
    real("dual-rate-factor", &["dual_rate_factor", "objectives.dual_rate_factor"], (0.0, 1e9), CLOSED, "a factor on the learning rate"),
    whole("widths", &["widths", "objectives.widths"], 1, 1_000_000, SIZE),
    whole("teacher-widths", &["teacher_widths"], 1, 1_000_000, SIZE),
    whole("batch-docs", &["batch_docs"], 1, 10_000_000, SIZE),
    whole("teachers", &["teachers"], 2, 1024, "multi-teacher PFD needs two teachers or more"),
    whole("jobs", &[], 1, 1024, "jobs side by side"),
    // Ranking Distillation.
    whole("rd-k", &["rd.k"], 1, 100_000, "documents per group"),
    real("rd-lambda", &["rd.lambda"], (0.0, 1e6), OPEN_BELOW, "a temperature; larger overflows the weights"),
    real("rd-mu", &["rd.mu"], (0.0, 1e6), CLOSED, "a sharpness; larger overflows the weights"),
    real("rd-alpha", &["rd.alpha_rd"], (0.0, 1000.0), OPEN_BELOW, "a loss weight; larger diverges"),
    setup_only(whole("rd hybrid_epochs", &["rd.hybrid_epochs"], 0, 100_000, "epochs")),
    real("rd-teacher-factor", &["rd_teacher_factor"], (1.0, 1000.0), CLOSED, "the teacher's size over the student's"),
    // The global objectives.
    whole("features", &["objectives.data.synthetic.features"], 1, 100_000, SIZE),
    whole("train-examples", &["objectives.data.synthetic.train"], 1, 100_000_000, SIZE),
    whole("valid-examples", &["objectives.data.synthetic.valid"], 1, 100_000_000, SIZE),
    whole("test-examples", &["objectives.data.synthetic.test"], 1, 100_000_000, SIZE),
    real("positive-rate", &["objectives.data.synthetic.positive_rate"], (0.0, 1.0), OPEN, "a share of the examples"),
    whole("batch-size", &["objectives.batch_size"], 1, 10_000_000, SIZE),
    real("initial-lambda", &["objectives.initial_lambda"], (0.0, 1e6), CLOSED, "a Lagrange multiplier"),
    real("at-precision", &["objectives.at_precision"], (0.0, 1.0), OPEN, "a precision"),
    real("at-recall", &["objectives.at_recall"], (0.0, 1.0), OPEN, "a recall"),
    // Sweeps: each value is checked again as the swept setting.
    real("values", &[], (-1e9, 1e9), CLOSED, "each value is then checked as the setting it sweeps"),
    // Benchmarks.
    whole("docs-per-group", &[], 1, 100_000, SIZE),
    whole("groups-per-batch", &[], 1, 100_000, SIZE),
    whole("steps", &[], 1, 1_000_000, "timed steps"),
    whole("warmup", &[], 0, 1_000_000, "untimed steps"),
    whole("repeat", &[], 1, 1_000_000, "timed repetitions"),
];

/// The settings that are not numbers, each with the flag that sets it and the `setup.json` field
/// it fills. With the numeric rows of [`BOUNDS`] they write a setup's command line
/// ([`crate::setup::Setup::command_line`]) and its list of differences from the defaults.
pub const OTHER_FLAGS: &[(&str, &str)] = &[
    ("kind", "data.source.synthetic.options.kind"),
    ("privileged", "data.privileged"),
    ("click-model", "data.logs.click_model"),
    ("logging-ranker", "data.logs.logging_ranker"),
    ("log-labels", "data.log_labels"),
    ("prepared-cache", "data.prepared_cache"),
    ("methods", "methods"),
    ("loss", "loss"),
    ("objective", "objective"),
    ("rd-weighting", "rd.weighting"),
    ("idcg-zero", "idcg_zero"),
    ("backend", "backend"),
];

/// The prefix of the fields of the global objectives' setup ([`crate::setup::ObjectivesSetup`])
/// in the table: `objectives.batch_size` is its `batch_size`.
pub const OBJECTIVES: &str = "objectives.";

/// Every flag that fills a field of a comparison's `setup.json`, with the field: the numeric ones
/// of [`BOUNDS`] in its order, then [`OTHER_FLAGS`] (the objectives' setup's fields aside).
pub fn flag_fields() -> impl Iterator<Item = (&'static str, &'static str)> {
    BOUNDS
        .iter()
        .filter(|b| b.flag)
        .flat_map(|b| b.fields.iter().map(move |field| (b.name, *field)))
        .filter(|(_, field)| !field.starts_with(OBJECTIVES))
        .chain(OTHER_FLAGS.iter().copied())
}

/// The row of a setting, by its flag's name.
pub fn bound(name: &str) -> Option<&'static Bound> {
    BOUNDS.iter().find(|b| b.name == name)
}

/// The row that fills a `setup.json` field (`data.logs.sessions`; an array's elements share
/// the array's path).
pub fn bound_of_field(path: &str) -> Option<&'static Bound> {
    BOUNDS.iter().find(|b| b.fields.contains(&path))
}

/// Thousands separated: 10,000,000.
fn grouped(v: f64) -> String {
    if v.abs() >= 1e12 || v.fract() != 0.0 {
        return shown(v);
    }
    let digits = format!("{}", v.abs() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

impl Bound {
    pub fn contains(&self, v: f64) -> bool {
        let above = if self.min_open {
            v > self.min
        } else {
            v >= self.min
        };
        let below = if self.max_open {
            v < self.max
        } else {
            v <= self.max
        };
        above && below && (!self.integer || v.fract() == 0.0)
    }

    /// `1..=10,000` or `(0, 1]`.
    pub fn range(&self) -> String {
        if self.integer {
            if self.max == u64::MAX as f64 {
                return format!("{}..={}", grouped(self.min), u64::MAX);
            }
            return format!("{}..={}", grouped(self.min), grouped(self.max));
        }
        format!(
            "{}{}, {}{}",
            if self.min_open { '(' } else { '[' },
            grouped(self.min),
            grouped(self.max),
            if self.max_open { ')' } else { ']' }
        )
    }

    /// What a value must be: "a whole number in 1..=10,000 (each seed trains ...)".
    pub fn expected(&self) -> String {
        let kind = if self.integer {
            "a whole number"
        } else {
            "a finite number"
        };
        format!("{kind} in {} ({})", self.range(), self.why)
    }

    /// How a message names the setting: `--seeds` for a flag, the field otherwise.
    pub fn spelled(&self) -> String {
        if self.flag {
            format!("--{}", self.name)
        } else {
            self.name.to_string()
        }
    }

    /// Checks a value, with a message naming the setting.
    pub fn check(&self, v: f64) -> Result<()> {
        if self.contains(v) {
            return Ok(());
        }
        Err(Error::Config(format!(
            "{} = {}: expected {}",
            self.spelled(),
            shown(v),
            self.expected()
        )))
    }

    /// Parses a command-line value as `T` and checks it, for the CLI's value parsers: the
    /// message says what was expected (clap names the flag beside it).
    pub fn parse<T: Number>(&self, text: &str) -> std::result::Result<T, String> {
        let value: T = text
            .trim()
            .parse()
            .map_err(|_| format!("expected {}", self.expected()))?;
        if self.contains(value.as_f64()) {
            Ok(value)
        } else {
            Err(format!("expected {}", self.expected()))
        }
    }
}

/// The numeric types of settings.
pub trait Number: std::str::FromStr + Copy + Send + Sync + 'static {
    fn as_f64(self) -> f64;
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
numbers!(usize, u64, u32, u8, f64, f32);

/// Checks a setting by name, with a message naming it; a name without a row is a programming
/// error reported as such.
pub fn check(name: &str, v: f64) -> Result<()> {
    match bound(name) {
        Some(b) => b.check(v),
        None => Err(Error::Config(format!("no bounds are known for '{name}'"))),
    }
}

/// The numeric fields of a setup (given as its JSON), each checked against its row: the first
/// out of range is refused, naming the field, its flag and the range. Fields without a row are
/// left alone here (`tests/flags.rs` makes sure there are none).
pub fn check_setup_fields(setup: &serde_json::Value) -> Result<()> {
    check_fields(setup, "")
}

/// [`check_setup_fields`] for the global objectives' setup: its fields' rows are under
/// [`OBJECTIVES`]; a refusal names the field as its JSON spells it.
pub fn check_objectives_fields(setup: &serde_json::Value) -> Result<()> {
    check_fields(setup, OBJECTIVES)
}

/// Checks every number of `setup` against the row of its path, the rows' paths starting with
/// `prefix`.
fn check_fields(setup: &serde_json::Value, prefix: &str) -> Result<()> {
    let mut numbers = Vec::new();
    numeric_fields(setup, String::new(), &mut numbers);
    for (path, v) in numbers {
        if let Some(b) = bound_of_field(&format!("{prefix}{path}")) {
            if !b.contains(v) {
                let flag = if b.flag {
                    format!(" ({})", b.spelled())
                } else {
                    String::new()
                };
                return Err(Error::Config(format!(
                    "setup field {path}{flag} = {}: expected {}",
                    shown(v),
                    b.expected()
                )));
            }
        }
    }
    Ok(())
}

/// Every number in a JSON value, with its path (`rd.k`; array elements take the array's path).
pub fn numeric_fields(value: &serde_json::Value, path: String, out: &mut Vec<(String, f64)>) {
    match value {
        serde_json::Value::Number(n) => out.push((path, n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::Array(items) => {
            for item in items {
                numeric_fields(item, path.clone(), out);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, v) in fields {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                numeric_fields(v, inner, out);
            }
        }
        _ => {}
    }
}
