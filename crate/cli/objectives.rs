//! `distillrank objectives`: log-loss against the global objectives of Eban et al. (AUC-PR,
//! recall at precision, precision at recall, TPR at FPR, AUC-ROC, F-beta) on an imbalanced binary
//! task, over several seeds, with a report, JSON, CSV and the multipliers' trajectories.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::bounded;
use plotters::prelude::SeriesLabelPosition;

use distillrank::cpu::adam::AdamConfig;
use distillrank::metrics::plus_minus;
use distillrank::metrics_binary::{BinaryMetrics, Targets};
use distillrank::objectives::data::{from_letor, synthetic, BinarySplits, SynthBinaryOptions};
use distillrank::objectives::experiment::{compare_on, ObjectiveRuns, Run};
use distillrank::objectives::train::{Config, Event, CONSTRAINT_TOLERANCE};
use distillrank::objectives::{precision_anchors, Objective, Surrogate};
use distillrank::{Error, Result};

use super::commands::load;
use super::compare::{reproduce_command, write, write_report};
use super::plot::{self, Series};
use super::progress::{Output, Progress};
use super::{engine, SplitFiles};

#[derive(Args, Clone, Debug)]
pub struct ObjectivesArgs {
    /// Objectives, comma-separated: logloss, auc-pr (auc-pr:K for K anchors, default 20),
    /// recall-at-precision:ALPHA, precision-at-recall:BETA, tpr-at-fpr:R, roc-auc, f-beta:BETA.
    #[arg(
        long,
        value_delimiter = ',', action = clap::ArgAction::Set,
        default_value = "logloss,auc-pr,recall-at-precision:0.8,precision-at-recall:0.9,tpr-at-fpr:0.05,roc-auc,f-beta:1"
    )]
    pub objectives: Vec<String>,
    /// Seeds (model initialisation and example order) per objective.
    #[arg(value_parser = bounded::<usize>("seeds"), long, default_value_t = 5)]
    pub seeds: usize,
    #[arg(value_parser = bounded::<u64>("first-seed"), long, default_value_t = 0)]
    pub first_seed: u64,
    /// The surrogate of the 0-1 loss in the bounds: log (log-loss / ln 2) or hinge.
    #[arg(long, value_enum, default_value = "log")]
    pub surrogate: SurrogateArg,
    /// Most epochs per model.
    #[arg(value_parser = bounded::<usize>("epochs"), long, default_value_t = 30)]
    pub epochs: usize,
    /// Early stopping: stop after this many epochs without a better validation AUC-PR.
    #[arg(value_parser = bounded::<usize>("patience"), long, default_value_t = 5)]
    pub patience: usize,
    /// Adam learning rate (model and anchor biases).
    #[arg(value_parser = bounded::<f64>("lr"), long, default_value_t = 1e-3)]
    pub lr: f64,
    /// The multipliers ascend at this factor times the learning rate (the reference's 0.1 barely
    /// moves them under Adam; see `DEFAULT_DUAL_RATE_FACTOR`).
    #[arg(value_parser = bounded::<f64>("dual-rate-factor"), long, default_value_t = distillrank::objectives::train::DEFAULT_DUAL_RATE_FACTOR)]
    pub dual_rate_factor: f64,
    /// Every multiplier's starting value.
    #[arg(value_parser = bounded::<f64>("initial-lambda"), long, default_value_t = 1.0)]
    pub initial_lambda: f64,
    /// Hidden layer widths.
    #[arg(value_parser = bounded::<usize>("widths"), long, value_delimiter = ',', action = clap::ArgAction::Set, default_value = "64,32")]
    pub widths: Vec<usize>,
    /// Examples per mini-batch.
    #[arg(value_parser = bounded::<usize>("batch-size"), long, default_value_t = 128)]
    pub batch_size: usize,
    /// The precision of the reported recall-at-precision metric (default: the first
    /// recall-at-precision objective's target, else 0.8).
    #[arg(value_parser = bounded::<f64>("at-precision"), long)]
    pub at_precision: Option<f64>,
    /// The recall of the reported precision-at-recall metric (default: the first
    /// precision-at-recall objective's target, else 0.9).
    #[arg(value_parser = bounded::<f64>("at-recall"), long)]
    pub at_recall: Option<f64>,
    /// LETOR files, read document by document (label: grade >= --label-threshold); without
    /// --train, the synthetic imbalanced task.
    #[command(flatten)]
    pub files: SplitFiles,
    /// With LETOR files: a document is positive when its grade is at least this.
    #[arg(value_parser = bounded::<u8>("label-threshold"), long, default_value_t = 1)]
    pub label_threshold: u8,
    /// Synthetic task: training examples.
    #[arg(value_parser = bounded::<usize>("train-examples"), long, default_value_t = 20_000)]
    pub train_examples: usize,
    /// Synthetic task: validation examples.
    #[arg(value_parser = bounded::<usize>("valid-examples"), long, default_value_t = 10_000)]
    pub valid_examples: usize,
    /// Synthetic task: test examples.
    #[arg(value_parser = bounded::<usize>("test-examples"), long, default_value_t = 20_000)]
    pub test_examples: usize,
    /// Synthetic task: features.
    #[arg(value_parser = bounded::<usize>("features"), long, default_value_t = 20)]
    pub features: usize,
    /// Synthetic task: share of positives.
    #[arg(value_parser = bounded::<f64>("positive-rate"), long, default_value_t = 0.03)]
    pub positive_rate: f64,
    /// Synthetic task: standard deviation of the latent noise.
    #[arg(value_parser = bounded::<f64>("noise"), long, default_value_t = 0.7)]
    pub noise: f64,
    /// Synthetic task: seed of the examples.
    #[arg(value_parser = bounded::<u64>("synth-seed"), long, default_value_t = 11)]
    pub synth_seed: u64,
    /// Directory for report.md, results.json, results.csv and the SVG plots.
    #[arg(long, default_value = "out/objectives")]
    pub out: PathBuf,
    /// Where the models train.
    #[arg(long, value_enum, default_value = "auto")]
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
    fn objectives(&self) -> Result<Vec<Objective>> {
        let list: Vec<Objective> = self
            .objectives
            .iter()
            .filter(|o| !o.trim().is_empty())
            .map(|o| Objective::parse(o))
            .collect::<Result<_>>()?;
        for (i, o) in list.iter().enumerate() {
            if list[..i].contains(o) {
                return Err(Error::Config(format!("objective '{o}' is listed twice")));
            }
        }
        if list.is_empty() {
            return Err(Error::Config("--objectives lists no objective".into()));
        }
        Ok(list)
    }

    /// The shared training configuration (the objective and seed vary per run).
    fn config(&self, objectives: &[Objective]) -> Result<Config> {
        let precision = self.at_precision.unwrap_or_else(|| {
            objectives
                .iter()
                .find_map(|o| match o {
                    Objective::RecallAtPrecision(a) => Some(*a),
                    _ => None,
                })
                .unwrap_or(0.8)
        });
        let recall = self.at_recall.unwrap_or_else(|| {
            objectives
                .iter()
                .find_map(|o| match o {
                    Objective::PrecisionAtRecall(b) => Some(*b),
                    _ => None,
                })
                .unwrap_or(0.9)
        });
        let config = Config {
            objective: objectives[0],
            surrogate: self.surrogate.into(),
            widths: self.widths.clone(),
            epochs: self.epochs,
            patience: Some(self.patience.max(1)),
            adam: AdamConfig {
                lr: self.lr,
                ..Default::default()
            },
            batch_size: self.batch_size,
            dual_rate_factor: self.dual_rate_factor,
            initial_lambda: self.initial_lambda,
            targets: Targets { precision, recall },
            seed: self.first_seed,
        };
        config.validate()?;
        if self.seeds == 0 {
            return Err(Error::Config("--seeds must be at least 1".into()));
        }
        Ok(config)
    }

    fn data(&self, out: &Output) -> Result<BinarySplits> {
        let files = &self.files;
        match &files.train {
            None => {
                if files.valid.is_some() || files.test.is_some() {
                    return Err(Error::Config("--valid/--test need --train".into()));
                }
                synthetic(&SynthBinaryOptions {
                    train: self.train_examples,
                    valid: self.valid_examples,
                    test: self.test_examples,
                    features: self.features,
                    positive_rate: self.positive_rate,
                    noise: self.noise,
                    seed: self.synth_seed,
                })
            }
            Some(train) => {
                let (Some(valid), Some(test)) = (&files.valid, &files.test) else {
                    return Err(Error::Config(
                        "with --train, give --valid and --test too: the epoch is chosen on validation, the figures are on test".into(),
                    ));
                };
                let train_data = load(train, files.train_query.as_deref(), out)?;
                let valid_data = load(valid, files.valid_query.as_deref(), out)?;
                let test_data = load(test, files.test_query.as_deref(), out)?;
                from_letor(
                    &train_data,
                    &valid_data,
                    &test_data,
                    self.label_threshold,
                    format!(
                        "LETOR documents of {} / {} / {}, positive when grade >= {}",
                        train.display(),
                        valid.display(),
                        test.display(),
                        self.label_threshold
                    ),
                )
            }
        }
    }
}

