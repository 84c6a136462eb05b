//! `distillrank sweep`: one parameter over a range, every chosen method at each value — the PFD
//! paper's Figure 3 (alpha) and Figure 5 (tau_target: positive sparsity; tau_priv: how
//! discriminative z is), the number of privileged features, the synthetic data's query spread
//! (positive sparsity at fixed label noise), and the simulated logs' sessions, position bias and
//! conversion rate.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::bounded;

use distillrank::distill::Method;
use distillrank::experiment::Comparison;
use distillrank::metrics::plus_minus;
use distillrank::stats::PairedTest;
use distillrank::{Error, Result};

use super::compare::{reproduce_command, run_comparison, write, write_report, ExperimentArgs};
use super::plot::{lines, Series};
use super::progress::Output;
use super::DataArgs;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
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
    /// Simulated logs (--privileged logs): impressions per query; fewer is a sparser y.
    Sessions,
    /// Simulated logs: PBM's position bias eta.
    PositionBias,
    /// Simulated logs: the share of clicks that convert; lower is a sparser y.
    ConversionRate,
}

impl SweepParam {
    /// Whether the parameter changes which training groups are positive (then the table shows
    /// how many are).
    fn moves_positives(self) -> bool {
        matches!(
            self,
            SweepParam::TauTarget
                | SweepParam::QuerySpread
                | SweepParam::Sessions
                | SweepParam::PositionBias
                | SweepParam::ConversionRate
        )
    }
    /// The setting it sweeps, as the table of settings names it.
    fn setting(self) -> &'static str {
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
    /// Whether the parameter is one of the log simulator's.
    fn of_logs(self) -> bool {
        matches!(
            self,
            SweepParam::Sessions | SweepParam::PositionBias | SweepParam::ConversionRate
        )
    }
}

#[derive(Args, Clone, Debug)]
pub struct SweepArgs {
    /// The parameter to sweep.
    #[arg(long, value_enum)]
    pub param: SweepParam,
    /// Its values, comma-separated.
    #[arg(value_parser = bounded::<f64>("values"), long, value_delimiter = ',', action = clap::ArgAction::Set, required = true)]
    pub values: Vec<f64>,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// Jobs (a method at a seed, or the methods of a seed that share a teacher) trained side by
    /// side on the CPU engine (default: one per core); the results are the same for any number.
    #[arg(value_parser = bounded::<usize>("jobs"), long)]
    pub jobs: Option<usize>,
    /// Directory for sweep.md, sweep.json, sweep.csv and sweep.svg.
    #[arg(long, default_value = "out/sweep")]
    pub out: PathBuf,
}

