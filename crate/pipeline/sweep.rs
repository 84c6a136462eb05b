//! One setting swept over values, every chosen method at each value: the PFD paper's Figure 3
//! (alpha) and Figure 5 (tau_target: positive sparsity; tau_priv: how discriminative z is), the
//! number of privileged features, the synthetic data's query spread (positive sparsity at fixed
//! label noise), and the simulated logs' sessions, position bias and conversion rate.
//!
//! Every door sweeps here: the CLI's `sweep` ([`sweep`], then its files from a [`Sweep`]), Python's
//! `sweep(setup, param, values)` (the same, returning [`Sweep::json`]) and the page's alpha sweep
//! (its pool runs the comparison of each value's setup, [`SweepParam::at`], and
//! [`Sweep::json`] summarises them). The runs, the paired tests, the gains and the tables come
//! from here, so every door gives the same numbers.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::preparation::{prepare, PreparedData};
use super::report::TESTS_SEED;
use super::store::Store;
use super::Reporter;
use crate::error::{shown, Error, Result};
use crate::metrics::plus_minus;
use crate::ranking::distill::Method;
use crate::ranking::experiment::{Comparison, UNMEASURED};
use crate::setup::{DataSource, Setup};
use crate::stats::PairedTest;

/// The setting a sweep moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SweepParam {
    /// Weight of the data loss in PFD Eq. 1 (Figure 3).
    Alpha,
    /// Gumbel threshold of the labels: higher is sparser positives (Figure 5, left).
    TauTarget,
    /// Threshold of the discriminative z: every feature regular, z = 1[t r + G1 > t tau_priv + G0]
    /// (Figure 5, right).
    TauPriv,
    /// Number of privileged features, the top-N by |correlation| with y.
    PrivilegedCount,
    /// Per-query relevance shift of the synthetic data: larger leaves fewer positive groups at the
    /// same label noise (the other way to sparser positives).
    QuerySpread,
    /// Simulated logs (privileged: logs): impressions per query; fewer is a sparser y.
    Sessions,
    /// Simulated logs: PBM's position bias eta.
    PositionBias,
    /// Simulated logs: the share of clicks that convert; lower is a sparser y.
    ConversionRate,
}

impl SweepParam {
    pub const ALL: [SweepParam; 8] = [
        SweepParam::Alpha,
        SweepParam::TauTarget,
        SweepParam::TauPriv,
        SweepParam::PrivilegedCount,
        SweepParam::QuerySpread,
        SweepParam::Sessions,
        SweepParam::PositionBias,
        SweepParam::ConversionRate,
    ];

