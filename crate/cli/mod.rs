//! Command definitions (clap) and their implementations.
//!
//! A flag that fills a field of a setup (`--epochs`, `--sessions`, ...) has no help text or
//! default beside it: [`command`] gives it those of its row in the table of settings
//! (`crate/settings.rs`), so that the CLI, the library's defaults and the page read one table.

/// `println!` for results: a closed pipe (`distillrank predict ... | head -1`) ends the program
/// quietly instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = distillrank::error::printable_text(&format!($($arg)*));
        if let Err(e) = writeln!(std::io::stdout().lock(), "{text}") {
            $crate::cli::stdout_failed(e)
        }
    }};
}

mod bench;
mod commands;
mod compare;
mod export;
mod flags;
mod objectives;
mod plot;
mod progress;
mod sweep;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use distillrank::data::prepare::FeatureView;
use distillrank::engine::{Backend, Engine};
use distillrank::metrics::IdcgZero;
use distillrank::setup::{DataSetup, DataSource};

#[derive(Parser)]
#[command(
    name = "distillrank",
    version,
    about = "Learning to rank with privileged features and distillation"
)]
pub struct Cli {
    /// No progress bars or per-epoch lines; results only.
    #[arg(long, global = true)]
    pub quiet: bool,
    /// Print results as one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
    /// The flags given on the command line (by presence, whatever their values) of the
    /// subcommand run, as clap names them.
    #[arg(skip)]
    pub given: Vec<String>,
}

/// The command line's definition, as `main` parses it:
/// - each flag with a row in the table of settings ([`distillrank::settings`]) that fills a
///   field in its command's context takes its help and default from that row (`objectives` reads
///   the fields of the global objectives' setup, every other command the comparison's);
/// - a numeric flag takes a value that starts with a dash (`--noise -1`, `--lr -inf`) as its
///   value, so that its range refuses it by name, rather than clap reading it as an unknown flag.
pub fn command() -> clap::Command {
    /// Which fields a command's flags fill: a comparison's, the objectives', or none (`bench`
    /// describes a measurement, not a setup).
    #[derive(Clone, Copy, PartialEq)]
    enum Context {
        Comparison,
        Objectives,
        Measurement,
        /// `predict` and `eval`: a comparison's flags, but their `--allow-missing-features`,
        /// a switch of their own about the file scored, not the setup's field.
        Scoring,
    }
    fn from_table(c: clap::Command, context: Context) -> clap::Command {
        c.mut_args(|a| {
            let numeric = is_numeric(&a);
            let a = a.allow_hyphen_values(numeric);
            let row = match (context, a.get_long()) {
                (Context::Measurement, _) | (_, None) => None,
                (Context::Scoring, Some("allow-missing-features")) => None,
                (_, Some(long)) => table_field(long, context == Context::Objectives),
            };
            let a = match row {
                Some((setting, field)) => with_row(a, setting, field),
                None => a,
            };
            // The methods from their entries: each one's name and help.
            if a.get_long() == Some("methods") {
                let list: Vec<String> = distillrank::ranking::distill::METHODS
                    .iter()
                    .map(|m| format!("{} ({})", m.name, m.help))
                    .collect();
                let help = a.get_help().map(ToString::to_string).unwrap_or_default();
                return a.help(format!("{help}: {}", list.join("; ")));
            }
            a
        })
        .mut_subcommands(|sub| {
            let context = match sub.get_name() {
                "objectives" => Context::Objectives,
                "bench" => Context::Measurement,
                "predict" | "eval" => Context::Scoring,
                _ => context,
            };
            let sub = from_table(sub, context);
            // A command that prepares one split takes the data's flags but the folds, which it
            // refuses in the library's words ([`DataArgs::one_split_setup`]): not in its help.
            let has_folds = sub.get_arguments().any(|a| a.get_id() == "folds");
            match sub.get_name() {
                "train" | "sweep" if has_folds => sub.mut_arg("folds", |a| a.hide(true)),
                _ => sub,
            }
        })
    }
    with_examples(from_table(
        <Cli as clap::CommandFactory>::command(),
        Context::Comparison,
    ))
}

