//! The walk over the CLI's own definition and over every field of `setup.json`: each numeric flag
//! of each subcommand gets 0, -1, 1e15, 2^64 - 1, NaN, inf and -inf; each path flag a folder,
//! `/dev/zero` (through a link), an empty name and a missing file; each numeric field of a setup 0, -1, 1e15,
//! 2^64 - 1 and +-1e308. Every run must end in exit 0 with finite numbers, or in a clear error
//! naming the flag (or field, or file). None may panic, abort, hang or grow past the memory the
//! test allows it.
//!
//! The flags come from clap's `Command` tree and the fields from a setup's JSON, so a new flag or
//! field is walked without editing this test; one without a row in the table of settings
//! (`distillrank::settings::SETTINGS`) fails it.

#![cfg(not(target_arch = "wasm32"))]

#[allow(dead_code, unused_imports, unused_macros)]
#[path = "../crate/cli/mod.rs"]
mod cli;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use distillrank::settings;

/// Values every numeric flag is tried with.
const NUMBERS: [&str; 7] = [
    "0",
    "-1",
    "1e15",
    "18446744073709551615",
    "NaN",
    "inf",
    "-inf",
];
/// And every numeric field of a setup (JSON has no NaN or infinity).
const JSON_NUMBERS: [&str; 6] = ["0", "-1", "1e15", "18446744073709551615", "1e308", "-1e308"];
/// Each run's ceiling: address space (a failed allocation aborts, which fails the run) and time.
const MEMORY_KIB: u64 = 4 << 20;
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// The synthetic data of every run here: small queries, few features.
const DATA_SHAPE: &[&str] = &[
    "--regular",
    "6",
    "--privileged-count",
    "2",
    "--min-docs",
    "10",
    "--max-docs",
    "14",
];

/// A tiny synthetic run, for the commands that generate their data.
fn small() -> Vec<&'static str> {
    [
        &[
            "--queries",
            "40",
            "--valid-queries",
            "20",
            "--test-queries",
            "20",
        ][..],
        DATA_SHAPE,
        &["--widths", "4", "--epochs", "1", "--quiet"],
    ]
    .concat()
}

const SHAPE: &[&str] = &[
    "--features",
    "8",
    "--groups-per-batch",
    "2",
    "--docs-per-group",
    "4",
    "--widths",
    "4",
];

