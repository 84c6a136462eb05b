//! `distillrank objectives`: log-loss against the global objectives of Eban et al. (AUC-PR,
//! recall at precision, precision at recall, TPR at FPR, AUC-ROC, F-beta) on an imbalanced binary
//! task, over several seeds, with a report, JSON, CSV and the multipliers' trajectories.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::bounded;
use plotters::prelude::SeriesLabelPosition;

use distillrank::error::{Error, Result};
use distillrank::metrics::plus_minus;
use distillrank::model::objective::Config;
use distillrank::model::objective::{precision_anchors, Objective, Surrogate, Targets};
use distillrank::objectives::data::{BinarySplits, SynthBinaryOptions};
use distillrank::objectives::experiment::{ObjectiveRuns, Run};
use distillrank::objectives::train::{Event, CONSTRAINT_TOLERANCE};
use distillrank::pipeline;
use distillrank::pipeline::objectives::metric_columns;
use distillrank::setup::{ObjectivesData, ObjectivesSetup};

use super::compare::{files_to_keep, refuse_beside_setup, reproduce_command, write, write_report};
use super::plot::{self, Series};
use super::progress::{Bars, Output, Progress};
use super::{engine, SplitFiles};

#[derive(Args, Clone, Debug)]
pub struct ObjectivesArgs {
    #[arg(
        long,
        value_delimiter = ',', action = clap::ArgAction::Set,
    )]
    pub objectives: Vec<String>,
    #[arg(value_parser = bounded::<usize>("seeds"), long)]
    pub seeds: usize,
    #[arg(value_parser = bounded::<u64>("first-seed"), long)]
    pub first_seed: u64,
    #[arg(long, value_enum)]
    pub surrogate: SurrogateArg,
    #[arg(value_parser = bounded::<usize>("epochs"), long)]
    pub epochs: usize,
    #[arg(value_parser = bounded::<usize>("patience"), long)]
    pub patience: usize,
    /// The model's and the anchor biases'.
    #[arg(value_parser = bounded::<f64>("lr"), long)]
    pub lr: f64,
    #[arg(value_parser = bounded::<f64>("dual-rate-factor"), long)]
    pub dual_rate_factor: f64,
    #[arg(value_parser = bounded::<f64>("initial-lambda"), long)]
    pub initial_lambda: f64,
    #[arg(value_parser = super::widths("widths"), long, action = clap::ArgAction::Set)]
    pub widths: super::Widths,
    #[arg(value_parser = bounded::<usize>("batch-size"), long)]
    pub batch_size: usize,
    #[arg(value_parser = bounded::<f64>("at-precision"), long)]
    pub at_precision: Option<f64>,
    #[arg(value_parser = bounded::<f64>("at-recall"), long)]
    pub at_recall: Option<f64>,
    /// LETOR files, read document by document (label: grade >= --label-threshold); without
    /// --train, the synthetic imbalanced task.
    #[command(flatten)]
    pub files: SplitFiles,
    #[arg(value_parser = bounded::<u8>("label-threshold"), long)]
    pub label_threshold: u8,
    #[arg(value_parser = bounded::<usize>("train-examples"), long)]
    pub train_examples: usize,
    #[arg(value_parser = bounded::<usize>("valid-examples"), long)]
    pub valid_examples: usize,
    #[arg(value_parser = bounded::<usize>("test-examples"), long)]
    pub test_examples: usize,
    #[arg(value_parser = bounded::<usize>("features"), long)]
    pub features: usize,
    #[arg(value_parser = bounded::<f64>("positive-rate"), long)]
    pub positive_rate: f64,
    #[arg(value_parser = bounded::<f64>("noise"), long)]
    pub noise: f64,
    #[arg(value_parser = bounded::<u64>("synth-seed"), long)]
    pub synth_seed: u64,
    /// Directory for report.md, results.json, results.csv, setup.json and the SVG plots.
    #[arg(long, default_value = "out/objectives")]
    pub out: PathBuf,
    /// Run the setup in this JSON file (the setup.json an objectives run writes): the whole
    /// setup, so no other data or training options go with it.
    #[arg(long)]
    pub setup: Option<PathBuf>,
    #[arg(long, value_enum)]
    pub backend: distillrank::engine::Backend,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum SurrogateArg {
    Log,
    Hinge,
}

impl From<SurrogateArg> for Surrogate {
    fn from(s: SurrogateArg) -> Self {
        match s {
            SurrogateArg::Log => Surrogate::Log,
            SurrogateArg::Hinge => Surrogate::Hinge,
        }
    }
}

