//! The flags of the table of settings ([`distillrank::settings`]): one flag for every row that
//! fills a comparison's field, grouped by the part of the setup it fills ([`FlagSet`]), so that a
//! new row is a flag of every command that takes its group, with no line here or in the command.
//! The row gives the flag its help, default and range ([`super::command`]); the values the
//! command line gives are read by [`Setup::with_flags`] as a setup's JSON is read.

use std::marker::PhantomData;

use distillrank::data::logs::LogOptions;
use distillrank::data::synth::SynthOptions;
use distillrank::error::{Error, Result};
use distillrank::settings::{comparison_field, flag_fields};
use distillrank::setup::{DataSource, Setup};

use super::bounded;

/// Which part of a comparison's setup a group of flags fills, by the fields' paths.
pub trait FlagSet: Clone + std::fmt::Debug + Default + Send + Sync + 'static {
    fn holds(path: &str) -> bool;
}

/// The training settings (`--methods`, `--alpha`, `--widths`, `--rd-k`, ...): every field outside
/// the data.
#[derive(Clone, Debug, Default)]
pub struct Training;

/// One model's training settings, for `train` (`--loss`, `--lr`, `--widths`, `--dropout`,
/// `--backend`, ...): the fields of a setup that [`distillrank::ranking::train::TrainConfig`]
/// reads, but those of distillation and early stopping, which a model trained alone has no use
/// for (`train` runs every epoch and keeps the best; it has no teacher to mix in).
#[derive(Clone, Debug, Default)]
pub struct Model;

/// The data's own settings (`--privileged`, `--tau-target`, `--min-group-size`, ...), besides the
/// generator's and the log simulator's.
#[derive(Clone, Debug, Default)]
pub struct Data;

/// The generator's settings (`--queries`, `--regular`, ...).
#[derive(Clone, Debug, Default)]
pub struct Synthetic;

/// The generator's own options (`--queries`, `--regular`, ...), for `data synth`, which writes
/// one file of training queries: a comparison's validation and test queries are not among them.
#[derive(Clone, Debug, Default)]
pub struct Generator;

/// The log simulator's settings (`--sessions`, `--click-model`, ...).
#[derive(Clone, Debug, Default)]
pub struct Logs;

const SYNTHETIC: &str = "data.source.synthetic.";
const LOGS: &str = "data.logs.";
const GENERATOR: &str = "data.source.synthetic.options.";

impl FlagSet for Training {
    fn holds(path: &str) -> bool {
        !path.starts_with("data.")
    }
}

impl FlagSet for Model {
    fn holds(path: &str) -> bool {
        path == "backend"
            || (distillrank::ranking::train::reads_setup_field(path)
                && !matches!(path, "alpha" | "patience"))
    }
}

impl FlagSet for Data {
    fn holds(path: &str) -> bool {
        path.starts_with("data.") && !Synthetic::holds(path) && !Logs::holds(path)
    }
}

impl FlagSet for Synthetic {
    fn holds(path: &str) -> bool {
        path.starts_with(SYNTHETIC)
    }
}

impl FlagSet for Generator {
    fn holds(path: &str) -> bool {
        path.starts_with(GENERATOR)
    }
}

impl FlagSet for Logs {
    fn holds(path: &str) -> bool {
        path.starts_with(LOGS)
    }
}

/// The flags of one group, with the values the command line gave them.
#[derive(Clone, Debug, Default)]
pub struct TableFlags<S: FlagSet> {
    given: Vec<(&'static str, Vec<String>)>,
    set: PhantomData<S>,
}

impl<S: FlagSet> TableFlags<S> {
    /// The group's flags, by name.
    fn flags() -> impl Iterator<Item = &'static str> {
        flag_fields()
            .filter(|(_, path)| S::holds(path))
            .map(|(flag, _)| flag)
    }