pub fn run(args: &SweepArgs, out: &Output) -> Result<()> {
    // The run owns its folder: locked, and cleared of the previous run's outputs.
    let mut folder = distillrank::output::RunFolder::claim(&args.out)?;
    let started = std::time::Instant::now();
    let mut base = args.experiment.config(out)?;
    let name = args
        .param
        .to_possible_value()
        .expect("every parameter has a name")
        .get_name()
        .to_string();
    // Each value must be a value of the swept setting: its row of the table of settings.
    let bound = distillrank::settings::bound(args.param.setting()).ok_or_else(|| {
        Error::Config(format!("no bounds are known for the swept setting {name}"))
    })?;
    if let Some(&bad) = args.values.iter().find(|&&v| !bound.contains(v)) {
        return Err(Error::Config(format!(
            "--values: {name} = {}: expected {}",
            distillrank::error::shown(bad),
            bound.expected()
        )));
    }
    if args.param == SweepParam::QuerySpread && args.data.files.train.is_some() {
        return Err(Error::Config(
            "query-spread sweeps the synthetic data: drop --train".into(),
        ));
    }
    if args.param.of_logs() {
        if args.data.privileged.as_deref().map(str::trim) != Some("logs") {
            return Err(Error::Config(format!(
                "{name} is a parameter of the simulated logs: add --privileged logs"
            )));
        }
        if let Some(train) = &args.data.files.train {
            if distillrank::pipeline::sidecar_path(train).exists() {
                return Err(Error::Config(format!(
                    "{} already holds simulated logs ({}): to sweep {name}, give the original LETOR files and the logs are simulated at each value",
                    train.display(),
                    distillrank::pipeline::sidecar_path(train).display()
                )));
            }
        }
    }
    let mut points: Vec<(f64, Comparison)> = Vec::new();
    // Positive and all training groups at each value.
    let mut positives: Vec<(usize, usize)> = Vec::new();
    for &value in &args.values {
        let mut data_args = args.data.clone();
        match args.param {
            SweepParam::Alpha => base.train.alpha = value,
            SweepParam::TauTarget => data_args.tau_target = Some(value),
            SweepParam::TauPriv => data_args.privileged = Some(format!("discriminative:{value}")),
            SweepParam::PrivilegedCount => {
                data_args.privileged = Some(format!("top:{}", value as usize))
            }
            SweepParam::QuerySpread => data_args.synth.query_spread = value,
            SweepParam::Sessions => data_args.logs.sessions = value as usize,
            SweepParam::PositionBias => data_args.logs.position_bias = value,
            SweepParam::ConversionRate => data_args.logs.conversion_rate = value,
        }
        out.note(format!("{name} = {value}"));
        let data = super::commands::prepare_data(&data_args, true, out)?;
        let train = &data.prepared.train;
        positives.push((train.positive_groups(), train.n_groups()));
        let setup = args.experiment.setup(data_args.setup()?)?;
        let setup = match args.param {
            SweepParam::Alpha => distillrank::setup::Setup {
                alpha: value,
                ..setup
            },
            _ => setup,
        };
        points.push((
            value,
            run_comparison(&data, &setup, &base.engine, args.jobs, out)?,
        ));
    }
    let seconds = started.elapsed().as_secs_f64();
    // The paired tests at each value (every gain over no-distillation, PFD against GenD and
    // self-distillation), Holm-corrected within each value's table.
    let tests: Vec<Vec<PairedTest>> = points
        .iter()
        .map(|(_, c)| c.tests(distillrank::pipeline::TESTS_SEED))
        .collect();
    let test_of = |tests: &[PairedTest], m: Method| {
        tests
            .iter()
            .find(|t| {
                t.metric == "ndcg@8" && t.a == m.name() && t.b == Method::NoDistillation.name()
            })
            .cloned()
    };
    let p_text = |t: Option<PairedTest>| match t.and_then(|t| t.p_holm.or(t.p)) {
        Some(p) if p < 0.001 => ", p < 0.001".to_string(),
        Some(p) => format!(", p = {p:.3}"),
        None => String::new(),
    };

    let methods: Vec<Method> = base.methods.clone();
    let stat = |c: &Comparison, m: Method| c.get(m).and_then(|r| r.student_ndcg(8));
    let gain = |c: &Comparison, m: Method| match (stat(c, m), stat(c, Method::NoDistillation)) {
        (Some((v, _)), Some((b, _))) if b > 0.0 && m != Method::NoDistillation => {
            Some(100.0 * (v - b) / b)
        }
        _ => None,
    };
    let show_positives = args.param.moves_positives();
    let mut table = format!("| {name} |");
    if show_positives {
        table.push_str(" positive training groups |");
    }
    for m in &methods {
        let _ = write!(table, " {m} NDCG@8 |");
    }
    table.push_str("\n|---:|");
    table.push_str(&"---:|".repeat(methods.len() + show_positives as usize));
    table.push('\n');
    let mut csv =
        String::from("param,value,method,ndcg@8_mean,ndcg@8_std,gain_percent,gain_p_holm\n");
    for (((value, c), &(positive, groups)), tests) in points.iter().zip(&positives).zip(&tests) {
        let _ = write!(table, "| {value} |");
        if show_positives {
            let share = 100.0 * positive as f64 / groups.max(1) as f64;
            let _ = write!(table, " {positive} of {groups} ({share:.0}%) |");
        }
        for &m in &methods {
            let figure = |v: Option<f64>| {
                v.filter(|v| v.is_finite())
                    .map_or(String::new(), |v| v.to_string())
            };
            let (mean, std) = (stat(c, m).map(|s| s.0), stat(c, m).map(|s| s.1));
            match (stat(c, m), gain(c, m)) {
                (Some((mean, std)), Some(g)) => {
                    let p = p_text(test_of(tests, m));
                    let _ = write!(table, " {} ({g:+.2}%{p}) |", plus_minus(mean, std));
                }
                (Some((mean, std)), None) => {
                    let _ = write!(table, " {} |", plus_minus(mean, std));
                }
                (None, _) => table.push_str(" n/a |"),
            }
            let _ = writeln!(
                csv,
                "{name},{value},{m},{},{},{},{}",
                figure(mean),
                figure(std),
                figure(gain(c, m)),
                figure(test_of(tests, m).and_then(|t| t.p_holm))
            );
        }
        table.push('\n');
    }
    // The ground truth and the teachers: students' NDCG@8 on the graded relevance, and each
    // teacher's NDCG@8 on y.
    let with_teachers: Vec<Method> = methods
        .iter()
        .copied()
        .filter(|&m| {
            points.iter().any(|(_, c)| {
                c.get(m)
                    .is_some_and(|r| r.runs.iter().any(|run| !run.teachers.is_empty()))
            })
        })
        .collect();
    let mut more = format!("| {name} |");
    for m in &methods {
        let _ = write!(more, " {m} graded NDCG@8 |");
    }
    for m in &with_teachers {
        let _ = write!(more, " {m} teacher NDCG@8 |");
    }
    more.push_str("\n|---:|");
    more.push_str(&"---:|".repeat(methods.len() + with_teachers.len()));
    more.push('\n');
    let cell = |v: Option<(f64, f64)>| match v {
        Some((mean, std)) => format!(" {} |", plus_minus(mean, std)),
        None => " n/a |".to_string(),
    };
    for (value, c) in &points {
        let _ = write!(more, "| {value} |");
        for &m in &methods {
            more.push_str(&cell(c.get(m).and_then(|r| r.student_graded_ndcg(8))));
        }
        for &m in &with_teachers {
            more.push_str(&cell(c.get(m).and_then(|r| r.teacher_ndcg(8))));
        }
        more.push('\n');
    }
    let series: Vec<Series> = methods
        .iter()
        .map(|&m| Series {
            name: m.to_string(),
            points: points
                .iter()
                .filter_map(|(v, c)| stat(c, m).map(|s| (*v, s.0)))
                .collect(),
            // Mean ± std over the seeds; none with one seed (no spread to draw).
            band: points
                .iter()
                .filter_map(|(_, c)| stat(c, m))
                .map(|(mean, std)| std.is_finite().then_some((mean - std, mean + std)))
                .collect(),
        })
        .collect();
    lines(
        &folder.file("sweep.svg"),
        &format!(
            "Student test NDCG@8 against {name} (mean ± std, {} seed(s))",
            base.seeds
        ),
        &name,
        "test NDCG@8",
        &series,
        plotters::prelude::SeriesLabelPosition::LowerRight,
    )?;
    // The paper's Figure 5 shows the relative gain over no-distillation; the band is the paired
    // test's 95% interval of the difference, as a share of no-distillation's NDCG@8.
    let gains: Vec<Series> = methods
        .iter()
        .filter(|&&m| m != Method::NoDistillation)
        .map(|&m| {
            // (value, gain %, the gain's 95% interval in %) where the gain is measured.
            type Measured = (f64, f64, Option<(f64, f64)>);
            let measured: Vec<Measured> = points
                .iter()
                .zip(&tests)
                .filter_map(|((v, c), tests)| {
                    let g = gain(c, m)?;
                    let base = stat(c, Method::NoDistillation)?.0;
                    let ci = test_of(tests, m)
                        .and_then(|t| t.ci95)
                        .map(|[lo, hi]| (100.0 * lo / base, 100.0 * hi / base));
                    Some((*v, g, ci))
                })
                .collect();
            let band = measured
                .iter()
                .all(|p| p.2.is_some())
                .then(|| measured.iter().map(|p| p.2.expect("checked")).collect());
            Series {
                name: m.to_string(),
                points: measured.iter().map(|p| (p.0, p.1)).collect(),
                band,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if !gains.is_empty() {
        lines(
            &folder.file("sweep_gain.svg"),
            &format!("Gain in mean test NDCG@8 over no-distillation (95% CI, paired over queries), against {name}"),
            &name,
            "gain over no-distillation (%)",
            &gains,
            plotters::prelude::SeriesLabelPosition::LowerLeft,
        )?;
    }
    let command = reproduce_command();
    let json = serde_json::json!({
        "param": name,
        "values": args.values,
        "command": command,
        "config": base,
        "points": points.iter().zip(&positives).zip(&tests).map(|(((v, c), (positive, groups)), tests)| serde_json::json!({
            "value": v,
            "tests": tests,
            "positive_groups": positive,
            "train_groups": groups,
            "methods": c.methods.iter().map(|r| {
                let stat = r.student_ndcg(8);
                let mut ndcg = serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1)});
                if stat.is_none() {
                    ndcg["unmeasured"] = distillrank::experiment::UNMEASURED.into();
                }
                let graded = r.student_graded_ndcg(8);
                let teacher = r.teacher_ndcg(8);
                (r.method.name().to_string(), serde_json::json!({
                    "ndcg@8": ndcg,
                    "gain_percent": gain(c, r.method),
                    "graded_ndcg@8": {"mean": graded.map(|s| s.0), "std": graded.map(|s| s.1)},
                    "teacher_ndcg@8": {"mean": teacher.map(|s| s.0), "std": teacher.map(|s| s.1)},
                }))
            }).collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    });
    write(
        &folder.file("sweep.json"),
        &(serde_json::to_string_pretty(&json).expect("serialise") + "\n"),
    )?;
    write(&folder.file("sweep.csv"), &csv)?;
    let report = format!(
        "# distillrank sweep: {name}\n\n{table}\nStudent test NDCG@8 at the epoch with the best validation NDCG@8, mean ± std over {} seeds; in brackets, the gain over no-distillation and its paired randomization test over the test queries (Holm-corrected within each value; sweep.json's `tests` has every test with its 95% interval and the smallest difference the run could detect). The gain plot's bands are those intervals.\n\n{more}\nThe same students' test NDCG@8 on the graded relevance, and the (first) teacher's test NDCG@8 on y.\n\n![sweep](sweep.svg)\n\n![gain over no-distillation](sweep_gain.svg)\n\n```sh\n{command}\n```\n\nRan in {seconds:.0} s.\n",
        base.seeds
    );
    write_report(&folder.file("sweep.md"), &report)?;
    folder.finish()?;
    if out.json {
        outln!("{json}");
    } else {
        outln!("{table}");
        outln!(
            "wrote {}/{{sweep.md, sweep.json, sweep.csv, sweep.svg}} in {seconds:.0} s",
            args.out.display()
        );
    }
    Ok(())
}