impl ObjectivesArgs {
    /// The setup to run: the `--setup` file's, or the one the other arguments describe. `given`
    /// are the flags the command line gave (by presence): beside `--setup`, any of them is
    /// refused, even one that equals its default.
    pub fn setup(&self, given: &[String]) -> Result<ObjectivesSetup> {
        // As compare: flags beside --setup refused as such before their own checks.
        if let Some(path) = &self.setup {
            refuse_beside_setup(path, given, true)?;
        }
        let from_args = self.setup_from_args(given)?;
        let Some(path) = &self.setup else {
            return Ok(from_args);
        };
        refuse_beside_setup(path, given, from_args == ObjectivesSetup::default())?;
        // A refusal in the file's words: its fields, under `objectives.` in a whole setup
        // document (as `objectives` writes it), not the flags it does not have.
        let bytes = distillrank::data::read_capped(path, 1 << 20, "a setup")?;
        let text = String::from_utf8_lossy(&bytes);
        let section = distillrank::setup::objectives_section_in(&text);
        let in_words = |e| {
            super::compare::in_setup_words(path, e, &|message| {
                distillrank::settings::flags_in_objectives_words(
                    message,
                    section,
                    &distillrank::setup::objectives_files_field,
                )
            })
        };
        let mut setup = ObjectivesSetup::from_json(&text).map_err(in_words)?;
        distillrank::setup::resolve_files(
            setup.files_mut(),
            Some(path.parent().unwrap_or(std::path::Path::new(""))),
        )
        .map_err(in_words)?;
        if let distillrank::setup::ObjectivesData::Files {
            train, valid, test, ..
        } = &setup.data
        {
            let files = [Some(train.as_str()), valid.as_deref(), test.as_deref()];
            distillrank::pipeline::preparation::check_split_files(files, setup.data.query_files())
                .map_err(in_words)?;
        }
        Ok(setup)
    }

    /// The setup the arguments describe, checked: a flag of the data these arguments do not
    /// describe (`given`: the flags given, by their ids) is refused by name, not dropped.
    fn setup_from_args(&self, given: &[String]) -> Result<ObjectivesSetup> {
        let flags_given = |ids: &[&str]| -> Vec<String> {
            ids.iter()
                .filter(|id| given.iter().any(|g| g == *id))
                .map(|id| format!("--{}", id.replace('_', "-")))
                .collect()
        };
        let read = flags_given(&[
            "label_threshold",
            "train_query",
            "valid_query",
            "test_query",
        ]);
        let generated = flags_given(&[
            "train_examples",
            "valid_examples",
            "test_examples",
            "features",
            "positive_rate",
            "noise",
            "synth_seed",
        ]);
        let objectives = self
            .objectives
            .iter()
            .filter(|o| !o.trim().is_empty())
            .map(|o| Objective::parse(o))
            .collect::<Result<_>>()?;
        let files = &self.files;
        // A split file without the training file it splits beside, first: the rest follows
        // from which data these are.
        if files.train.is_none()
            && files.bundled.is_none()
            && (files.valid.is_some() || files.test.is_some())
        {
            return Err(Error::Config("--valid/--test need --train".into()));
        }
        let name = |path: &Option<PathBuf>| path.as_ref().map(|p| p.display().to_string());
        let data = match (&files.bundled, &files.train) {
            (Some(bundled), _) => {
                if bundled != "mq2008" {
                    return Err(Error::Config(format!(
                        "--bundled {}: the bundled data are mq2008",
                        distillrank::error::printable(bundled)
                    )));
                }
                files.refuse_beside_bundled()?;
                refuse_unread(
                    &generated,
                    "the generated examples",
                    "these data are read (--bundled)",
                )?;
                ObjectivesData::Mq2008 {
                    threshold: self.label_threshold,
                }
            }
            (None, None) => {
                refuse_unread(
                    &read,
                    "LETOR files",
                    "these examples are generated (no --train or --bundled)",
                )?;
                ObjectivesData::Synthetic(SynthBinaryOptions {
                    train: self.train_examples,
                    valid: self.valid_examples,
                    test: self.test_examples,
                    features: self.features,
                    positive_rate: self.positive_rate,
                    noise: self.noise,
                    seed: self.synth_seed,
                })
            }
            (None, Some(train)) => {
                refuse_unread(
                    &generated,
                    "the generated examples",
                    "these data are read (--train)",
                )?;
                ObjectivesData::Files {
                    train: train.display().to_string(),
                    valid: name(&files.valid),
                    test: name(&files.test),
                    threshold: self.label_threshold,
                    train_query: name(&files.train_query),
                    valid_query: name(&files.valid_query),
                    test_query: name(&files.test_query),
                }
            }
        };
        let setup = ObjectivesSetup {
            data,
            objectives,
            seeds: self.seeds,
            first_seed: self.first_seed,
            surrogate: self.surrogate.into(),
            epochs: self.epochs,
            patience: self.patience,
            lr: self.lr,
            dual_rate_factor: self.dual_rate_factor,
            initial_lambda: self.initial_lambda,
            widths: self.widths.0.clone(),
            batch_size: self.batch_size,
            at_precision: self.at_precision,
            at_recall: self.at_recall,
            backend: self.backend,
        };
        // A split not given is held out of the training queries, as from a setup.
        setup.check()?;
        Ok(setup)
    }
}