/// Two or three command lines for each subcommand, printed at the end of its `--help` (each is
/// parsed by the tests; `> FILE` redirections aside).
pub const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "data stats",
        &[
            "distillrank data stats train.txt --json",
            "distillrank data stats rank.train --query rank.train.query",
            "distillrank data stats train.txt --privileged top:30%",
        ],
    ),
    (
        "data synth",
        &[
            "distillrank data synth --queries 2000 -o synth.txt",
            "distillrank data synth --kind linear --privileged-strength 0.1 -o weak-z.txt",
        ],
    ),
    (
        "data cache",
        &[
            "distillrank data cache train.txt.gz",
            "distillrank data cache rank.train --query rank.train.query",
        ],
    ),
    (
        "data convert",
        &[
            "distillrank data convert train.txt.gz -o train.parquet",
            "distillrank data convert part-folder/ -o train.txt",
        ],
    ),
    (
        "data simulate-logs",
        &[
            "distillrank data simulate-logs train.txt vali.txt test.txt -o logs/",
            "distillrank data simulate-logs train.txt vali.txt test.txt -o logs/ --sessions 300 --position-bias 1.5",
        ],
    ),
    (
        "data aggregate-logs",
        &[
            "distillrank data aggregate-logs train.txt vali.txt test.txt --impressions impressions.tsv -o logged/",
            "distillrank data aggregate-logs train.txt vali.txt --impressions train.clicks,vali.clicks -o logged/",
        ],
    ),
    (
        "train",
        &[
            "distillrank train --train train.txt --valid vali.txt --test test.txt --save student",
            "distillrank train --bundled mq2008 --training-labels grades --loss lambdarank --ensemble 5",
            "distillrank train --train train.txt --features both --privileged top:30% --backend gpu --save teacher",
        ],
    ),
    (
        "eval",
        &[
            "distillrank eval test.txt --model student",
            "distillrank eval test.txt --model lightgbm.txt --json",
        ],
    ),
    (
        "predict",
        &[
            "distillrank predict test.txt --model student > scores.txt",
            "distillrank predict test.txt --model student --run run.trec",
        ],
    ),
    (
        "export",
        &["distillrank export --model student --onnx student.onnx"],
    ),
    (
        "compare",
        &[
            "distillrank compare",
            "distillrank compare --train train.txt --valid vali.txt --test test.txt --reference-model lightgbm.txt",
            "distillrank compare --folds MQ2008/ --training-labels grades --methods no-distillation,pfd",
        ],
    ),
    (
        "sweep",
        &[
            "distillrank sweep --param alpha --values 0.1,0.3,0.5,0.7,0.9",
            "distillrank sweep --param tau-target --values 2,3,4 --methods no-distillation,pfd",
        ],
    ),
    (
        "objectives",
        &[
            "distillrank objectives",
            "distillrank objectives --objectives logloss,auc-pr,recall-at-precision:0.8 --backend gpu",
        ],
    ),
    (
        "bench",
        &["distillrank bench train --json", "distillrank bench parse train.txt"],
    ),
    (
        "completions",
        &[
            "distillrank completions bash > ~/.local/share/bash-completion/completions/distillrank",
            "distillrank completions zsh > ~/.zfunc/_distillrank",
            "distillrank completions fish > ~/.config/fish/completions/distillrank.fish",
        ],
    ),
];

/// The command with each subcommand's [`EXAMPLES`] after its help.
fn with_examples(mut line: clap::Command) -> clap::Command {
    for (path, examples) in EXAMPLES {
        let text = format!("Examples:\n  {}", examples.join("\n  "));
        let names: Vec<&str> = path.split(' ').collect();
        line = match names.as_slice() {
            [name] => line.mut_subcommand(*name, |c| c.after_help(text)),
            [group, name] => {
                line.mut_subcommand(*group, |g| g.mut_subcommand(*name, |c| c.after_help(text)))
            }
            _ => line,
        };
    }
    line
}

/// The row and field a flag fills in its command's context.
fn table_field(
    long: &str,
    objectives: bool,
) -> Option<(
    &'static distillrank::settings::Setting,
    &'static distillrank::settings::Field,
)> {
    use distillrank::settings::{OBJECTIVES, SETTINGS};
    let setting = SETTINGS.iter().find(|s| s.flag && s.name == long)?;
    let field = setting
        .fields
        .iter()
        .find(|f| f.path.starts_with(OBJECTIVES) == objectives)?;
    Some((setting, field))
}

/// A flag with its row's help (the range appended for a number) and its field's default. What a
/// command says of the flag beside it (a doc comment: `With --labels binary.`) follows the row's
/// help.
fn with_row(
    arg: clap::Arg,
    setting: &distillrank::settings::Setting,
    field: &distillrank::settings::Field,
) -> clap::Arg {
    let mut help = match setting.range {
        Some(range) => format!("{}. In {}", setting.help, range.text()),
        None => setting.help.to_string(),
    };
    if let Some(here) = arg.get_help() {
        help = format!("{help}. {here}");
    }
    let arg = arg.help(help);
    if field.default.is_empty() {
        arg
    } else {
        arg.required(false).default_value(field.default)
    }
}

/// Parses a command line as `main` does (through [`command`]).
pub fn parse_from<I, T>(line: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let matches = command().try_get_matches_from(line)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    cli.given = given_flags(&matches);
    Ok(cli)
}

