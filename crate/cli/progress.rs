//! Progress bars (docs/s and ETA) that appear only once a task has run for a second, and only on
//! a terminal; and the choice between human and JSON output.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

pub struct Output {
    /// No progress bars or per-epoch lines.
    pub quiet: bool,
    pub json: bool,
}

impl Output {
    /// A line for people (stderr, so that stdout stays clean for results); silent when quiet.
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", distillrank::error::printable_text(text.as_ref()));
        }
    }
    /// Something the user must know about the results (an unmeasurable metric, ...): printed
    /// even when quiet.
    pub fn warn(&self, text: impl AsRef<str>) {
        eprintln!(
            "warning: {}",
            distillrank::error::printable_text(text.as_ref())
        );
    }
}

/// A bar over `total` units that stays hidden for its first second. Off a terminal (stderr
/// redirected to a log) it never draws, and [`Progress::println`] prints plain lines.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    quiet: bool,
    terminal: bool,
}

impl Progress {
    pub fn new(out: &Output, total: u64, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template = format!(
            "{{spinner}} {{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{rate}} {unit}/s ETA {{eta}}"
        );
        bar.set_style(
            ProgressStyle::with_template(&template)
                .expect("a valid template")
                .with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", thousands(state.per_sec()));
                    },
                )
                .progress_chars("=> "),
        );
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
            quiet: out.quiet,
            terminal: std::io::stderr().is_terminal(),
        }
    }
    pub fn set(&mut self, position: u64) {
        self.bar.set_position(position);
        self.reveal();
    }
    pub fn inc(&mut self, delta: u64) {
        self.bar.inc(delta);
        self.reveal();
    }
    pub fn message(&self, text: String) {
        self.bar.set_message(text);
    }
    /// Prints a line above the bar (or, with no bar drawn, on stderr).
    pub fn println(&self, text: impl AsRef<str>) {
        if self.quiet {
            return;
        }
        let text = distillrank::error::printable_text(text.as_ref());
        if self.shown {
            self.bar.println(text);
        } else {
            eprintln!("{text}");
        }
    }
    fn reveal(&mut self) {
        if !self.shown
            && !self.quiet
            && self.terminal
            && self.started.elapsed() > Duration::from_secs(1)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// The library pipeline's reports as progress bars and lines on stderr. A task is its unit and
/// its total: a new one (or a count that goes back) starts a new bar; the label is the bar's
/// message. With `epochs`, every model's epochs are printed as lines.
pub struct Bars<'a> {
    out: &'a Output,
    bar: Option<(String, u64, u64, Progress)>,
    pub epochs: bool,
    /// The words of the door the run came through (a setup file's fields for its flags), for
    /// what the library warns of.
    words: Option<&'a dyn Fn(&str) -> String>,
}

impl<'a> Bars<'a> {
    pub fn new(out: &'a Output) -> Self {
        Bars {
            out,
            bar: None,
            epochs: false,
            words: None,
        }
    }

    /// The library's warnings in `words` (a setup file's: [`super::compare::document_words`]).
    pub fn in_words(mut self, words: &'a dyn Fn(&str) -> String) -> Self {
        self.words = Some(words);
        self
    }

    /// Ends the bar being drawn, if any.
    pub fn finish(&mut self) {
        if let Some((_, _, _, bar)) = self.bar.take() {
            bar.finish();
        }
    }
}

impl Drop for Bars<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

impl distillrank::pipeline::Reporter for Bars<'_> {
    fn note(&mut self, text: &str) {
        match &self.bar {
            Some((_, _, _, bar)) if !self.out.quiet => {
                bar.println(distillrank::error::printable_text(text))
            }
            _ => self.out.note(text),
        }
    }

    fn warn(&mut self, text: &str) {
        match self.words {
            Some(words) => self.out.warn(words(text)),
            None => self.out.warn(text),
        }
    }

    fn progress(&mut self, label: &str, unit: &str, done: u64, total: u64) {
        let same =
            matches!(&self.bar, Some((u, t, at, _)) if u == unit && *t == total && done >= *at);
        if !same {
            self.finish();
            self.bar = Some((
                unit.to_string(),
                total,
                done,
                Progress::new(self.out, total, unit),
            ));
        }
        if let Some((_, _, at, bar)) = &mut self.bar {
            bar.message(label.to_string());
            bar.set(done);
            *at = done;
        }
        if done >= total {
            self.finish();
        }
    }

    fn epoch(
        &mut self,
        model: &distillrank::ranking::experiment::Training,
        log: &distillrank::ranking::train::EpochLog,
    ) {
        if !self.epochs {
            return;
        }
        let line = format!(
            "{model}: epoch {:>3}  loss {:.5}  valid NDCG@8 {:.4}  {:.0} docs/s",
            log.epoch, log.data_loss, log.valid_ndcg, log.docs_per_s
        );
        match &self.bar {
            Some((_, _, _, bar)) => bar.println(line),
            None => self.out.note(line),
        }
    }
}

/// A rate as a whole number with thousands separators: `82,646,623`.
pub fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "-".into();
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < -0.5 {
        out.insert(0, '-');
    }
    out
}