/// Refuses `flags` (given) that describe `what`, which `why` leaves unread.
fn refuse_unread(flags: &[String], what: &str, why: &str) -> Result<()> {
    if flags.is_empty() {
        return Ok(());
    }
    Err(Error::Config(format!(
        "{} describe{} {what}, and {why}: drop {}",
        flags.join(", "),
        if flags.len() == 1 { "s" } else { "" },
        if flags.len() == 1 { "it" } else { "them" }
    )))
}

pub fn run(args: &ObjectivesArgs, given: &[String], out: &Output) -> Result<()> {
    let setup = args.setup(given)?;
    // The run owns its folder: locked, and cleared of the previous run's outputs but those it
    // reads.
    let mut folder = distillrank::output::RunFolder::claim(
        &args.out,
        args.setup.as_deref(),
        &super::compare::paths(setup.files()),
        &[
            "report.md",
            "results.json",
            "results.csv",
            "setup.json",
            "lambdas.svg",
            "valid_auc_pr.svg",
        ],
    )?;
    let config = setup.config()?;
    let started = std::time::Instant::now();
    let mut store = pipeline::store::Disk::with_queries(setup.data.query_files());
    // From a setup file, what the library warns of in the file's words (its section's fields).
    let section = match &args.setup {
        Some(path) => Some(distillrank::setup::objectives_section_in(
            &String::from_utf8_lossy(&distillrank::data::read_capped(path, 1 << 20, "a setup")?),
        )),
        None => None,
    };
    let words = |message: &str| {
        distillrank::settings::flags_in_objectives_words(
            message,
            section.unwrap_or_default(),
            &distillrank::setup::objectives_files_field,
        )
    };
    let mut bars = match section {
        Some(_) => Bars::new(out).in_words(&words),
        None => Bars::new(out),
    };
    // Its refusals likewise, once the settings are read.
    let in_words = |e| super::compare::run_error_in_words(args.setup.as_deref(), e, &words);
    let splits =
        pipeline::objectives::objectives_data(&setup, &mut store, &mut bars).map_err(in_words)?;
    drop(bars);
    out.note(format!("data: {}", splits.description));
    let engine = engine(setup.backend, out)?;
    let total = (splits.train.len() * config.epochs * setup.seeds * setup.objectives.len()) as u64;
    let mut bar = Progress::new(out, total, "examples");
    let mut current = String::new();
    let results =
        distillrank::native::pipeline::objectives(&splits, &setup, &engine, &mut |label, event| {
            match event {
                Event::Step { examples } => {
                    if current != label {
                        current = label.to_string();
                        bar.message(current.clone());
                    }
                    bar.inc(examples as u64);
                }
                Event::Epoch(log) => bar.println(format!(
                    "{label}: epoch {} loss {:.4} valid AUC-PR {:.4}{}",
                    log.epoch,
                    log.loss,
                    log.valid.auc_pr,
                    lambdas_text(&log.lambdas)
                )),
            }
        })
        .map_err(in_words)?;
    bar.finish();
    let seconds = started.elapsed().as_secs_f64();
    let command = reproduce_command();
    let table = table(&results, &config.targets);
    let mut json = pipeline::objectives::objectives_results_json(&splits, &setup, &results)?;
    json["command"] = command.clone().into();
    json["seconds"] = seconds.into();
    write_report(
        &folder.file("report.md")?,
        &report(
            &splits,
            &config,
            setup.seeds,
            &results,
            &table,
            &command,
            seconds,
        ),
    )?;
    write(
        &folder.file("results.json")?,
        &(serde_json::to_string_pretty(&json).expect("serialise") + "\n"),
    )?;
    write(&folder.file("results.csv")?, &csv(&results))?;
    let mut kept = setup.clone();
    files_to_keep(kept.files_mut(), &args.out);
    write(&folder.file("setup.json")?, &(kept.to_json() + "\n"))?;
    let plots = plots(&args.out, &results, config.initial_lambda)?;
    for plot in &plots {
        folder.file(plot)?;
    }
    folder.finish()?;
    if out.json {
        outln!("{}", serde_json::to_string(&json).expect("serialise"));
    } else {
        outln!("{table}");
        outln!(
            "wrote {}/{{report.md, results.json, results.csv, setup.json, {}}} in {seconds:.0} s",
            args.out.display(),
            plots.join(", ")
        );
    }
    Ok(())
}