    /// The flags the command line gave, each with its values.
    pub fn given(&self) -> &[(&'static str, Vec<String>)] {
        &self.given
    }
}

impl TableFlags<Training> {
    /// The comparison these flags describe, on the data `data`.
    pub fn setup(&self, data: distillrank::setup::DataSetup) -> Result<Setup> {
        Setup {
            data,
            ..Setup::default()
        }
        .with_flags(self.given())
    }
}

impl TableFlags<Model> {
    /// The setup these flags describe (the table's defaults for the others).
    pub fn setup(&self) -> Result<Setup> {
        Setup::default().with_flags(self.given())
    }
}

impl TableFlags<Generator> {
    /// The generator's options these flags give (the table's defaults for the others).
    pub fn options(&self) -> Result<SynthOptions> {
        match Setup::default().with_flags(self.given())?.data.source {
            DataSource::Synthetic { options, .. } => Ok(options),
            _ => Err(Error::Config("the default data are not synthetic".into())),
        }
    }
}

impl TableFlags<Logs> {
    /// The log simulator's options these flags give (the table's defaults for the others),
    /// checked.
    pub fn options(&self) -> Result<LogOptions> {
        let logs = Setup::default().with_flags(self.given())?.data.logs;
        logs.validate()?;
        Ok(logs)
    }
}

/// A text flag's value, checked as [`Setup::with_flags`] reads it (`--rd-weighting bogus` names
/// the weightings), so that clap refuses it beside the flag before anything runs.
fn checked_text(
    flag: &'static str,
) -> impl Fn(&str) -> std::result::Result<String, String> + Clone {
    move |text: &str| {
        Setup::default()
            .with_flags(&[(flag, vec![text.to_string()])])
            .map(|_| text.to_string())
            .map_err(|e| {
                let message = e.message();
                message
                    .strip_prefix(&format!("--{flag}: "))
                    .map_or(message.clone(), str::to_string)
            })
    }
}

impl<S: FlagSet> clap::Args for TableFlags<S> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Self::flags().fold(cmd, |cmd, flag| {
            let Some((setting, path)) = comparison_field(flag) else {
                return cmd;
            };
            let arg = clap::Arg::new(flag)
                .long(flag)
                .value_name(flag.to_uppercase().replace('-', "_"))
                .action(clap::ArgAction::Set);
            let switch = matches!(distillrank::settings::default_text(path), "true" | "false");
            let arg = match setting.range {
                // A list that may be empty (`--widths none`): one value, read whole.
                Some(_) if setting.empty_list.is_some() => {
                    arg.value_parser(super::widths(setting.name))
                }
                Some(range) if range.integer => {
                    arg.value_parser(bounded::<u64>(flag)).value_delimiter(',')
                }
                Some(_) => arg.value_parser(bounded::<f64>(flag)).value_delimiter(','),
                // A switch: `--prepared-cache` alone is `--prepared-cache true`.
                None if switch => arg
                    .value_parser(checked_text(flag))
                    .num_args(0..=1)
                    .default_missing_value("true"),
                // The losses are entries: their names and help are the flag's possible values.
                None if flag == "loss" => {
                    arg.value_parser(clap::builder::PossibleValuesParser::new(
                        distillrank::model::loss::LOSSES
                            .iter()
                            .map(|e| clap::builder::PossibleValue::new(e.name).help(e.help)),
                    ))
                }
                // A list of names (`--methods gend,pfd`); a spec such as `--privileged cols:3,7`
                // keeps its commas.
                None if path == "methods" => {
                    arg.value_parser(checked_text(flag)).value_delimiter(',')
                }
                None => arg.value_parser(checked_text(flag)),
            };
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<S: FlagSet> clap::FromArgMatches for TableFlags<S> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut flags = TableFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        use clap::parser::ValueSource;
        for flag in Self::flags() {
            if matches.value_source(flag) != Some(ValueSource::CommandLine) {
                continue;
            }
            let values: Vec<String> =
                if let Ok(Some(v)) = matches.try_get_many::<super::Widths>(flag) {
                    v.map(super::Widths::text).collect()
                } else if let Ok(Some(v)) = matches.try_get_many::<u64>(flag) {
                    v.map(u64::to_string).collect()
                } else if let Ok(Some(v)) = matches.try_get_many::<f64>(flag) {
                    v.map(f64::to_string).collect()
                } else if let Ok(Some(v)) = matches.try_get_many::<String>(flag) {
                    v.cloned().collect()
                } else {
                    continue;
                };
            // Several numbers where the field holds one (`--ensemble 2,3`): a usage error, as
            // clap's own refusal of a value is, not a failure of the run.
            if values.len() > 1 {
                if let Err(e) = Setup::default().with_flags(&[(flag, values.clone())]) {
                    let message = e.message();
                    if message.contains("values (") && message.contains("where it takes one") {
                        return Err(clap::Error::raw(
                            clap::error::ErrorKind::ValueValidation,
                            format!("{message}\n"),
                        ));
                    }
                }
            }
            self.given.retain(|(f, _)| *f != flag);
            self.given.push((flag, values));
        }
        Ok(())
    }
}