    /// Its name, which is also its setting's in the table of settings (`tau-target`).
    pub fn name(self) -> &'static str {
        match self {
            SweepParam::Alpha => "alpha",
            SweepParam::TauTarget => "tau-target",
            SweepParam::TauPriv => "tau-priv",
            SweepParam::PrivilegedCount => "privileged-count",
            SweepParam::QuerySpread => "query-spread",
            SweepParam::Sessions => "sessions",
            SweepParam::PositionBias => "position-bias",
            SweepParam::ConversionRate => "conversion-rate",
        }
    }

    /// The setting the sweep sets at each value: its own, or the privileged split that the
    /// discriminative threshold and the count of top features are written into.
    pub fn sets(self) -> &'static str {
        match self {
            SweepParam::TauPriv | SweepParam::PrivilegedCount => "privileged",
            other => other.name(),
        }
    }

    pub fn parse(name: &str) -> Option<SweepParam> {
        SweepParam::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the parameter changes which training groups are positive (then the table shows
    /// how many are).
    pub fn moves_positives(self) -> bool {
        matches!(
            self,
            SweepParam::TauTarget
                | SweepParam::QuerySpread
                | SweepParam::Sessions
                | SweepParam::PositionBias
                | SweepParam::ConversionRate
        )
    }

    /// Whether the parameter is one of the log simulator's.
    pub fn of_logs(self) -> bool {
        matches!(
            self,
            SweepParam::Sessions | SweepParam::PositionBias | SweepParam::ConversionRate
        )
    }

    /// Checks a sweep of `values` over `setup` before anything is loaded: each value is a value
    /// of the swept setting (its row of the table of settings), and the setup has what the
    /// parameter moves (synthetic data for the query spread, simulated logs for the logs'
    /// parameters).
    pub fn check(self, setup: &Setup, values: &[f64]) -> Result<()> {
        let name = self.name();
        if values.is_empty() {
            return Err(Error::Config(format!(
                "a sweep of {name} needs at least one value"
            )));
        }
        let bound = crate::settings::bound(name).ok_or_else(|| {
            Error::Config(format!("no bounds are known for the swept setting {name}"))
        })?;
        if let Some(&bad) = values.iter().find(|&&v| !bound.contains(v)) {
            return Err(Error::Config(format!(
                "--values: {name} = {}: {}",
                shown(bad),
                bound.refusal(bad)
            )));
        }
        // A value given twice trains the same models twice, as a method listed twice would.
        if let Some((i, &again)) = values
            .iter()
            .enumerate()
            .find(|&(i, v)| values[..i].contains(v))
        {
            return Err(Error::Config(format!(
                "--values: {name} = {} is given twice (values {} and {}): give each value once",
                shown(again),
                values.iter().position(|v| *v == again).unwrap_or(0) + 1,
                i + 1
            )));
        }
        // A setting no part of the comparison reads: every value would train the same models.
        if let Some((_, why)) = setup.not_read().into_iter().find(|(flag, _)| *flag == name) {
            return Err(Error::Config(format!(
                "a sweep of {name}: {why}, so every value would train the same models"
            )));
        }
        for &value in values {
            self.at(setup, value)?;
        }
        // Logs already simulated into the files cannot be simulated again at each value.
        #[cfg(not(target_arch = "wasm32"))]
        if let (true, DataSource::Files { train, .. }) = (self.of_logs(), &setup.data.source) {
            let sidecar = super::store::sidecar_path(std::path::Path::new(train));
            if sidecar.exists() {
                return Err(Error::Config(format!(
                    "{train} already holds simulated logs ({}): to sweep {name}, give the original LETOR files and the logs are simulated at each value",
                    sidecar.display()
                )));
            }
        }
        Ok(())
    }

    /// `setup` with the swept setting at `value`.
    pub fn at(self, setup: &Setup, value: f64) -> Result<Setup> {
        let name = self.name();
        let mut setup = setup.clone();
        let data = &mut setup.data;
        if self.of_logs() && data.privileged.as_deref().map(str::trim) != Some("logs") {
            return Err(Error::Config(format!(
                "{name} is a parameter of the simulated logs: add --privileged logs"
            )));
        }
        match self {
            SweepParam::Alpha => setup.alpha = value,
            SweepParam::TauTarget => data.tau_target = Some(value),
            SweepParam::TauPriv => data.privileged = Some(format!("discriminative:{value}")),
            SweepParam::PrivilegedCount => {
                data.privileged = Some(format!("top:{}", value as usize))
            }
            SweepParam::QuerySpread => match &mut data.source {
                DataSource::Synthetic { options, .. } => options.query_spread = value,
                _ => {
                    return Err(Error::Config(
                        "query-spread sweeps the synthetic data: drop --train".into(),
                    ))
                }
            },
            SweepParam::Sessions => data.logs.sessions = value as usize,
            SweepParam::PositionBias => data.logs.position_bias = value,
            SweepParam::ConversionRate => data.logs.conversion_rate = value,
        }
        Ok(setup)
    }
}

/// One value of a sweep: its comparison and its training split's positive groups.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub value: f64,
    pub comparison: Comparison,
    pub positive_groups: usize,
    pub train_groups: usize,
}

/// A sweep's results: each value's comparison, and from them the paired tests, the gains, the
/// tables and `sweep.json`.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub param: SweepParam,
    /// The methods, in the setup's order.
    pub methods: Vec<Method>,
    pub seeds: usize,
    pub points: Vec<SweepPoint>,
    /// The paired tests at each value, computed once ([`Sweep::tests`]): the table, the CSV, the
    /// gain lines and the JSON all read them.
    tests: std::sync::OnceLock<Vec<Vec<PairedTest>>>,
}