fn lambdas_text(lambdas: &[f64]) -> String {
    match lambdas {
        [] => String::new(),
        [l] => format!(" lambda {l:.4}"),
        many => {
            let mean = many.iter().sum::<f64>() / many.len() as f64;
            let max = many.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(" lambdas mean {mean:.4} max {max:.4}")
        }
    }
}

/// The constraint column: the quantity's mean over seeds on validation and how many seeds met it.
fn constraint_text(r: &ObjectiveRuns) -> String {
    let Some((held, seeds)) = r.constraint_held() else {
        return "—".into();
    };
    let checks: Vec<_> = r
        .runs
        .iter()
        .filter_map(|run| run.valid_constraint)
        .collect();
    let values: Vec<f64> = checks.iter().filter_map(|c| c.value).collect();
    let c = checks[0];
    let mean = if values.is_empty() {
        "n/a".to_string()
    } else {
        format!("{:.3}", values.iter().sum::<f64>() / values.len() as f64)
    };
    let (near, _) = r
        .constraint_held_within(CONSTRAINT_TOLERANCE)
        .unwrap_or_default();
    format!(
        "{} {mean} {} {}: {held}/{seeds} (within {CONSTRAINT_TOLERANCE}: {near}/{seeds})",
        c.quantity,
        if c.at_least { ">=" } else { "<=" },
        c.target
    )
}

/// The markdown table: test metrics (mean ± std over seeds) per objective, and the constraint on
/// validation.
pub fn table(results: &[ObjectiveRuns], targets: &Targets) -> String {
    let columns = metric_columns(targets);
    let mut t = String::from("| objective |");
    for (_, title, _) in &columns {
        let _ = write!(t, " {title} |");
    }
    t.push_str(" constraint on validation (mean, seeds met) | best epoch |\n|---|");
    t.push_str(&"---:|".repeat(columns.len() + 2));
    t.push('\n');
    for r in results {
        let _ = write!(t, "| {} |", r.objective);
        for (_, _, f) in &columns {
            let (m, s) = r.stat(|run| f(&run.test));
            let _ = write!(t, " {} |", plus_minus(m, s));
        }
        let (epoch, _) = r.stat(|run| run.best_epoch as f64);
        let _ = writeln!(t, " {} | {epoch:.1} |", constraint_text(r));
    }
    t
}

