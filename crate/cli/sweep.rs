//! `distillrank sweep`: one parameter over a range, every chosen method at each value — the PFD
//! paper's Figure 3 (alpha) and Figure 5 (tau_target: positive sparsity; tau_priv: how
//! discriminative z is), the number of privileged features, the synthetic data's query spread
//! (positive sparsity at fixed label noise), and the simulated logs' sessions, position bias and
//! conversion rate.

use std::path::PathBuf;

use clap::Args;

use super::bounded;

use distillrank::error::{Error, Result};
use distillrank::native::pipeline::compare;
use distillrank::pipeline::sweep::{sweep, SweepParam};
use distillrank::setup::Setup;
use distillrank::stop::Stop;

use super::compare::{reproduce_command, setup_file, with_jobs, write, write_report};
use super::flags::{TableFlags, Training};
use super::plot::{lines, Series};
use super::progress::{Bars, Output};
use super::DataArgs;

#[derive(Args, Clone, Debug)]
pub struct SweepArgs {
    /// The parameter to sweep.
    #[arg(long, value_enum)]
    pub param: SweepParam,
    /// Its values, comma-separated.
    #[arg(value_parser = bounded::<f64>("values"), long, value_delimiter = ',', action = clap::ArgAction::Set, required = true)]
    pub values: Vec<f64>,
    /// A comparison's setup.json (as `compare` writes it and the page exports it) to sweep,
    /// instead of the data and training flags.
    #[arg(long)]
    pub setup: Option<PathBuf>,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub experiment: TableFlags<Training>,
    /// Directory for sweep.md, sweep.json, sweep.csv and sweep.svg.
    #[arg(long, default_value = "out/sweep")]
    pub out: PathBuf,
}

impl SweepArgs {
    /// The setup to sweep: the `--setup` file's, or the one the other arguments describe (the
    /// flags beside `--setup` refused as `compare` refuses them; `param` and `values` are the
    /// sweep's own).
    fn setup(&self, given: &[String]) -> Result<Setup> {
        let beside: Vec<String> = given
            .iter()
            .filter(|id| !matches!(id.as_str(), "param" | "values"))
            .cloned()
            .collect();
        // As compare: flags beside --setup refused as such first.
        if let Some(path) = &self.setup {
            super::compare::refuse_beside_setup(path, &beside, true)?;
        }
        // The swept setting's own flag: each value replaces it.
        let sets = self.param.sets();
        if beside.iter().any(|id| id == sets) {
            return Err(Error::Config(format!(
                "--{sets} is given beside --param {}, which sets {} at each of its --values: the flag's value would not be used; leave it out{}",
                self.param.name(),
                if sets == "privileged" {
                    "the privileged split"
                } else {
                    "it"
                },
                if sets == "privileged" {
                    ""
                } else {
                    ", or add its value to --values"
                }
            )));
        }
        let from_args = self.experiment.setup(self.data.one_split_setup()?)?;
        let Some(path) = &self.setup else {
            return Ok(from_args);
        };
        with_jobs(from_args, |args_are_defaults| {
            setup_file(path, &beside, args_are_defaults)
        })
    }
}

pub fn run(args: &SweepArgs, given: &[String], out: &Output) -> Result<()> {
    let started = std::time::Instant::now();
    let setup = args.setup(given)?;
    run_setup(args, setup, started, out).map_err(|e| {
        super::compare::run_error_in_words(
            args.setup.as_deref(),
            e,
            &super::compare::document_words,
        )
    })
}

/// [`run`] once the setup is read.
fn run_setup(
    args: &SweepArgs,
    setup: Setup,
    started: std::time::Instant,
    out: &Output,
) -> Result<()> {
    // The run owns its folder: locked, and cleared of the previous run's outputs but those it
    // reads.
    let mut folder = distillrank::output::RunFolder::claim(
        &args.out,
        args.setup.as_deref(),
        &super::compare::paths(setup.data.files()),
        &[
            "sweep.svg",
            "sweep_gain.svg",
            "sweep.json",
            "sweep.csv",
            "sweep.md",
        ],
    )?;
    // Every setting is checked before the engine opens (and names its adapter).
    setup.check(None)?;
    let base = setup.compare_config(super::engine(setup.backend, out)?)?;
    let name = args.param.name();
    let mut store =
        distillrank::pipeline::store::Disk::with_queries(setup.data.source.query_files());
    let result = sweep(
        &setup,
        args.param,
        &args.values,
        &mut store,
        &mut match args.setup {
            // From a setup file, its warnings in the file's words.
            Some(_) => Bars::new(out).in_words(&super::compare::document_words),
            None => Bars::new(out),
        },
        &mut |data, setup, reporter| compare(data, setup, &base.engine, &Stop::default(), reporter),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let band_of = |std: f64, mean: f64| std.is_finite().then_some((mean - std, mean + std));
    let series: Vec<Series> = result
        .ndcg_lines()
        .into_iter()
        .map(|(m, points)| Series {
            name: m.to_string(),
            points: points.iter().map(|&(v, mean, _)| (v, mean)).collect(),
            // Mean ± std over the seeds; none with one seed (no spread to draw).
            band: points
                .iter()
                .map(|&(_, mean, std)| band_of(std, mean))
                .collect(),
        })
        .collect();
    lines(
        &folder.file("sweep.svg")?,
        &format!(
            "Student test {} against {name} (mean ± std, {} seed(s))",
            result.metric_label(),
            result.seeds
        ),
        name,
        &format!("test {}", result.metric_label()),
        &series,
        plotters::prelude::SeriesLabelPosition::LowerRight,
    )?;
    // The paper's Figure 5 shows the relative gain over no-distillation; the band is the paired
    // test's 95% interval of the difference, as a share of no-distillation's NDCG@8.
    let gains: Vec<Series> = result
        .gain_lines()
        .into_iter()
        .filter(|(_, points)| !points.is_empty())
        .map(|(m, points)| Series {
            name: m.to_string(),
            points: points.iter().map(|&(v, g, _)| (v, g)).collect(),
            band: points.iter().map(|p| p.2).collect(),
        })
        .collect();
    if !gains.is_empty() {
        lines(
            &folder.file("sweep_gain.svg")?,
            &format!("Gain in mean test {} over no-distillation (95% CI, paired over queries), against {name}", result.metric_label()),
            name,
            "gain over no-distillation (%)",
            &gains,
            plotters::prelude::SeriesLabelPosition::LowerLeft,
        )?;
    }
    let command = reproduce_command();
    let mut json = result.json(serde_json::to_value(&base).expect("a configuration serialises"));
    json["command"] = command.clone().into();
    write(
        &folder.file("sweep.json")?,
        &(serde_json::to_string_pretty(&json).expect("serialise") + "\n"),
    )?;
    write(&folder.file("sweep.csv")?, &result.csv())?;
    let table = result.table();
    let report = format!(
        "# distillrank sweep: {name}\n\n{table}\n{}\n\n{}\nThe same students' test NDCG@8 on the graded relevance, and the (first) teacher's test NDCG@8 on y.\n\n![sweep](sweep.svg)\n\n![gain over no-distillation](sweep_gain.svg)\n\n```sh\n{command}\n```\n\nRan in {seconds:.0} s.\n",
        result.caption(),
        result.graded_table(),
    );
    write_report(&folder.file("sweep.md")?, &report)?;
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