/// Refuses a command line with an argument that is not UTF-8 (a file name in another encoding),
/// naming its flag: a run records the files it read and wrote in setup.json, its reports and its
/// messages as UTF-8 text, where such a name would be changed (U+FFFD in place of a byte) and
/// name another file.
pub fn check_utf8_arguments<I, T>(line: I) -> distillrank::error::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    let line: Vec<std::ffi::OsString> = line.into_iter().map(Into::into).collect();
    let Some(at) = line.iter().position(|a| a.to_str().is_none()) else {
        return Ok(());
    };
    let text = line[at].to_string_lossy();
    let (flag, text) = match text.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), value.to_string()),
        _ => (
            line[..at]
                .last()
                .and_then(|a| a.to_str())
                .filter(|a| a.starts_with('-'))
                .map_or(format!("argument {at}"), str::to_string),
            text.to_string(),
        ),
    };
    Err(distillrank::error::Error::Config(format!(
        "{flag}: '{text}' is not UTF-8 text (U+FFFD marks the bytes that are not): distillrank names the files it reads and writes in setup.json, its reports and its messages as UTF-8, so rename the file"
    )))
}

/// Whether a command line asks for JSON output (`--json` before any `--`), read before clap
/// parses it, so that a line clap refuses is refused in JSON too.
pub fn asks_for_json<I, T>(line: I) -> bool
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    line.into_iter()
        .map(Into::into)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// Whether a flag takes numbers (whole or real, or a list of whole numbers).
pub fn is_numeric(arg: &clap::Arg) -> bool {
    use std::any::TypeId;
    let parsed = arg.get_value_parser().type_id();
    [
        TypeId::of::<usize>(),
        TypeId::of::<u64>(),
        TypeId::of::<u32>(),
        TypeId::of::<u8>(),
        TypeId::of::<f64>(),
        TypeId::of::<f32>(),
        TypeId::of::<Widths>(),
    ]
    .iter()
    .any(|id| parsed == *id)
}

/// A flag's value parser from the table of settings ([`distillrank::settings`]): the value must
/// parse as `T` and lie in the setting's range, or clap refuses it, naming the flag and the range.
pub fn bounded<T: distillrank::settings::Number>(
    name: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text: &str| match distillrank::settings::bound(name) {
        Some(bound) => bound.parse(text),
        None => Err(format!("no bounds are known for --{name}")),
    }
}

/// Hidden widths as one flag value: `256,128`, or `none` for no hidden layer (a linear model).
#[derive(Clone, Debug, PartialEq)]
pub struct Widths(pub Vec<usize>);