fn report(
    splits: &BinarySplits,
    config: &Config,
    seeds: usize,
    results: &[ObjectiveRuns],
    table: &str,
    command: &str,
    seconds: f64,
) -> String {
    let mut r = String::new();
    let _ = writeln!(
        r,
        "# distillrank objectives\n\nData: {}.\n",
        splits.description
    );
    let _ = writeln!(r, "{table}");
    let _ = writeln!(
        r,
        "Test metrics, mean ± standard deviation over {} seeds, each model at its epoch of best validation AUC-PR. AUC-PR is the average precision (scikit-learn's `average_precision_score`); the trapezoid column is the area under the same curve from (0, 1). R@P and P@R are read off the test precision-recall curve at any threshold; F1 and accuracy take the decision f > 0. The constraint column is the constrained objective's own constraint at the decision f > 0 on validation (for the chosen epoch), as a mean over seeds, the number of seeds that met it, and the number that met it or missed by at most {CONSTRAINT_TOLERANCE}. The epoch of a constrained objective is the one of best validation AUC-PR among the epochs whose constraint holds on validation (else the one of least violation).\n",
        seeds
    );
    if let Some(base) = results.iter().find(|r| r.objective == Objective::LogLoss) {
        let (b, bs) = base.stat(|run| run.test.auc_pr);
        let _ = writeln!(r, "Test AUC-PR against log-loss ({}):\n", plus_minus(b, bs));
        for other in results.iter().filter(|o| o.objective != Objective::LogLoss) {
            let (m, _) = other.stat(|run| run.test.auc_pr);
            let wins = other
                .runs
                .iter()
                .zip(&base.runs)
                .filter(|(a, b)| a.test.auc_pr > b.test.auc_pr)
                .count();
            let _ = writeln!(
                r,
                "- {}: {:+.4} ({} of {} seeds above log-loss's run with the same seed)",
                other.objective,
                m - b,
                wins,
                other.runs.len()
            );
        }
        r.push('\n');
    }
    let _ = writeln!(
        r,
        "![multipliers per epoch](lambdas.svg)\n\n![validation AUC-PR per epoch](valid_auc_pr.svg)\n"
    );
    let _ = writeln!(
        r,
        "## Data\n\n| split | examples | positives |\n|---|---:|---:|"
    );
    for (name, set) in [
        ("train", &splits.train),
        ("valid", &splits.valid),
        ("test", &splits.test),
    ] {
        let _ = writeln!(r, "| {name} | {} | {} |", set.len(), set.positives());
    }
    let _ = writeln!(
        r,
        "\n## Configuration\n\nShared by every objective (the objective and the seed vary):\n\n```json\n{}\n```\n",
        serde_json::to_string_pretty(config).expect("serialise")
    );
    let _ = writeln!(
        r,
        "## Reproduce\n\n```sh\n{command}\n```\n\nRan in {seconds:.0} s."
    );
    r
}

fn csv(results: &[ObjectiveRuns]) -> String {
    let mut s = String::from(
        "objective,seed,best_epoch,valid_auc_pr,test_auc_pr,test_auc_pr_trapezoid,test_auc_roc,test_recall_at_precision,test_precision_at_recall,test_f1,test_accuracy,valid_constraint_value,valid_constraint_holds,lambdas\n",
    );
    for r in results {
        for run in &r.runs {
            let t = &run.test;
            let (value, holds) = match run.valid_constraint {
                Some(c) => (
                    c.value.map(|v| v.to_string()).unwrap_or_default(),
                    c.holds.to_string(),
                ),
                None => (String::new(), String::new()),
            };
            let lambdas: Vec<String> = final_lambdas(run).iter().map(|l| l.to_string()).collect();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{value},{holds},{}",
                r.objective,
                run.seed,
                run.best_epoch,
                run.valid.auc_pr,
                t.auc_pr,
                t.auc_pr_trapezoid,
                t.auc_roc,
                t.recall_at_precision,
                t.precision_at_recall,
                t.f1,
                t.accuracy,
                lambdas.join(" ")
            );
        }
    }
    s
}

/// The multipliers after the last epoch that ran.
fn final_lambdas(run: &Run) -> Vec<f64> {
    run.history
        .last()
        .map(|h| h.lambdas.clone())
        .unwrap_or_default()
}