/// The arguments that make each subcommand run quickly. `{data}` is a small LETOR file,
/// `{copy}` a copy of it in the case's own folder (for commands that write beside their input),
/// `{model}` a saved model, `{log}` an impressions log of `{data}`'s queries, `{case}` the case's
/// own folder.
fn base(subcommand: &'static str) -> Option<Vec<&'static str>> {
    let mut args: Vec<&str> = match subcommand {
        "data stats" => vec!["{data}"],
        "data synth" => vec![
            "--queries",
            "20",
            "--regular",
            "4",
            "--privileged-count",
            "2",
            "--out",
            "{case}/synth.txt",
        ],
        "data cache" => vec!["{copy}"],
        "data convert" => vec!["{copy}", "--out", "{case}/converted.parquet"],
        "data simulate-logs" => vec!["{copy}", "--out", "{case}/logged.txt", "--sessions", "5"],
        "data aggregate-logs" => vec![
            "{copy}",
            "--impressions",
            "{log}",
            "--out",
            "{case}/aggregated.txt",
        ],
        "eval" => vec!["--model", "{model}", "{data}", "--backend", "cpu"],
        "predict" => vec!["--model", "{model}", "{data}"],
        "export" => vec!["--model", "{model}", "--onnx", "{case}/model.onnx"],
        "train" => [&small()[..], &["--backend", "cpu"]].concat(),
        "compare" => [
            &small()[..],
            &["--seeds", "1", "--backend", "cpu", "--out", "{case}/out"],
        ]
        .concat(),
        "sweep" => [
            &small()[..],
            &[
                "--param",
                "alpha",
                "--values",
                "0.3",
                "--seeds",
                "1",
                "--backend",
                "cpu",
                "--out",
                "{case}/out",
            ],
        ]
        .concat(),
        "objectives" => vec![
            "--train-examples",
            "300",
            "--valid-examples",
            "200",
            "--test-examples",
            "200",
            "--features",
            "5",
            "--epochs",
            "1",
            "--seeds",
            "1",
            "--widths",
            "4",
            "--quiet",
            "--out",
            "{case}/out",
        ],
        "bench gemm" => vec!["--repeat", "1"],
        "bench parse" => vec!["{data}", "--repeat", "1"],
        "bench cache" => vec!["{copy}", "--repeat", "1"],
        "bench train" | "bench profile" => [&["--steps", "1", "--warmup", "0"], SHAPE].concat(),
        "bench kernels" => [&["--steps", "1"], SHAPE].concat(),
        _ => return None,
    };
    args.splice(0..0, subcommand.split(' '));
    Some(args)
}

/// The fixtures every case shares: a small LETOR file, a model trained on it, and a link to
/// `/dev/zero` (through which an output that wrongly replaced its target would replace the
/// link, not the device).
struct Fixtures {
    dir: tempfile::TempDir,
    data: String,
    model: String,
    log: String,
    zero: String,
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_distillrank")
}

fn fixtures() -> Fixtures {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.txt").display().to_string();
    let model = dir.path().join("model").display().to_string();
    let ok = |args: &[&str]| {
        let out = Command::new(binary()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(&[
        &["data", "synth", "--queries", "30", "-o", &data][..],
        DATA_SHAPE,
    ]
    .concat());
    ok(&[
        "train",
        "--train",
        &data,
        "--tau-target",
        "3",
        "--t",
        "8",
        "--widths",
        "4",
        "--epochs",
        "1",
        "--backend",
        "cpu",
        "--quiet",
        "--save",
        &model,
    ]);
    let logged = dir.path().join("logged.txt").display().to_string();
    ok(&[
        "data",
        "simulate-logs",
        &data,
        "-o",
        &logged,
        "--sessions",
        "5",
        "--quiet",
    ]);
    let zero = dir.path().join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    Fixtures {
        log: format!("{logged}.impressions.tsv"),
        zero: zero.display().to_string(),
        dir,
        data,
        model,
    }
}

/// One run to try: its arguments, and what a refusal must name.
struct Case {
    args: Vec<String>,
    /// A refusal must contain one of these (the flag, the field or the file).
    names: Vec<String>,
    /// A setup file to write first, as (path, text).
    setup: Option<(PathBuf, String)>,
}

/// What went wrong with a case, or `None`.
fn try_case(case: &Case) -> Option<String> {
    if let Some((path, text)) = &case.setup {
        std::fs::write(path, text).unwrap();
    }
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB}; exec \"$0\" \"$@\""))
        .arg(binary())
        .args(&case.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = shell.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            child.kill().ok();
            child.wait().ok();
            return Some(format!("still running after {} s", TIME_LIMIT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if stderr.contains("panicked") || stderr.contains("memory allocation") {
        return Some(format!("panicked or aborted: {stderr}"));
    }
    match status.code() {
        Some(0) => {
            let words =
                stdout.split(|c: char| c.is_whitespace() || c == ',' || c == ':' || c == '"');
            let bad: Vec<&str> = words
                .filter(|w| ["NaN", "nan", "inf", "-inf", "Infinity"].contains(w))
                .collect();
            (!bad.is_empty()).then(|| format!("exit 0 with non-finite numbers {bad:?}: {stdout}"))
        }
        Some(1 | 2) => {
            let named = case.names.iter().any(|n| stderr.contains(n.as_str()));
            (!stderr.contains("error:") || !named)
                .then(|| format!("refused without naming any of {:?}: {stderr}", case.names))
        }
        Some(code) => Some(format!("exit {code}: {stderr}")),
        None => Some(format!("killed by a signal: {stderr}")),
    }
}

/// Runs the cases on both cores; returns every failure, described.
fn run_all(cases: Vec<Case>) -> Vec<String> {
    let cases = std::sync::Mutex::new(cases.into_iter().collect::<Vec<_>>());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(case) = cases.lock().unwrap().pop() else {
                    break;
                };
                if let Some(why) = try_case(&case) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("distillrank {}: {why}", case.args.join(" ")));
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// Every subcommand of the definition with its path (`data stats`) and its arguments.
fn subcommands() -> Vec<(String, clap::Command)> {
    fn walk(c: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in c.get_subcommands() {
            let name = format!("{path} {}", sub.get_name()).trim().to_string();
            if sub.has_subcommands() {
                walk(sub, &name, out);
            } else {
                out.push((name, sub.clone()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&cli::command(), "", &mut out);
    out
}

fn is_path(arg: &clap::Arg) -> bool {
    arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>()
}

/// The base arguments of a case in `case_dir`, with `arg` set to `value`: replaced where the base
/// gives it, added otherwise. A positional argument replaces the base's first positional value.
fn with_value(
    base: &[&str],
    arg: &clap::Arg,
    value: &str,
    f: &Fixtures,
    case_dir: &Path,
) -> Vec<String> {
    let fill = |s: &str| -> String {
        if s == "{copy}" {
            let copy = case_dir.join("copy.txt");
            std::fs::copy(&f.data, &copy).unwrap();
            return copy.display().to_string();
        }
        s.replace("{data}", &f.data)
            .replace("{model}", &f.model)
            .replace("{log}", &f.log)
            .replace("{case}", &case_dir.display().to_string())
    };
    let mut args: Vec<String> = base.iter().map(|s| fill(s)).collect();
    match arg.get_long() {
        Some(long) => {
            let flag = format!("--{long}");
            match args.iter().position(|a| *a == flag) {
                Some(at) => args[at + 1] = value.to_string(),
                None => args.extend([flag, value.to_string()]),
            }
        }
        None => {
            let at = base
                .iter()
                .position(|s| s.starts_with('{') && (*s == "{data}" || *s == "{copy}"))
                .expect("a positional path in the base arguments");
            args[at] = value.to_string();
        }
    }
    args
}

#[test]
fn every_numeric_flag_has_a_bound_in_the_table_of_settings() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for (name, sub) in subcommands() {
        for arg in sub.get_arguments().filter(|a| cli::is_numeric(a)) {
            seen += 1;
            let long = arg.get_long().unwrap_or("");
            if settings::bound(long).is_none_or(|b| !b.flag) {
                missing.push(format!("{name} --{long}"));
            }
        }
    }
    assert!(seen > 50, "only {seen} numeric flags found");
    assert!(
        missing.is_empty(),
        "numeric flags without a row in distillrank::settings::SETTINGS: {missing:?}"
    );
}

#[test]
fn every_flag_of_the_table_of_settings_is_a_flag_of_compare() {
    let compare = subcommands()
        .into_iter()
        .find(|(name, _)| name == "compare")
        .expect("a compare subcommand")
        .1;
    let missing: Vec<&str> = settings::flag_fields()
        .map(|(flag, _)| flag)
        .filter(|&flag| !compare.get_arguments().any(|a| a.get_long() == Some(flag)))
        .collect();
    assert!(missing.is_empty(), "not flags of compare: {missing:?}");
}

/// A value of a numeric row other than its default, as the flag spells it.
fn another_value(setting: &settings::Setting, default: &str) -> String {
    let range = setting.range.expect("a numeric row");
    let default: f64 = default
        .split(',')
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or(f64::NAN);
    let mut candidates = vec![
        range.min,
        range.min + 1.0,
        range.max,
        (range.min + range.max) / 2.0,
    ];
    if !range.integer {
        candidates.push(range.min + (range.max - range.min) / 4.0);
    }
    let v = candidates
        .into_iter()
        .find(|&v| setting.contains(v) && v != default && v.abs() < 1e12)
        .expect("a value in range");
    if range.integer {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

/// A row is a flag with no code of its own (`crate/cli/flags.rs`): the value `compare --FLAG V`
/// gives lands in the row's field of the setup `compare` runs, for every numeric row of a
/// comparison's field (the generator's with synthetic data, the simulated logs' with
/// `--privileged logs`).
#[test]
fn every_numeric_row_of_a_comparison_is_a_flag_whose_value_reaches_its_field() {
    let mut wrong = Vec::new();
    for (flag, path) in settings::flag_fields() {
        let setting = settings::setting_of_field(path).expect("a row");
        if setting.range.is_none() {
            continue;
        }
        let value = another_value(setting, settings::default_text(path));
        let mut line = vec!["distillrank", "compare", "--privileged", "logs"];
        if flag == "privileged" {
            line.truncate(2);
        }
        let flag_arg = format!("--{flag}");
        line.extend([flag_arg.as_str(), value.as_str()]);
        let parsed = cli::parse_from(&line).map_err(|e| e.to_string());
        let setup = parsed.and_then(|cli| match cli.command {
            cli::Command::Compare(args) => args.setup(&cli.given).map_err(|e| e.to_string()),
            _ => Err("not compare".into()),
        });
        let json = match setup {
            Ok(setup) => serde_json::to_value(&setup).unwrap(),
            Err(e) => {
                wrong.push(format!("--{flag} {value}: {e}"));
                continue;
            }
        };
        let at = path.split('.').try_fold(&json, |at, key| at.get(key));
        let got = at.map(|v| match v {
            serde_json::Value::Array(items) => items[0].clone(),
            other => other.clone(),
        });
        let expected: f64 = value.parse().unwrap();
        if got.as_ref().and_then(serde_json::Value::as_f64) != Some(expected) {
            wrong.push(format!("--{flag} {value}: {path} is {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The fields of a setting in a command's context: the objectives' setup's for `objectives`, the
/// comparison's for every other command but `bench`, none for `bench`.
fn field_in_context(
    command: &str,
    setting: &settings::Setting,
) -> Option<&'static settings::Field> {
    if command.starts_with("bench") {
        return None;
    }
    // `predict`'s and `eval`'s switch about the file they score, not the setup's field.
    if matches!(command, "predict" | "eval") && setting.name == "allow-missing-features" {
        return None;
    }
    let objectives = command == "objectives";
    setting
        .fields
        .iter()
        .find(|f| f.path.starts_with(settings::OBJECTIVES) == objectives)
}

#[test]
fn every_flag_that_fills_a_setup_field_takes_its_help_and_default_from_the_table() {
    let mut wrong = Vec::new();
    let mut seen = 0;
    for (name, sub) in subcommands() {
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let Some(setting) = settings::SETTINGS.iter().find(|s| s.flag && s.name == long) else {
                continue;
            };
            let Some(field) = field_in_context(&name, setting) else {
                continue;
            };
            seen += 1;
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if setting.help.is_empty() || !help.starts_with(setting.help) {
                wrong.push(format!("{name} --{long}: help '{help}'"));
            }
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let expected: Vec<String> = if field.default.is_empty() {
                Vec::new()
            } else {
                vec![field.default.to_string()]
            };
            if defaults != expected {
                wrong.push(format!(
                    "{name} --{long}: default {defaults:?}, the table's {expected:?}"
                ));
            }
        }
    }
    assert!(seen > 100, "only {seen} flags with a row found");
    assert!(
        wrong.is_empty(),
        "flags that do not read the table: {wrong:#?}"
    );
}

/// Defaults each command's flags had before the table gave them, checked against the command
/// line itself: a context mixed up (an `objectives` flag reading a comparison's field, `bench`
/// reading a setup's) fails here whatever the rule that chooses the field.
#[test]
fn the_flags_keep_their_commands_defaults() {
    let expected: &[(&str, &str, Option<&str>)] = &[
        ("compare", "epochs", Some("20")),
        ("compare", "patience", Some("3")),
        ("compare", "widths", Some("256,256,128,64")),
        ("compare", "noise", Some("0.1")),
        ("compare", "synth-seed", Some("7")),
        ("compare", "backend", Some("auto")),
        ("compare", "tau-target", None),
        ("compare", "objective", None),
        ("sweep", "seeds", Some("5")),
        ("train", "epochs", Some("20")),
        ("train", "lr", Some("0.001")),
        ("train", "seed", Some("0")),
        ("eval", "min-group-size", Some("10")),
        ("eval", "tau-target", None),
        ("data synth", "queries", Some("4000")),
        ("data synth", "regular", Some("100")),
        ("data simulate-logs", "sessions", Some("100")),
        ("data simulate-logs", "logging-ranker", Some("linear")),
        ("objectives", "epochs", Some("30")),
        ("objectives", "patience", Some("5")),
        ("objectives", "widths", Some("64,32")),
        ("objectives", "noise", Some("0.7")),
        ("objectives", "synth-seed", Some("11")),
        ("objectives", "label-threshold", Some("1")),
        ("objectives", "dual-rate-factor", Some("1000")),
        ("bench train", "widths", Some("256,256,128,64")),
        ("bench train", "backend", Some("cpu")),
        ("bench train", "features", Some("136")),
    ];
    let commands = subcommands();
    for &(command, flag, default) in expected {
        let (_, sub) = commands
            .iter()
            .find(|(name, _)| name == command)
            .unwrap_or_else(|| panic!("no subcommand {command}"));
        let arg = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(flag))
            .unwrap_or_else(|| panic!("{command} has no --{flag}"));
        let got: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let want: Vec<String> = default.map(str::to_string).into_iter().collect();
        assert_eq!(got, want, "{command} --{flag}");
    }
}

#[test]
fn every_flag_of_every_subcommand_has_help() {
    let mut bare = Vec::new();
    for (name, sub) in subcommands() {
        for arg in sub.get_arguments() {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if help.trim().is_empty() && !["help", "version"].contains(&arg.get_id().as_str()) {
                bare.push(format!("{name} {}", arg.get_id()));
            }
        }
    }
    assert!(bare.is_empty(), "flags without help: {bare:?}");
}

/// Every name a setting's field takes (an enum's variants, as the setup reads them) is named in
/// the setting's help and read from its flag: `--teacher-columns from-1`, as its help wrote it,
/// was refused because the field took `from1`.
#[test]
fn every_choice_of_a_setting_is_named_in_its_help_and_read_from_its_flag() {
    let mut wrong = Vec::new();
    let mut choices = 0;
    for (flag, path) in settings::flag_fields() {
        let (setting, _) = settings::comparison_field(flag).unwrap();
        // The methods' and losses' choices are their entries', listed by clap from them.
        if setting.range.is_some() || ["methods", "loss"].contains(&flag) {
            continue;
        }
        // An unknown name: the refusal lists the names the field takes, if it is a choice.
        let mut json = serde_json::json!({});
        let keys: Vec<&str> = path.split('.').collect();
        let mut at = &mut json;
        for key in &keys[..keys.len() - 1] {
            at = at
                .as_object_mut()
                .unwrap()
                .entry(*key)
                .or_insert(serde_json::json!({}));
        }
        at[keys[keys.len() - 1]] = serde_json::json!("no-such-choice");
        if path.starts_with("data.source.synthetic.") {
            json["data"]["source"] =
                serde_json::json!({"synthetic": json["data"]["source"]["synthetic"]});
        }
        let Err(e) = distillrank::setup::Setup::from_json(&json.to_string()) else {
            continue;
        };
        let message = e.to_string();
        let Some((_, names)) = message.split_once("expected one of ") else {
            continue;
        };
        for name in names
            .split(", ")
            .map(|n| n.trim_matches(|c: char| c == '`' || c == ')' || c == '.'))
        {
            choices += 1;
            if !setting.help.contains(name) {
                wrong.push(format!(
                    "--{flag}: its help does not name '{name}': {}",
                    setting.help
                ));
            }
            let given = [(flag, vec![name.to_string()])];
            if let Err(e) = distillrank::setup::Setup::default().with_flags(&given) {
                wrong.push(format!("--{flag} {name}: {e}"));
            }
        }
    }
    assert!(choices >= 10, "only {choices} choices found");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_setting_with_a_field_has_help_and_a_default_that_reads_as_its_field() {
    // The defaults of the library's setups are the table's (`settings::default_of`): read them
    // all back from the setups' JSON.
    let setup = serde_json::to_value(distillrank::setup::Setup::default()).unwrap();
    let objectives = serde_json::to_value(distillrank::setup::ObjectivesSetup::default()).unwrap();
    let mut wrong = Vec::new();
    for setting in settings::SETTINGS {
        if !setting.fields.is_empty() && setting.help.is_empty() {
            wrong.push(format!("{}: no help", setting.name));
        }
        for field in setting.fields {
            let (json, path) = match field.path.strip_prefix(settings::OBJECTIVES) {
                Some(rest) => (&objectives, rest),
                None => (&setup, field.path),
            };
            let keys: Vec<&str> = path.split('.').collect();
            let mut parent = Some(json);
            for key in &keys[..keys.len() - 1] {
                parent = parent.and_then(|v| v.get(key));
            }
            // A field of a variant the default setup does not take (`objectives.data.files`).
            let Some(parent) = parent else { continue };
            let at = parent.get(keys[keys.len() - 1]);
            let shown = match at {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::Array(items)) => Some(
                    items
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                Some(serde_json::Value::Object(_)) => continue, // a spec the library parses
                Some(v) => Some(v.to_string()),
            };
            let readable = |text: &str| -> String {
                text.split(',')
                    .map(|t| t.parse::<f64>().map_or(t.to_string(), |v| v.to_string()))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let reached = shown.as_deref().map(readable);
            let expected = (!field.default.is_empty()).then(|| readable(field.default));
            // A spec's default (`recall-at-precision:0.8`) reads back in the library's spelling.
            let specs = [
                "objectives.objectives",
                "data.source.synthetic.options.kind",
            ];
            if reached != expected && !specs.contains(&field.path) {
                wrong.push(format!(
                    "{}: the setup holds {reached:?}, the table says {expected:?}",
                    field.path
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_numeric_and_path_flag_of_every_subcommand_is_refused_by_name_or_runs_finite() {
    let f = fixtures();
    let mut cases = Vec::new();
    let mut n = 0;
    for (name, sub) in subcommands() {
        let args: Vec<clap::Arg> = sub.get_arguments().cloned().collect();
        let Some(base) = base(name.clone().leak()) else {
            assert!(
                !args.iter().any(|a| cli::is_numeric(a) || is_path(a)),
                "`{name}` takes numbers or paths: give it base arguments in tests/flags.rs"
            );
            continue;
        };
        for arg in &args {
            let values: Vec<String> = if cli::is_numeric(arg) {
                NUMBERS.iter().map(|s| s.to_string()).collect()
            } else if is_path(arg) {
                let missing = f.dir.path().join("missing").join("file.txt");
                vec![
                    f.dir.path().display().to_string(),
                    f.zero.clone(),
                    String::new(),
                    missing.display().to_string(),
                ]
            } else {
                continue;
            };
            for value in values {
                n += 1;
                let case_dir = f.dir.path().join(format!("case{n}"));
                std::fs::create_dir_all(&case_dir).unwrap();
                let mut names: Vec<String> = arg
                    .get_long()
                    .map(|l| vec![format!("--{l}")])
                    .unwrap_or_else(|| vec![format!("<{}>", arg.get_id().as_str().to_uppercase())]);
                if !value.is_empty() && is_path(arg) {
                    names.push(value.clone());
                }
                cases.push(Case {
                    args: with_value(&base, arg, &value, &f, &case_dir),
                    names,
                    setup: None,
                });
            }
        }
    }
    assert!(cases.len() > 400, "only {} cases", cases.len());
    let failures = run_all(cases);
    let zero = std::fs::symlink_metadata(&f.zero).unwrap();
    assert!(
        zero.file_type().is_symlink()
            && std::fs::metadata(&f.zero)
                .unwrap()
                .file_type()
                .is_char_device(),
        "an output replaced the link to /dev/zero"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A small setup: the synthetic data and training sizes of [`small`].
fn small_setup() -> serde_json::Value {
    let mut setup = serde_json::to_value(distillrank::setup::Setup::default()).unwrap();
    let options = &mut setup["data"]["source"]["synthetic"];
    options["valid_queries"] = 20.into();
    options["test_queries"] = 20.into();
    let options = &mut options["options"];
    for (key, v) in [
        ("queries", 40),
        ("regular", 6),
        ("privileged", 2),
        ("min_docs", 10),
        ("max_docs", 14),
    ] {
        options[key] = v.into();
    }
    setup["data"]["tau_target"] = 3.5.into();
    setup["data"]["t"] = 8.0.into();
    setup["seeds"] = 1.into();
    setup["epochs"] = 1.into();
    setup["widths"] = serde_json::json!([4]);
    setup["teacher_widths"] = serde_json::json!([4]);
    setup["backend"] = "cpu".into();
    setup
}

/// The same JSON with the number at `path` (the first element, for an array) written as `value`
/// (raw, so that 1e308 and 2^64 - 1 stay as written).
fn setup_with(setup: &serde_json::Value, path: &str, value: &str) -> String {
    const MARK: &str = "@@NUMBER@@";
    let mut v = setup.clone();
    let mut at = &mut v;
    for key in path.split('.') {
        at = &mut at[key];
    }
    if let serde_json::Value::Array(items) = at {
        items[0] = MARK.into();
    } else {
        *at = MARK.into();
    }
    serde_json::to_string_pretty(&v)
        .unwrap()
        .replace(&format!("\"{MARK}\""), value)
}

#[test]
fn every_numeric_field_of_a_setup_is_bounded_and_refused_by_name_or_runs_finite() {
    let f = fixtures();
    let setup = small_setup();
    let mut fields = Vec::new();
    settings::numeric_fields(&setup, String::new(), &mut fields);
    fields.dedup_by(|a, b| a.0 == b.0);
    let unbounded: Vec<&str> = fields
        .iter()
        .filter(|(path, _)| settings::bound_of_field(path).is_none())
        .map(|(path, _)| path.as_str())
        .collect();
    assert!(
        unbounded.is_empty(),
        "setup fields without a row in distillrank::settings::SETTINGS: {unbounded:?}"
    );
    assert!(fields.len() > 30, "only {} numeric fields", fields.len());
    let mut cases = Vec::new();
    for (i, (path, _)) in fields.iter().enumerate() {
        let bound = settings::bound_of_field(path).unwrap();
        let leaf = path.rsplit('.').next().unwrap().to_string();
        for (j, value) in JSON_NUMBERS.iter().enumerate() {
            let dir = f.dir.path().join(format!("setup{i}-{j}"));
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("setup.json");
            cases.push(Case {
                args: vec![
                    "compare".into(),
                    "--quiet".into(),
                    "--setup".into(),
                    file.display().to_string(),
                    "--out".into(),
                    dir.join("out").display().to_string(),
                ],
                names: vec![path.clone(), leaf.clone(), bound.spelled()],
                setup: Some((file, setup_with(&setup, path, value))),
            });
        }
    }
    let failures = run_all(cases);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A library message read in the words of a door without flags (Python, the page): a flag beside
/// what it names goes, a flag alone becomes its setting's field or the door's own word, an
/// unknown one stays; characters of several bytes before a flag (a typeset minus, ±) are cut on
/// their boundaries.
#[test]
fn library_messages_read_in_the_words_of_a_door_without_flags() {
    let words =
        |m: &str| settings::flags_in_words(m, &|f| (f == "valid").then(|| "eval_set".to_string()));
    assert_eq!(
        words("setup field epochs (--epochs) = 0: expected"),
        "setup field epochs = 0: expected"
    );
    assert_eq!(
        words("tau_target 2.7 (--tau-target 2.7) gives 24"),
        "tau_target 2.7 gives 24"
    );
    assert_eq!(
        words("lower --tau-target, raise --sessions or give a larger --valid; --bogus stays"),
        "lower tau_target, raise logs.sessions or give a larger eval_set; --bogus stays"
    );
    // A flag and its value beside the field and its value: said already, in a setup's words
    // too.
    let beside = "allow_missing_features true (--allow-missing-features true) reads them as 0";
    let said = "allow_missing_features true reads them as 0";
    assert_eq!(words(beside), said);
    assert_eq!(settings::flags_in_document_words(beside, &|_| None), said);
    let long = format!("{}−0.0097 ±±±± (--alpha) and --alpha", "é".repeat(60));
    assert!(
        words(&long).ends_with("±±±± (alpha) and alpha"),
        "{}",
        words(&long)
    );
}

/// A whole number reads in any notation, from a flag and from a setup alike (`1e3`, `1000.0`);
/// a number that is not whole is called so, and one out of range too, a huge integer of a
/// setup (which JSON readers hold as a float) among them.
#[test]
fn a_whole_number_reads_in_any_notation_and_is_named_when_it_is_not_one() {
    let seeds = settings::bound("seeds").unwrap();
    assert_eq!(seeds.parse::<usize>("1e3"), Ok(1000));
    assert_eq!(seeds.parse::<usize>(" 1000.0 "), Ok(1000));
    assert!(seeds
        .parse::<usize>("1000.5")
        .unwrap_err()
        .starts_with("not a whole number"));
    for huge in ["1e23", "100000000000000000000000", "20000"] {
        let e = seeds.parse::<usize>(huge).unwrap_err();
        assert!(
            e.starts_with("expected a whole number in 1..=10,000"),
            "{huge}: {e}"
        );
    }
    let first_seed = settings::bound("first-seed").unwrap();
    assert_eq!(
        first_seed.parse::<u64>("18446744073709551615"),
        Ok(u64::MAX)
    );
    assert!(first_seed.parse::<u64>("1.8446744073709552e19").is_err());
    assert!(seeds
        .parse::<usize>("ten")
        .unwrap_err()
        .starts_with("expected a whole number"));

    let setup = |text: &str| distillrank::setup::Setup::from_json(text);
    let read = setup(r#"{"seeds": 1e3, "first_seed": 1000.0}"#).unwrap();
    assert_eq!((read.seeds, read.first_seed), (1000, 1000));
    for (text, said) in [
        (
            r#"{"seeds": 100000000000000000000000}"#,
            "is out of range, expected a whole number in 1..=10,000",
        ),
        (
            r#"{"first_seed": 1e30}"#,
            "is out of range, expected a whole number in 0..=",
        ),
        (
            r#"{"seeds": 1000.5}"#,
            "1000.5 is not a whole number, expected",
        ),
        (r#"{"seeds": -1}"#, "-1 is out of range"),
    ] {
        let e = setup(text).unwrap_err().to_string();
        assert!(
            e.contains(said) && !e.contains("floating point"),
            "{text}: {e}"
        );
    }
    // In range as a count, out of the setting's range: refused by the range.
    let e = setup(r#"{"seeds": 1e5}"#).unwrap_err().to_string();
    assert!(e.contains("seeds") && e.contains("1..=10,000"), "{e}");
}