pub fn run(args: &ObjectivesArgs, out: &Output) -> Result<()> {
    // The run owns its folder: locked, and cleared of the previous run's outputs.
    let mut folder = distillrank::output::RunFolder::claim(&args.out)?;
    let objectives = args.objectives()?;
    let config = args.config(&objectives)?;
    let started = std::time::Instant::now();
    let splits = args.data(out)?;
    out.note(format!("data: {}", splits.description));
    let engine = engine(args.backend, out)?;
    let total = (splits.train.len() * config.epochs * args.seeds * objectives.len()) as u64;
    let mut bar = Progress::new(out, total, "examples");
    let mut current = String::new();
    let results = compare_on(
        &splits,
        &objectives,
        &config,
        (args.seeds, args.first_seed),
        &engine,
        &mut |label, event| match event {
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
        },
    )?;
    bar.finish();
    let seconds = started.elapsed().as_secs_f64();
    let command = reproduce_command();
    let table = table(&results, &config.targets);
    let json = results_json(&splits, &config, args, &results, &command, seconds);
    write_report(
        &folder.file("report.md"),
        &report(&splits, &config, args, &results, &table, &command, seconds),
    )?;
    write(
        &folder.file("results.json"),
        &(serde_json::to_string_pretty(&json).expect("serialise") + "\n"),
    )?;
    write(&folder.file("results.csv"), &csv(&results))?;
    let plots = plots(&args.out, &results, config.initial_lambda)?;
    for plot in &plots {
        folder.file(plot);
    }
    folder.finish()?;
    if out.json {
        outln!("{}", serde_json::to_string(&json).expect("serialise"));
    } else {
        outln!("{table}");
        outln!(
            "wrote {}/{{report.md, results.json, results.csv, {}}} in {seconds:.0} s",
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

/// A test metric: (JSON key, column title, value).
type MetricColumn = (&'static str, String, fn(&BinaryMetrics) -> f64);

/// The test metrics, in table order.
fn metric_columns(targets: &Targets) -> Vec<MetricColumn> {
    vec![
        ("auc_pr", "AUC-PR (AP)".into(), |m| m.auc_pr),
        ("auc_roc", "AUC-ROC".into(), |m| m.auc_roc),
        (
            "recall_at_precision",
            format!("R@P{}", targets.precision),
            |m| m.recall_at_precision,
        ),
        (
            "precision_at_recall",
            format!("P@R{}", targets.recall),
            |m| m.precision_at_recall,
        ),
        ("f1", "F1 (f > 0)".into(), |m| m.f1),
        ("accuracy", "accuracy (f > 0)".into(), |m| m.accuracy),
        ("auc_pr_trapezoid", "AUC-PR (trapezoid)".into(), |m| {
            m.auc_pr_trapezoid
        }),
    ]
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
    args: &ObjectivesArgs,
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
        args.seeds
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

fn results_json(
    splits: &BinarySplits,
    config: &Config,
    args: &ObjectivesArgs,
    results: &[ObjectiveRuns],
    command: &str,
    seconds: f64,
) -> serde_json::Value {
    let mut objectives = serde_json::Map::new();
    for r in results {
        let mut o = serde_json::Map::new();
        for (key, _, f) in metric_columns(&config.targets) {
            let (mean, std) = r.stat(|run| f(&run.test));
            let per_seed: Vec<f64> = r.runs.iter().map(|run| f(&run.test)).collect();
            o.insert(
                key.into(),
                serde_json::json!({"mean": mean, "std": std, "per_seed": per_seed}),
            );
        }
        let (mean, std) = r.stat(|run| run.valid.auc_pr);
        o.insert(
            "valid_auc_pr".into(),
            serde_json::json!({"mean": mean, "std": std}),
        );
        if let Some((held, seeds)) = r.constraint_held() {
            o.insert(
                "constraint".into(),
                serde_json::json!({
                    "valid_held": held,
                    "valid_held_within_tolerance": r.constraint_held_within(CONSTRAINT_TOLERANCE).map(|h| h.0),
                    "tolerance": CONSTRAINT_TOLERANCE,
                    "seeds": seeds,
                    "valid": r.runs.iter().map(|run| run.valid_constraint).collect::<Vec<_>>(),
                    "test": r.runs.iter().map(|run| run.test_constraint).collect::<Vec<_>>(),
                }),
            );
        }
        // The multipliers' trajectories: per seed, per epoch, one value per multiplier.
        let lambdas: Vec<Vec<&Vec<f64>>> = r
            .runs
            .iter()
            .map(|run| run.history.iter().map(|h| &h.lambdas).collect())
            .collect();
        o.insert("lambdas".into(), serde_json::json!(lambdas));
        if let Objective::AucPr { anchors } = r.objective {
            o.insert(
                "precision_anchors".into(),
                serde_json::json!(precision_anchors(anchors)),
            );
        }
        o.insert("runs".into(), r.runs.iter().map(run_json).collect());
        objectives.insert(r.objective.name(), serde_json::Value::Object(o));
    }
    serde_json::json!({
        "data": splits.description,
        "examples": {
            "train": [splits.train.len(), splits.train.positives()],
            "valid": [splits.valid.len(), splits.valid.positives()],
            "test": [splits.test.len(), splits.test.positives()],
        },
        "config": config,
        "seeds": args.seeds,
        "first_seed": args.first_seed,
        "command": command,
        "seconds": seconds,
        "objectives": objectives,
    })
}

/// One run: its best epoch's validation and test figures and anchor biases, and per epoch
/// the loss, the label prior, the validation AUC-PR and AUC-ROC and the constraint's value (the
/// multipliers per epoch are the objective's `lambdas`).
fn run_json(run: &Run) -> serde_json::Value {
    let history: Vec<serde_json::Value> = run
        .history
        .iter()
        .map(|h| {
            serde_json::json!({
                "epoch": h.epoch,
                "loss": h.loss,
                "label_prior": h.label_prior,
                "valid_auc_pr": h.valid.auc_pr,
                "valid_auc_roc": h.valid.auc_roc,
                "valid_constraint": h.constraint.and_then(|c| c.value),
                "seconds": h.seconds,
            })
        })
        .collect();
    serde_json::json!({
        "seed": run.seed,
        "best_epoch": run.best_epoch,
        "valid": run.valid,
        "test": run.test,
        "valid_constraint": run.valid_constraint,
        "test_constraint": run.test_constraint,
        "biases_at_best_epoch": run.best_epoch.checked_sub(1).and_then(|e| run.history.get(e)).map(|h| &h.biases),
        "history": history,
    })
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