/// `lambdas.svg` (each multiplier per epoch, mean over seeds; for AUC-PR the lowest, middle and
/// highest precision anchors) and `valid_auc_pr.svg`. Returns the files written.
fn plots(dir: &std::path::Path, results: &[ObjectiveRuns], initial: f64) -> Result<Vec<String>> {
    let mut written = Vec::new();
    let mut series = Vec::new();
    for r in results {
        let n = r.objective.n_lambdas();
        let anchors = match r.objective {
            Objective::AucPr { anchors } => precision_anchors(anchors),
            _ => Vec::new(),
        };
        let mut shown: Vec<usize> = vec![0, n / 2, n.saturating_sub(1)];
        shown.dedup();
        for k in shown.into_iter().take(n) {
            let per_seed: Vec<Vec<f64>> = r
                .runs
                .iter()
                .map(|run| run.history.iter().map(|h| h.lambdas[k]).collect())
                .collect();
            let mut points = vec![(0.0, initial)];
            points.extend(plot::per_epoch_mean(&per_seed));
            let name = match anchors.get(k) {
                Some(a) => format!("{} anchor precision {a:.2}", r.objective),
                None => r.objective.to_string(),
            };
            series.push(Series {
                name,
                points,
                band: None,
            });
        }
    }
    if !series.is_empty() {
        plot::lines(
            &dir.join("lambdas.svg"),
            "Lagrange multipliers per epoch (mean over the seeds still training)",
            "epoch",
            "lambda",
            &series,
            SeriesLabelPosition::UpperLeft,
        )?;
        written.push("lambdas.svg".to_string());
    }
    let auc: Vec<Series> = results
        .iter()
        .map(|r| Series {
            name: r.objective.to_string(),
            points: plot::per_epoch_mean(
                &r.runs
                    .iter()
                    .map(|run| run.history.iter().map(|h| h.valid.auc_pr).collect())
                    .collect::<Vec<_>>(),
            ),
            band: None,
        })
        .collect();
    plot::lines(
        &dir.join("valid_auc_pr.svg"),
        "Validation AUC-PR per epoch (mean over the seeds still training)",
        "epoch",
        "validation AUC-PR",
        &auc,
        SeriesLabelPosition::LowerRight,
    )?;
    written.push("valid_auc_pr.svg".to_string());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use distillrank::model::objective::Objective;
    use distillrank::setup::{ObjectivesData, ObjectivesSetup};

    use super::super::Command;
    use super::ObjectivesArgs;

    fn parse(args: &[&str]) -> ObjectivesArgs {
        let line = ["distillrank", "objectives"].iter().chain(args);
        match crate::cli::parse_from(line)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .command
        {
            Command::Objectives(a) => a,
            _ => unreachable!("an objectives command"),
        }
    }

    /// The CLI's defaults are the library's: `objectives` without options is
    /// `ObjectivesSetup::default()`.
    #[test]
    fn the_command_lines_defaults_are_the_setups() {
        assert_eq!(parse(&[]).setup(&[]).unwrap(), ObjectivesSetup::default());
    }

    #[test]
    fn each_flag_fills_its_field_of_the_setup() {
        let setup = parse(&[
            "--objectives",
            "logloss,auc-pr:5",
            "--seeds",
            "3",
            "--batch-size",
            "64",
            "--at-recall",
            "0.7",
            "--train",
            "a.txt",
            "--valid",
            "b.txt",
            "--test",
            "c.txt",
            "--label-threshold",
            "2",
        ])
        .setup(&[])
        .unwrap();
        assert_eq!(
            setup.objectives,
            [Objective::LogLoss, Objective::AucPr { anchors: 5 }]
        );
        assert_eq!((setup.seeds, setup.batch_size), (3, 64));
        assert_eq!(setup.at_recall, Some(0.7));
        assert_eq!(
            setup.data,
            ObjectivesData::Files {
                train: "a.txt".into(),
                valid: Some("b.txt".into()),
                test: Some("c.txt".into()),
                threshold: 2,
                train_query: None,
                valid_query: None,
                test_query: None,
            }
        );
    }

    /// `--setup` holds the whole setup: a flag beside it is refused, and its files are found
    /// beside it.
    #[test]
    fn a_setup_file_runs_alone_and_names_its_files_from_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("setup.json");
        // The files are there: a setup's file that is not is refused as it is read.
        let absolute = dir.path().join("test.txt").display().to_string();
        for file in ["train.txt", "test.txt"] {
            std::fs::write(dir.path().join(file), "1 qid:1 1:0.5\n").unwrap();
        }
        let setup = ObjectivesSetup {
            data: ObjectivesData::Files {
                train: "train.txt".into(),
                valid: None,
                test: Some(absolute.clone()),
                threshold: 1,
                train_query: None,
                valid_query: None,
                test_query: None,
            },
            ..ObjectivesSetup::default()
        };
        std::fs::write(&path, setup.to_json()).unwrap();
        let file = path.display().to_string();
        let read = parse(&["--setup", &file]).setup(&["setup".into()]).unwrap();
        let ObjectivesData::Files { train, test, .. } = &read.data else {
            panic!("files: {:?}", read.data)
        };
        assert_eq!(train, &dir.path().join("train.txt").display().to_string());
        assert_eq!(test.as_deref(), Some(absolute.as_str()));
        std::fs::remove_file(dir.path().join("train.txt")).unwrap();
        let err = parse(&["--setup", &file])
            .setup(&["setup".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("train.txt: No such file")
                && err.contains("(objectives.data.files.train)"),
            "{err}"
        );
        let err = parse(&["--setup", &file, "--seeds", "2"])
            .setup(&["setup".into(), "seeds".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--seeds beside it"), "{err}");
    }
}
