//! Progress bars (docs/s and ETA) that appear only once a task has run for a second, and the
//! choice between human and JSON output.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Output {
    /// No progress bars or per-epoch lines.
    pub quiet: bool,
    pub json: bool,
}

impl Output {
    /// A line for people (stderr, so that stdout stays clean for results); silent when quiet.
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", text.as_ref());
        }
    }
}

/// A bar over `total` units that stays hidden for its first second.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    quiet: bool,
}

impl Progress {
    pub fn new(out: &Output, total: u64, unit: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template = format!("{{spinner}} {{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{per_sec}} ETA {{eta}}");
        bar.set_style(
            ProgressStyle::with_template(&template)
                .expect("a valid template")
                .progress_chars("=> "),
        );
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
            quiet: out.quiet,
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
    /// Prints a line above the bar.
    pub fn println(&self, text: impl AsRef<str>) {
        if self.quiet {
            return;
        }
        if self.shown {
            self.bar.println(text.as_ref());
        } else {
            eprintln!("{}", text.as_ref());
        }
    }
    fn reveal(&mut self) {
        if !self.shown && !self.quiet && self.started.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