/// What a sweep of `param` over `setup` warns of before its first value, in every door (the
/// CLI, Python, Dask's client): the settings no comparison of the sweep reads, as a comparison
/// names them, and a value the setup gives the swept setting, replaced at every point (the
/// command line refuses its flag beside --param; a setup is told).
pub fn warnings(setup: &Setup, param: SweepParam) -> Vec<String> {
    let mut out = setup.unused_settings();
    let sets = param.sets();
    if let Some((_, value, _)) = setup.differences().into_iter().find(|(f, _, _)| f == sets) {
        out.push(format!(
            "--{sets} {value} is not used: the sweep of {} sets {} at each of its values",
            param.name(),
            if sets == param.name() {
                "it"
            } else {
                "the privileged split"
            }
        ));
    }
    out
}

/// Runs every method of `setup` at each of `values` of `param`: the data prepared again at each
/// value (from `store`), then compared with `compare` (the door's way of running the jobs: the
/// CLI's and Python's `native::pipeline::compare`, on the setup's jobs side by side).
pub fn sweep(
    setup: &Setup,
    param: SweepParam,
    values: &[f64],
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
    compare: &mut dyn FnMut(&PreparedData, &Setup, &mut dyn Reporter) -> Result<Comparison>,
) -> Result<Sweep> {
    param.check(setup, values)?;
    crate::pipeline::preparation::check_one_split(&setup.data)?;
    for sentence in warnings(setup, param) {
        reporter.warn(&sentence);
    }
    let mut points = Vec::with_capacity(values.len());
    for &value in values {
        reporter.note(&format!("{} = {value}", param.name()));
        let at = param.at(setup, value)?;
        let data = prepare(&at.data, store, true, reporter)?;
        let train = &data.prepared.train;
        let (positive_groups, train_groups) = (train.positive_groups(), train.n_groups());
        points.push(SweepPoint {
            value,
            comparison: compare(&data, &at, reporter)?,
            positive_groups,
            train_groups,
        });
    }
    Ok(Sweep::new(param, setup, points))
}

/// One method's figure at one value, with its spread: the students' test NDCG@8 mean and std.
type Stat = Option<(f64, f64)>;

/// A method's students' test NDCG@8 along the sweep: (value, mean, std) where it was measured.
pub type NdcgLine = (Method, Vec<(f64, f64, f64)>);

/// A method's gain in % over no distillation along the sweep: (value, gain, the paired test's
/// 95% interval in %) where it was measured.
pub type GainLine = (Method, Vec<(f64, f64, Option<(f64, f64)>)>);

impl Sweep {
    /// The sweep of `setup`'s methods over `param` from each value's comparison.
    pub fn new(param: SweepParam, setup: &Setup, points: Vec<SweepPoint>) -> Sweep {
        Sweep {
            param,
            methods: setup.methods.clone(),
            seeds: setup.seeds,
            points,
            tests: std::sync::OnceLock::new(),
        }
    }

    /// The paired tests at each value (every gain over no distillation, and those the methods'
    /// entries ask for), Holm-corrected within each value's table; computed at the first call.
    pub fn tests(&self) -> &[Vec<PairedTest>] {
        self.tests.get_or_init(|| {
            self.points
                .iter()
                .map(|p| p.comparison.tests(TESTS_SEED))
                .collect()
        })
    }

    /// `m`'s students' test NDCG@8 on the comparison's verdict metric: on y, or on the graded
    /// relevance when methods learn from clicks ([`Comparison::verdict_metric`]).
    fn stat(c: &Comparison, m: Method) -> Stat {
        let r = c.get(m)?;
        match c.verdict_metric() {
            "graded_ndcg@8" => r.student_graded_ndcg(8),
            _ => r.student_ndcg(8),
        }
    }

