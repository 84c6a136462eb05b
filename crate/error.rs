//! Errors. Every error a user can cause names what was expected and, for input files, where:
//! file, line and column. Nothing in the library panics on user input.

use std::path::PathBuf;

/// A position in an input file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: u64,
    /// 1-based byte column of the offending token; 0 when the whole line (or file) is at fault.
    pub column: u64,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.file.display()),
            (l, 0) => write!(f, "{}:{}", self.file.display(), l),
            (l, c) => write!(f, "{}:{}:{}", self.file.display(), l, c),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input data: where, and what was expected there.
    #[error("{at}: {message}")]
    Parse { at: Location, message: String },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A configuration that cannot work, found before any training starts.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// The data do not allow what was asked (no positive groups after filtering, ...).
    #[error("{0}")]
    Data(String),

    /// Training produced a non-finite loss or weight, or a finite loss that ran away
    /// ([`crate::engine::Runaway`]).
    #[error("training diverged at epoch {epoch}, step {step}: {what}; try a smaller --lr (or {smaller})")]
    Diverged {
        epoch: usize,
        step: usize,
        what: String,
        /// What else the run can make smaller: its own settings
        /// ([`crate::ranking::train::SMALLER`], [`crate::objectives::train::SMALLER`]).
        smaller: &'static str,
    },

    /// The GPU could not be used: no adapter, a validation error, a lost device, a limit.
    #[error("GPU: {0}")]
    Gpu(String),

    /// The job was asked to stop ([`crate::stop::Stop`]): Ctrl-C, or the page's Stop.
    #[error("stopped at epoch {epoch}, step {step}, as asked")]
    Stopped { epoch: usize, step: usize },

    /// A saved model that cannot be read.
    #[error("{path}: {message}")]
    Model { path: PathBuf, message: String },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// What went wrong, without the kind's prefix (`invalid configuration: `), for a message that
    /// names the setting itself (a field of a setup, a flag).
    pub fn message(&self) -> String {
        match self {
            Error::Config(message) => message.clone(),
            other => other.to_string(),
        }
    }

    /// The variant's name, as `--json` reports it: `parse`, `io`, `config`, `data`,
    /// `diverged`, `gpu`, `stopped` or `model`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Parse { .. } => "parse",
            Error::Io { .. } => "io",
            Error::Config(_) => "config",
            Error::Data(_) => "data",
            Error::Diverged { .. } => "diverged",
            Error::Gpu(_) => "gpu",
            Error::Stopped { .. } => "stopped",
            Error::Model { .. } => "model",
        }
    }

    /// The error as one JSON object, what `--json` writes on stderr: `error` (the message the
    /// text output prints), `kind` ([`Error::kind`]) and, where the error has them, `file`,
    /// `line` and `column` (1-based; 0 when the whole line or file is at fault), `epoch` and
    /// `step`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut object = serde_json::json!({
            "error": printable(&self.to_string()),
            "kind": self.kind(),
        });
        match self {
            Error::Parse { at, .. } => {
                object["file"] = at.file.display().to_string().into();
                object["line"] = at.line.into();
                object["column"] = at.column.into();
            }
            Error::Io { path, .. } | Error::Model { path, .. } => {
                object["file"] = path.display().to_string().into();
            }
            Error::Diverged { epoch, step, .. } | Error::Stopped { epoch, step } => {
                object["epoch"] = (*epoch).into();
                object["step"] = (*step).into();
            }
            Error::Config(_) | Error::Data(_) | Error::Gpu(_) => {}
        }
        object
    }

    /// The error of training `model` (a comparison's `pfd seed 0 teacher 1`): a divergence names
    /// the model that diverged, which a comparison of several would not otherwise say.
    pub fn training(self, model: &impl std::fmt::Display) -> Self {
        self.diverged_in(|what| format!("{what} (training {model})"))
    }

    /// A divergence whose `what` says where it happened (`where_`: the model, the fold); any
    /// other error as it is.
    pub fn diverged_in(self, where_: impl FnOnce(String) -> String) -> Self {
        match self {
            Error::Diverged {
                epoch,
                step,
                what,
                smaller,
            } => Error::Diverged {
                epoch,
                step,
                what: where_(what),
                smaller,
            },
            other => other,
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    pub fn parse(
        file: impl Into<PathBuf>,
        line: u64,
        column: u64,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            at: Location {
                file: file.into(),
                line,
                column,
            },
            message: message.into(),
        }
    }
}

/// `text` with its control characters (NUL, escape sequences, ...) written as escapes, so that an
/// error message that quotes input cannot write raw bytes to a terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || c == '\u{feff}' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`printable`] for text of several lines (a report, a table): line breaks and tabs stay, every
/// other control character is escaped. File names and other input reach stdout and report.md
/// through it as they reach an error message.
pub fn printable_text(text: &str) -> String {
    text.split_inclusive(['\n', '\t'])
        .map(|piece| {
            let body = piece.trim_end_matches(['\n', '\t']);
            format!("{}{}", printable(body), &piece[body.len()..])
        })
        .collect()
}

/// A JSON value in the words serde uses for what it found (``integer `5` ``, `string "x"`, a
/// list), for a message on a field that expected something else.
pub fn json_kind(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(text) => format!("string \"{}\"", printable(text)),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a section".into(),
    }
}

/// A number as a message shows it: plainly in the everyday range, in scientific notation past it
/// (`1e308`, not 309 digits), `NaN` and `inf` as themselves.
pub fn shown(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}
