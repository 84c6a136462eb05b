//! The job every door runs, once: a [`Setup`](crate::setup::Setup) → [`preparation::prepare`]
//! (load, hold out, simulate or read logs, split features, check) → run ([`run::fit`] one method,
//! or [`run::compare`] them all; [`sweep::sweep`] one setting over values) → report
//! ([`report::results_json`]). The CLI, the page's workers and the Python package translate their
//! arguments into a setup and a [`store::Store`] of files, and show what the [`Reporter`] hears;
//! everything between lives here, so that every door refuses the same input with the same message
//! and gives the same numbers.
//!
//! The global objectives' comparison takes the same road: an
//! [`ObjectivesSetup`](crate::setup::ObjectivesSetup) → [`objectives::objectives_data`] →
//! [`objectives::objectives`] (or [`objectives::objectives_async`], one job at a time for the
//! page's workers) → [`objectives::objectives_results_json`].
//!
//! Doors differ only in where files come from ([`store::Store`]: files on disk with their caches
//! and sidecars, [`store::InMemory`] uploads or arrays) and in how they show progress
//! ([`Reporter`]).

pub mod folds;
pub mod jobs;
pub mod objectives;
pub mod preparation;
pub mod report;
pub mod run;
pub mod store;
pub mod sweep;
pub mod teacher;

use crate::ranking::experiment::Training;
use crate::ranking::train::EpochLog;

/// What a job tells the person running it. Every method has a default that ignores it, so a
/// door implements what it shows.
pub trait Reporter {
    /// A line for people: what was loaded, how long preparation took.
    fn note(&mut self, _text: &str) {}
    /// Something the user must know about the results (an unmeasurable test split, ...).
    fn warn(&mut self, _text: &str) {}
    /// `label` is under way: `done` of `total` `unit`s (bytes read, preparation steps, documents
    /// trained). A new label starts a new task; `done == total` ends it.
    fn progress(&mut self, _label: &str, _unit: &str, _done: u64, _total: u64) {}
    /// A model finished an epoch.
    fn epoch(&mut self, _model: &Training, _log: &EpochLog) {}
}

/// A reporter that shows nothing.
pub struct Silent;
impl Reporter for Silent {}