    /// The metric of the tables, the plots and the gains: the comparisons' verdict metric.
    pub fn metric(&self) -> &'static str {
        self.points
            .first()
            .map_or("ndcg@8", |p| p.comparison.verdict_metric())
    }

    /// The metric in words: "NDCG@8", or "graded NDCG@8" when methods learn from clicks.
    pub fn metric_label(&self) -> &'static str {
        match self.metric() {
            "graded_ndcg@8" => "graded NDCG@8",
            _ => "NDCG@8",
        }
    }

    /// The gain in % of `m`'s mean test NDCG@8 over the baseline's at one value.
    fn gain(c: &Comparison, m: Method) -> Option<f64> {
        match (Sweep::stat(c, m), Sweep::stat(c, Method::BASELINE)) {
            (Some((v, _)), Some((b, _))) if b > 0.0 && m != Method::BASELINE => {
                Some(100.0 * (v - b) / b)
            }
            _ => None,
        }
    }

    /// `m`'s paired test against the baseline on the verdict metric of `c` among `tests`.
    fn test_of(c: &Comparison, tests: &[PairedTest], m: Method) -> Option<PairedTest> {
        let metric = c.verdict_metric();
        tests
            .iter()
            .find(|t| t.metric == metric && t.a == m.name() && t.b == Method::BASELINE.name())
            .cloned()
    }

    /// The report's table: each value's students' test NDCG@8 (mean ± std), with the gain over
    /// no distillation and its Holm-corrected p-value, and the positive training groups where
    /// the parameter moves them.
    pub fn table(&self) -> String {
        let name = self.param.name();
        let tests = self.tests();
        let show_positives = self.param.moves_positives();
        let mut table = format!("| {name} |");
        if show_positives {
            table.push_str(" positive training groups |");
        }
        let label = self.metric_label();
        for m in &self.methods {
            let _ = write!(table, " {m} {label} |");
        }
        table.push_str("\n|---:|");
        table.push_str(&"---:|".repeat(self.methods.len() + show_positives as usize));
        table.push('\n');
        let p_text = |t: Option<PairedTest>| match t.and_then(|t| t.p_holm.or(t.p)) {
            Some(p) if p < 0.001 => ", p < 0.001".to_string(),
            Some(p) => format!(", p = {p:.3}"),
            None => String::new(),
        };
        for (point, tests) in self.points.iter().zip(tests) {
            let c = &point.comparison;
            let _ = write!(table, "| {} |", point.value);
            if show_positives {
                let share = 100.0 * point.positive_groups as f64 / point.train_groups.max(1) as f64;
                let _ = write!(
                    table,
                    " {} of {} ({share:.0}%) |",
                    point.positive_groups, point.train_groups
                );
            }
            for &m in &self.methods {
                match (Sweep::stat(c, m), Sweep::gain(c, m)) {
                    (Some((mean, std)), Some(g)) => {
                        let p = p_text(Sweep::test_of(c, tests, m));
                        let _ = write!(table, " {} ({g:+.2}%{p}) |", plus_minus(mean, std));
                    }
                    (Some((mean, std)), None) => {
                        let _ = write!(table, " {} |", plus_minus(mean, std));
                    }
                    (None, _) => table.push_str(" n/a |"),
                }
            }
            table.push('\n');
        }
        table
    }

    /// The ground truth and the teachers: the students' NDCG@8 on the graded relevance, and each
    /// teacher's NDCG@8 on y, at each value.
    pub fn graded_table(&self) -> String {
        let name = self.param.name();
        let with_teachers: Vec<Method> = self
            .methods
            .iter()
            .copied()
            .filter(|&m| {
                self.points.iter().any(|p| {
                    p.comparison
                        .get(m)
                        .is_some_and(|r| r.runs.iter().any(|run| !run.teachers.is_empty()))
                })
            })
            .collect();
        let mut more = format!("| {name} |");
        for m in &self.methods {
            let _ = write!(more, " {m} graded NDCG@8 |");
        }
        for m in &with_teachers {
            let _ = write!(more, " {m} teacher NDCG@8 |");
        }
        more.push_str("\n|---:|");
        more.push_str(&"---:|".repeat(self.methods.len() + with_teachers.len()));
        more.push('\n');
        let cell = |v: Stat| match v {
            Some((mean, std)) => format!(" {} |", plus_minus(mean, std)),
            None => " n/a |".to_string(),
        };
        for point in &self.points {
            let c = &point.comparison;
            let _ = write!(more, "| {} |", point.value);
            for &m in &self.methods {
                more.push_str(&cell(c.get(m).and_then(|r| r.student_graded_ndcg(8))));
            }
            for &m in &with_teachers {
                more.push_str(&cell(c.get(m).and_then(|r| r.teacher_ndcg(8))));
            }
            more.push('\n');
        }
        more
    }

    /// `sweep.csv`: a row per value and method.
    pub fn csv(&self) -> String {
        let name = self.param.name();
        let tests = self.tests();
        let metric = self.metric();
        let mut csv =
            format!("param,value,method,{metric}_mean,{metric}_std,gain_percent,gain_p_holm\n");
        let figure = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map_or(String::new(), |v| v.to_string())
        };
        for (point, tests) in self.points.iter().zip(tests) {
            let c = &point.comparison;
            for &m in &self.methods {
                let stat = Sweep::stat(c, m);
                let _ = writeln!(
                    csv,
                    "{name},{},{m},{},{},{},{}",
                    point.value,
                    figure(stat.map(|s| s.0)),
                    figure(stat.map(|s| s.1)),
                    figure(Sweep::gain(c, m)),
                    figure(Sweep::test_of(c, tests, m).and_then(|t| t.p_holm))
                );
            }
        }
        csv
    }

    /// Each method's students' test NDCG@8 at each value where it was measured: (value, mean,
    /// std), the lines of the sweep's plot.
    pub fn ndcg_lines(&self) -> Vec<NdcgLine> {
        self.methods
            .iter()
            .map(|&m| {
                let points = self
                    .points
                    .iter()
                    .filter_map(|p| {
                        Sweep::stat(&p.comparison, m).map(|(mean, std)| (p.value, mean, std))
                    })
                    .collect();
                (m, points)
            })
            .collect()
    }

    /// Each method's gain in % over no distillation at each value where it was measured, with
    /// the paired test's 95% interval of the difference as a share of no distillation's NDCG@8
    /// (the band of the paper's Figure 5): (value, gain, interval).
    pub fn gain_lines(&self) -> Vec<GainLine> {
        let tests = self.tests();
        self.methods
            .iter()
            .filter(|&&m| m != Method::BASELINE)
            .map(|&m| {
                let points = self
                    .points
                    .iter()
                    .zip(tests)
                    .filter_map(|(p, tests)| {
                        let gain = Sweep::gain(&p.comparison, m)?;
                        let base = Sweep::stat(&p.comparison, Method::BASELINE)?.0;
                        let ci = Sweep::test_of(&p.comparison, tests, m)
                            .and_then(|t| t.ci95)
                            .map(|[lo, hi]| (100.0 * lo / base, 100.0 * hi / base));
                        Some((p.value, gain, ci))
                    })
                    .collect();
                (m, points)
            })
            .collect()
    }

    /// `sweep.json`: the parameter and its values, `config` (the setup's configuration), and at
    /// each value its paired tests (and their sentences), its positive training groups and each
    /// method's figures.
    pub fn json(&self, config: serde_json::Value) -> serde_json::Value {
        let tests = self.tests();
        serde_json::json!({
            "param": self.param.name(),
            "values": self.points.iter().map(|p| p.value).collect::<Vec<_>>(),
            "config": config,
            "points": self.points.iter().zip(tests).map(|(p, tests)| serde_json::json!({
                "value": p.value,
                "tests": tests,
                // Each test on the verdict metric in words, with its interval and what the run
                // could detect.
                "metric": p.comparison.verdict_metric(),
                "sentences": tests
                    .iter()
                    .filter(|t| t.metric == p.comparison.verdict_metric())
                    .map(crate::stats::sentence)
                    .collect::<Vec<_>>(),
                "positive_groups": p.positive_groups,
                "train_groups": p.train_groups,
                "methods": p.comparison.methods.iter().map(|r| {
                    let stat = r.student_ndcg(8);
                    let mut ndcg = serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1)});
                    if stat.is_none() {
                        ndcg["unmeasured"] = UNMEASURED.into();
                    }
                    let graded = r.student_graded_ndcg(8);
                    let teacher = r.teacher_ndcg(8);
                    (r.method.name().to_string(), serde_json::json!({
                        "ndcg@8": ndcg,
                        "gain_percent": Sweep::gain(&p.comparison, r.method),
                        "graded_ndcg@8": {"mean": graded.map(|s| s.0), "std": graded.map(|s| s.1)},
                        "teacher_ndcg@8": {"mean": teacher.map(|s| s.0), "std": teacher.map(|s| s.1)},
                    }))
                }).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// The report's words below the tables.
    pub fn caption(&self) -> String {
        format!(
            "Student test {}{} at the epoch with the best validation NDCG@8, mean ± std over {} seeds; in brackets, the gain over no-distillation and its paired randomization test over the test queries (Holm-corrected within each value; sweep.json's `tests` has every test with its 95% interval and the smallest difference the run could detect). The gain plot's bands are those intervals.",
            self.metric_label(),
            match self.metric() {
                "graded_ndcg@8" => " (the true relevance the clicks stand for: methods learn from clicks)",
                _ => "",
            },
            self.seeds
        )
    }
}