impl Widths {
    /// As the flag takes it.
    pub fn text(&self) -> String {
        match self.0.as_slice() {
            [] => distillrank::settings::NO_HIDDEN_LAYER.to_string(),
            widths => widths
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// A list flag that may be empty (`--widths`), read by its row of the table of settings.
pub fn widths(
    name: &'static str,
) -> impl Fn(&str) -> Result<Widths, String> + Clone + Send + Sync + 'static {
    move |text: &str| match distillrank::settings::bound(name) {
        Some(row) => serde_json::from_value(row.json_value(text)?)
            .map(Widths)
            .map_err(|e| e.to_string()),
        None => Err(format!("no bounds are known for --{name}")),
    }
}

/// The ids of the flags the command line itself gives to the deepest subcommand (not their
/// defaults): a flag equal to its default is still given.
pub fn given_flags(matches: &clap::ArgMatches) -> Vec<String> {
    let mut m = matches;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    m.ids()
        .filter(|id| m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        // The derive's argument groups (a flattened struct's, `SplitFiles`) are ids too, named
        // after their struct; they are no flag.
        .filter(|id| !id.as_str().starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|id| id.as_str().to_string())
        .collect()
}

#[derive(Subcommand)]
pub enum Command {
    /// Inspect, generate and cache ranking data.
    #[command(subcommand)]
    Data(DataCommand),
    /// Train one ranking model (one method, one seed) on the CPU or the GPU engine (--backend).
    Train(TrainArgs),
    /// Metrics of a saved model on a LETOR file.
    Eval(EvalArgs),
    /// Scores of a saved model on a LETOR file, or a TREC run file.
    Predict(PredictArgs),
    /// Write a saved model as an ONNX file for serving: raw LETOR feature vectors in, the scores
    /// `predict` gives out.
    Export(export::ExportArgs),
    /// Train and compare no-distillation, self-distillation, GenD, PFD (and multi-teacher PFD,
    /// Ranking Distillation) over several seeds; write a report, JSON, CSV and plots.
    Compare(compare::CompareArgs),
    /// One parameter over a range (alpha, tau-target, tau-priv, privileged-count, query-spread;
    /// with --privileged logs: sessions, position-bias, conversion-rate), every method at each
    /// value: tables and plots.
    Sweep(sweep::SweepArgs),
    /// Log-loss against the global objectives (AUC-PR, recall at precision, precision at recall,
    /// TPR at FPR, AUC-ROC, F-beta) on an imbalanced binary task, over several seeds.
    Objectives(objectives::ObjectivesArgs),
    /// Measure speed: parsing, cache loading, matrix products, training throughput.
    Bench(bench::BenchArgs),
    /// Print a shell's completion script for distillrank, every flag included.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a page of the docs book's reference, generated: the settings (from the table of
    /// settings) or the CLI (from this command line's definition).
    #[command(hide = true)]
    Reference {
        /// The page: settings or cli.
        #[arg(value_enum)]
        page: ReferencePage,
    },
}

/// The generated pages of the docs book's reference.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ReferencePage {
    Settings,
    Cli,
}

/// The CLI reference of the docs book: every subcommand's `--help`, as the command line prints
/// it, examples included.
pub fn cli_reference() -> String {
    fn walk(c: &mut clap::Command, path: &str, out: &mut String) {
        let mut help = Vec::new();
        c.write_long_help(&mut help).expect("help writes to memory");
        let help = String::from_utf8_lossy(&help);
        out.push_str(&format!(
            "## `{path}`\n\n```text\n{}\n```\n\n",
            help.trim_end()
        ));
        for sub in c.get_subcommands_mut() {
            if sub.get_name() != "help" && !sub.is_hide_set() {
                let path = format!("{path} {}", sub.get_name());
                walk(sub, &path, out);
            }
        }
    }
    let mut out = String::from(
        "# CLI reference\n\nGenerated from the command line's definition by `cargo xtask docs`; a test fails\n\
         when this page and `distillrank --help` disagree. The flags that fill a setup's fields take\n\
         their help, range and default from the [settings reference](settings.md).\n\n",
    );
    let mut line = command();
    line.build();
    walk(&mut line, "distillrank", &mut out);
    out
}

#[derive(Subcommand)]
pub enum DataCommand {
    /// Queries, documents, features, grade histogram, constant features, groups without a
    /// positive grade, and the regular / privileged features training would keep.
    Stats(StatsArgs),
    /// Write synthetic LETOR data.
    Synth {
        #[command(flatten)]
        synth: flags::TableFlags<flags::Generator>,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Build the binary cache FILE.drcache, which later commands load instead of parsing FILE.
    Cache(FileArgs),
    /// Convert ranking data between LETOR text and Parquet, keeping which entries the input
    /// left out (a .drcache keeps the values and a Parquet source's column names, not which
    /// entries were left out: every entry is written, with a warning).
    /// FILE: LETOR / SVMlight text (optionally .gz), a Parquet file or a folder of
    /// Parquet part files, or a .drcache. OUT: Parquet when it ends in .parquet (columns qid,
    /// label, f1, f2, ...; row groups cut at query boundaries), LETOR text otherwise (gzip when
    /// it ends in .gz).
    Convert {
        #[command(flatten)]
        file: FileArgs,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Simulate a search engine's interaction logs over LETOR files: append impressions, clicks,
    /// click-through rate, mean displayed position, dwell time (the privileged features z) and
    /// conversions (the sparse label y) to every document, and write OUT.logs.json naming them.
    /// Give the training file first (the logging ranker learns from it); train with
    /// --privileged logs.
    SimulateLogs(SimulateLogsArgs),
    /// Sum a user's impressions log into the same columns as simulate-logs appends: impressions,
    /// clicks, click-through rate, mean displayed position, mean dwell of the clicks (z) and
    /// conversions (y) of every document, with OUT.logs.json naming them and the training file's
    /// clicks by rank beside it (OUT.clicks); train with --privileged logs and the click methods.
    AggregateLogs(AggregateLogsArgs),
}

#[derive(Args, Clone)]
pub struct AggregateLogsArgs {
    /// LETOR / SVMlight or Parquet files (optionally .gz; LightGBM style with FILE.query),
    /// training file first.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The impressions log (tab-separated, gzip or Parquet: qid, session, position, doc or docid,
    /// click, then optionally list_log_probability, conversion and dwell, in seconds), or the
    /// click table distillrank.dask.click_table wrote: one for every file (each file reads its own
    /// queries from it), or one a file, comma-separated in the files' order.
    #[arg(long)]
    pub impressions: String,
    /// Output: a file for one input (unless it is an existing folder or ends in /), a folder for
    /// several (created if missing; each output keeps its input's name). No output may replace an
    /// input.
    #[arg(short, long)]
    pub out: PathBuf,
}

#[derive(Args, Clone)]
pub struct SimulateLogsArgs {
    /// LETOR / SVMlight files (optionally .gz; LightGBM style with FILE.query), training file
    /// first.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output: a file for one input (unless it is an existing folder or ends in /), a folder for
    /// several (created if missing; each output keeps its input's name). No output may replace an
    /// input.
    #[arg(short, long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub logs: flags::TableFlags<flags::Logs>,
}

impl DataArgs {
    /// The data part of the comparison these arguments describe: the files' source (or the
    /// generator's, with its flags), then the data's flags, then the simulated logs' when the
    /// privileged features are the logs (their options are checked only where they are used).
    pub fn setup(&self) -> distillrank::error::Result<DataSetup> {
        self.setup_for(false)
    }

    /// [`DataArgs::setup`] for a command that prepares one split (train, sweep): the folds are
    /// refused first, before what they would refuse beside them.
    pub fn one_split_setup(&self) -> distillrank::error::Result<DataSetup> {
        self.setup_for(true)
    }

    fn setup_for(&self, one_split: bool) -> distillrank::error::Result<DataSetup> {
        use distillrank::error::Error;
        let files = &self.files;
        let path = |p: &PathBuf| p.display().to_string();
        let source = match (&files.bundled, &files.train) {
            (Some(name), _) if name == "mq2008" => {
                files.refuse_beside_bundled()?;
                DataSource::Mq2008
            }
            (Some(name), _) if name == "mq2008-folds" => {
                files.refuse_beside_bundled()?;
                DataSource::Mq2008Folds
            }
            (Some(name), _) => {
                return Err(Error::Config(format!(
                    "--bundled {name}: the bundled data are mq2008 (its Fold1) and mq2008-folds (its five parts, LETOR 4.0's five folds)"
                )))
            }
            (None, Some(train)) => DataSource::Files {
                train: path(train),
                valid: files.valid.as_ref().map(path),
                test: files.test.as_ref().map(path),
                train_query: files.train_query.as_ref().map(path),
                valid_query: files.valid_query.as_ref().map(path),
                test_query: files.test_query.as_ref().map(path),
            },
            (None, None) => DataSetup::default().source,
        };
        let mut setup = distillrank::setup::Setup {
            data: DataSetup {
                source,
                ..DataSetup::default()
            },
            ..Default::default()
        }
        .with_flags(self.data.given())?;
        if one_split {
            distillrank::pipeline::preparation::check_one_split(&setup.data)?;
        }
        files.refuse_unread(setup.data.has_folds())?;
        // The folds leave the source at its default (generated data) and read files.
        let synthetic =
            matches!(setup.data.source, DataSource::Synthetic { .. }) && !setup.data.has_folds();
        // A group's flags that these data leave unread are refused by name, not dropped.
        let named = |given: &[(&str, Vec<String>)]| -> String {
            let flags: Vec<String> = given.iter().map(|(f, _)| format!("--{f}")).collect();
            flags.join(", ")
        };
        if synthetic {
            setup = setup.with_flags(self.synth.given())?;
        } else if !self.synth.given().is_empty() {
            return Err(Error::Config(format!(
                "{} describe the generated data, and these data are read (--train, --folds or --bundled): drop them",
                named(self.synth.given())
            )));
        }
        if setup.data.wants_logs() {
            setup = setup.with_flags(self.logs.given())?;
            setup.data.logs.validate()?;
        } else if !self.logs.given().is_empty() {
            return Err(Error::Config(format!(
                "{} describe the simulated logs, which only --privileged logs simulates: give it, or drop them",
                named(self.logs.given())
            )));
        }
        Ok(setup.data)
    }
}

#[derive(Args, Clone)]
pub struct StatsArgs {
    #[command(flatten)]
    pub file: FileArgs,
    #[arg(long)]
    pub privileged: Option<String>,
    #[arg(value_parser = bounded::<f64>("tau-target"), long)]
    pub tau_target: Option<f64>,
    #[arg(value_parser = bounded::<f64>("t"), long)]
    pub t: Option<f64>,
}

#[derive(Args, Clone)]
pub struct FileArgs {
    /// A LETOR / SVMlight file (optionally .gz), a Parquet file or folder of part files, or a
    /// .drcache file.
    pub file: PathBuf,
    /// LightGBM-style group sizes, one a line (default: FILE.query when FILE has no qid:).
    #[arg(long)]
    pub query: Option<PathBuf>,
}

impl FileArgs {
    /// The files the command reads: the file, its `.query` beside it, and `--query`.
    pub fn reads(&self) -> Vec<distillrank::output::Named> {
        let mut reads = distillrank::output::read_with_companions("FILE", &self.file);
        reads.extend(
            self.query
                .iter()
                .map(|q| ("--query".to_string(), q.clone())),
        );
        reads
    }
}

/// Training, validation and test files: LETOR / SVMlight text (optionally .gz) or .drcache.
#[derive(Args, Clone, Debug)]
pub struct SplitFiles {
    /// Training file. Without it, the command's synthetic data (see the synthetic options).
    #[arg(long)]
    pub train: Option<PathBuf>,
    /// Validation file (default: 10% of the training queries held out).
    #[arg(long)]
    pub valid: Option<PathBuf>,
    /// Test file (without one, compare, sweep and objectives hold out 20% of the training
    /// queries).
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Group sizes for a training file without qid: (LightGBM style).
    #[arg(long)]
    pub train_query: Option<PathBuf>,
    /// Group sizes for a validation file without qid:.
    #[arg(long)]
    pub valid_query: Option<PathBuf>,
    /// Group sizes for a test file without qid:.
    #[arg(long)]
    pub test_query: Option<PathBuf>,
    /// Data bundled with distillrank instead of files: mq2008 (MQ2008 Fold1, as on the page), or
    /// mq2008-folds (its five parts: `compare` runs LETOR 4.0's five folds).
    #[arg(long, conflicts_with = "train")]
    pub bundled: Option<String>,
}

impl SplitFiles {
    /// The files the splits read: each split's file and the `.query` beside it, and the
    /// `--*-query` files.
    pub fn reads(&self) -> Vec<distillrank::output::Named> {
        let mut reads = Vec::new();
        for (flag, file) in [
            ("--train", &self.train),
            ("--valid", &self.valid),
            ("--test", &self.test),
        ] {
            if let Some(file) = file {
                reads.extend(distillrank::output::read_with_companions(flag, file));
            }
        }
        for (flag, file) in [
            ("--train-query", &self.train_query),
            ("--valid-query", &self.valid_query),
            ("--test-query", &self.test_query),
        ] {
            reads.extend(file.iter().map(|f| (flag.to_string(), f.clone())));
        }
        reads
    }

    /// Refuses split files that nothing would read, each by its flag: any beside the folds
    /// (`folds`: `--folds` or `--bundled mq2008-folds`), whose parts are every split's files and
    /// take their group sizes from `PART.query` beside them; a validation or test file without
    /// the training file; a `--*-query` file without the split file it gives groups to.
    pub fn refuse_unread(&self, folds: bool) -> distillrank::error::Result<()> {
        use distillrank::error::Error;
        let given = |flags: &[(&'static str, bool)]| -> Vec<&'static str> {
            flags.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect()
        };
        let splits = [
            ("--valid", self.valid.is_some()),
            ("--test", self.test.is_some()),
            ("--train-query", self.train_query.is_some()),
            ("--valid-query", self.valid_query.is_some()),
            ("--test-query", self.test_query.is_some()),
        ];
        let beside = given(&splits);
        if folds && !beside.is_empty() {
            return Err(Error::Config(format!(
                "the folds name every split's files (each fold's parts; a part without qid: takes its group sizes from PART.query beside it): drop {}",
                beside.join(", ")
            )));
        }
        if self.train.is_none() && self.bundled.is_none() {
            let without = given(&splits[..2]);
            if !without.is_empty() {
                let verb = if without.len() == 1 { "needs" } else { "need" };
                return Err(Error::Config(format!(
                    "{} {verb} --train (the training file)",
                    without.join(" and ")
                )));
            }
        }
        for (query, flag, file) in [
            ("--train-query", "--train", self.train.is_some()),
            ("--valid-query", "--valid", self.valid.is_some()),
            ("--test-query", "--test", self.test.is_some()),
        ] {
            if beside.contains(&query) && !file {
                return Err(Error::Config(format!(
                    "{query} gives the group sizes of the {flag} file, and no {flag} file is named: name it, or drop {query}"
                )));
            }
        }
        Ok(())
    }

    /// Refuses files given beside `--bundled`: the bundled data have their own three splits, and
    /// a file beside them would be dropped without a word.
    pub fn refuse_beside_bundled(&self) -> distillrank::error::Result<()> {
        let beside: Vec<&str> = [
            ("--train", self.train.is_some()),
            ("--valid", self.valid.is_some()),
            ("--test", self.test.is_some()),
            ("--train-query", self.train_query.is_some()),
            ("--valid-query", self.valid_query.is_some()),
            ("--test-query", self.test_query.is_some()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(flag, _)| *flag)
        .collect();
        if beside.is_empty() {
            return Ok(());
        }
        Err(distillrank::error::Error::Config(format!(
            "--bundled mq2008 has its own splits: drop {}",
            beside.join(", ")
        )))
    }
}

/// Where the data come from and how they are prepared (spec §1).
#[derive(Args, Clone, Debug)]
pub struct DataArgs {
    #[command(flatten)]
    pub files: SplitFiles,
    #[command(flatten)]
    pub data: flags::TableFlags<flags::Data>,
    #[command(flatten)]
    pub synth: flags::TableFlags<flags::Synthetic>,
    #[command(flatten)]
    pub logs: flags::TableFlags<flags::Logs>,
}

#[derive(Args, Clone, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// Which features the model sees: regular (x), privileged (z) or both.
    #[arg(long, value_enum, default_value = "regular")]
    pub features: ViewArg,
    /// One model's training settings, from the table of settings: every row that fills a field
    /// the training loop reads (`--loss`, `--lr`, `--weight-decay`, `--widths`, `--dropout`,
    /// `--ensemble`, `--objective`, `--backend`, ...).
    #[command(flatten)]
    pub training: flags::TableFlags<flags::Model>,
    /// Seed of the initial weights and the batch order.
    #[arg(value_parser = bounded::<u64>("seed"), long, default_value_t = 0)]
    pub seed: u64,
    /// Save the best model as PREFIX.safetensors + PREFIX.json.
    #[arg(long)]
    pub save: Option<PathBuf>,
}

/// The engine for `--backend` ([`Engine::open`], the one place that decides `auto`), saying
/// which it took.
pub fn engine(backend: Backend, out: &progress::Output) -> distillrank::error::Result<Engine> {
    let (engine, note) = distillrank::native::open_engine(backend)?;
    out.note(note);
    Ok(engine)
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ViewArg {
    Regular,
    Privileged,
    Both,
}

impl From<ViewArg> for FeatureView {
    fn from(v: ViewArg) -> Self {
        match v {
            ViewArg::Regular => FeatureView::Regular,
            ViewArg::Privileged => FeatureView::Privileged,
            ViewArg::Both => FeatureView::Both,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum IdcgZeroArg {
    Exclude,
    Zero,
    One,
}

impl From<IdcgZeroArg> for IdcgZero {
    fn from(c: IdcgZeroArg) -> Self {
        match c {
            IdcgZeroArg::Exclude => IdcgZero::Exclude,
            IdcgZeroArg::Zero => IdcgZero::Zero,
            IdcgZeroArg::One => IdcgZero::One,
        }
    }
}

#[derive(Args, Clone, Debug)]
pub struct EvalArgs {
    /// Saved model: PREFIX (or PREFIX.json / PREFIX.safetensors), or a tree model trained
    /// elsewhere (a LightGBM model file or dump_model() JSON, an XGBoost JSON model), scored as
    /// its library scores it.
    #[arg(long)]
    pub model: PathBuf,
    /// A tree model's columns against the file's features: from-1 (column 0 is feature 1: a
    /// model trained on arrays), from-0 (column j is feature j: LightGBM's or XGBoost's own LETOR
    /// reader), or auto (by the model's width against the file's, else by the columns its trees
    /// split on).
    #[arg(long, value_enum, default_value = "auto")]
    pub columns: ColumnsArg,
    /// What an entry the file leaves out is to a tree model: zero (a model trained on dense
    /// arrays, whose zeros were values), missing (one trained on sparse rows or with NaN there),
    /// or auto (what its library's own LETOR reader makes of it: missing for XGBoost, 0 for
    /// LightGBM).
    #[arg(long, value_enum, default_value = "auto")]
    pub absent: AbsentArg,
    /// A LETOR file (optionally .gz) with the columns the model was trained on.
    pub file: PathBuf,
    /// Group sizes for a file without qid:.
    #[arg(long)]
    pub query: Option<PathBuf>,
    /// Evaluate against the graded relevance (gain 2^g - 1), or the binary labels `train` gives this
    /// file as its --test (or --valid) split: same group filter, same seeded Gumbel draws.
    #[arg(long, value_enum, default_value = "graded")]
    pub labels: LabelsArg,
    /// With --labels binary (default: the model's training's; for a model that records none,
    /// as a tree model, from this file's largest grade).
    #[arg(value_parser = bounded::<f64>("tau-target"), long)]
    pub tau_target: Option<f64>,
    /// With --labels binary (default: the model's training's, when it records one).
    #[arg(value_parser = bounded::<f64>("t"), long)]
    pub t: Option<f64>,
    /// With --labels binary: train's --data-seed. Not given: the model's training's, when it
    /// records one; else the default below.
    #[arg(value_parser = bounded::<u64>("data-seed"), long)]
    pub data_seed: u64,
    /// With --labels binary, as training does. Not given: the model's training's, when it
    /// records one; else the default below.
    #[arg(value_parser = bounded::<usize>("min-group-size"), long)]
    pub min_group_size: usize,
    /// With --labels binary: which split of training this file played.
    #[arg(long, value_enum, default_value = "test")]
    pub split: SplitArg,
    #[arg(long, value_enum)]
    pub idcg_zero: IdcgZeroArg,

    /// Accept a file narrower than the model's training data (its last columns absent, as in a
    /// sparse file whose last features are zero everywhere) and read the missing columns as 0.
    /// Without it a file of another width is refused. A switch: it takes no value.
    #[arg(long)]
    pub allow_missing_features: bool,
    #[arg(long, value_enum)]
    pub backend: Backend,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum AbsentArg {
    Auto,
    Missing,
    Zero,
}

impl From<AbsentArg> for distillrank::forest::Absent {
    fn from(a: AbsentArg) -> Self {
        match a {
            AbsentArg::Auto => distillrank::forest::Absent::Auto,
            AbsentArg::Missing => distillrank::forest::Absent::Missing,
            AbsentArg::Zero => distillrank::forest::Absent::Zero,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum ColumnsArg {
    Auto,
    #[value(name = "from-1")]
    From1,
    #[value(name = "from-0")]
    From0,
}

impl From<ColumnsArg> for distillrank::forest::Columns {
    fn from(c: ColumnsArg) -> Self {
        match c {
            ColumnsArg::Auto => distillrank::forest::Columns::Auto,
            ColumnsArg::From1 => distillrank::forest::Columns::From1,
            ColumnsArg::From0 => distillrank::forest::Columns::From0,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum SplitArg {
    Valid,
    Test,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum LabelsArg {
    Graded,
    Binary,
}

#[derive(Args, Clone, Debug)]
pub struct PredictArgs {
    /// Saved model: PREFIX (or PREFIX.json / PREFIX.safetensors), or a tree model trained
    /// elsewhere (a LightGBM model file or dump_model() JSON, an XGBoost JSON model): its raw
    /// scores (margins), as its library's predict gives them with raw_score / output_margin
    /// (a LightGBM random forest's: its trees' mean, which its raw_score leaves summed).
    #[arg(long)]
    pub model: PathBuf,
    /// A tree model's columns against the file's features, as for eval.
    #[arg(long, value_enum, default_value = "auto")]
    pub columns: ColumnsArg,
    /// What an entry the file leaves out is to a tree model, as for eval.
    #[arg(long, value_enum, default_value = "auto")]
    pub absent: AbsentArg,
    /// A LETOR file (optionally .gz) to score.
    pub file: PathBuf,
    /// Group sizes for a file without qid:.
    #[arg(long)]
    pub query: Option<PathBuf>,
    /// Write a TREC run file (qid Q0 docno rank score tag) here instead of one score a line on
    /// stdout; docno is the line's docid comment (#docid = ...) where every line has one, unique
    /// within its query, else docN, the document's 0-based place in its query.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Accept a file narrower than the model's training data (its last columns absent, as in a
    /// sparse file whose last features are zero everywhere) and read the missing columns as 0.
    /// Without it a file of another width is refused. A switch: it takes no value.
    #[arg(long)]
    pub allow_missing_features: bool,
    #[arg(long, value_enum)]
    pub backend: Backend,
}

/// A failed write to stdout: a closed pipe is a quiet end (the reader has what it wanted).
pub fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}

pub fn run(cli: Cli) -> distillrank::error::Result<()> {
    let out = progress::Output {
        quiet: cli.quiet || cli.json,
        json: cli.json,
    };
    match cli.command {
        Command::Data(DataCommand::Stats(f)) => commands::stats(&f, &out),
        Command::Data(DataCommand::Synth { synth, out: path }) => {
            commands::synth(&synth, &path, &out)
        }
        Command::Data(DataCommand::Cache(f)) => commands::cache(&f, &out),
        Command::Data(DataCommand::Convert { file, out: path }) => {
            commands::convert(&file, &path, &out)
        }
        Command::Data(DataCommand::SimulateLogs(args)) => commands::simulate_logs(&args, &out),
        Command::Data(DataCommand::AggregateLogs(args)) => commands::aggregate_logs(&args, &out),
        Command::Train(args) => commands::train(&args, &out),
        Command::Eval(args) => commands::eval(&args, &cli.given, &out),
        Command::Predict(args) => commands::predict(&args, &cli.given, &out),
        Command::Export(args) => export::run(&args, &out),
        Command::Compare(args) => compare::run(&args, &cli.given, &out),
        Command::Sweep(args) => sweep::run(&args, &cli.given, &out),
        Command::Objectives(args) => objectives::run(&args, &cli.given, &out),
        Command::Bench(args) => bench::run(&args, &out),
        Command::Reference { page } => {
            let text = match page {
                ReferencePage::Settings => distillrank::settings::reference_markdown(),
                ReferencePage::Cli => cli_reference(),
            };
            outln!("{}", text.trim_end());
            Ok(())
        }
        Command::Completions { shell } => {
            use std::io::Write;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "distillrank", &mut script);
            std::io::stdout()
                .write_all(&script)
                .map_err(|e| distillrank::error::Error::io("standard output", e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{command, parse_from, EXAMPLES};

    /// Every subcommand that runs (leaves of the tree, `help` aside), as `data stats`.
    fn leaves(c: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in c
            .get_subcommands()
            .filter(|s| s.get_name() != "help" && !s.is_hide_set())
        {
            let path = format!("{prefix}{}", sub.get_name());
            if sub.has_subcommands() && sub.get_subcommands().any(|s| s.get_name() != "help") {
                leaves(sub, &format!("{path} "), out);
            } else {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_subcommand_ends_its_help_with_two_or_three_examples_that_parse() {
        let mut all = Vec::new();
        leaves(&command(), "", &mut all);
        // `bench`'s subcommands share its examples.
        let listed = |path: &str| {
            EXAMPLES
                .iter()
                .find(|(p, _)| *p == path || path.starts_with(&format!("{p} ")))
        };
        for path in &all {
            let (_, examples) = listed(path).unwrap_or_else(|| panic!("{path}: no examples"));
            assert!(
                (1..=3).contains(&examples.len()),
                "{path}: {} examples",
                examples.len()
            );
        }
        for (path, examples) in EXAMPLES {
            for example in *examples {
                let line = example.split(" > ").next().unwrap();
                assert!(
                    line.starts_with(&format!("distillrank {path}")),
                    "{path}: {example}"
                );
                let words: Vec<&str> = line.split_whitespace().collect();
                if let Err(e) = parse_from(&words) {
                    panic!("{path}: `{example}` does not parse: {e}");
                }
            }
            let mut help = Vec::new();
            let mut line = command();
            let mut sub = &mut line;
            for name in path.split(' ') {
                sub = sub
                    .find_subcommand_mut(name)
                    .expect("a subcommand of the table");
            }
            sub.write_long_help(&mut help).unwrap();
            let help = String::from_utf8(help).unwrap();
            assert!(
                help.trim_end().ends_with(examples.last().unwrap()),
                "{path}: {help}"
            );
        }
    }
}
