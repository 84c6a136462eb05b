//! A comparison as independent jobs, for a runner outside the library: the page's pool of Web
//! Workers and Python's Dask cluster (`distillrank.dask`). A job is one seed of some methods,
//! each method's teachers then its student, methods that share a teacher together
//! ([`CompareConfig::jobs_on`]); no job needs another's result, so a runner may place them
//! anywhere in any order and [`summary`] gives the numbers `compare` gives. Each runner prepares
//! the data itself, from the same setup ([`super::preparation::prepare`]).
//!
//! [`CompareConfig::jobs_on`]: crate::ranking::experiment::CompareConfig::jobs_on

use super::preparation::PreparedData;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model::Ensemble;
use crate::ranking::experiment::{run_job, Comparison, Job, MethodRuns, OnProgress, SeedRun};
use crate::setup::Setup;
use crate::stop::Stop;

/// The jobs of `setup`'s comparison on `data`, longest first within a seed.
pub fn jobs(data: &PreparedData, setup: &Setup) -> Result<Vec<Job>> {
    let config = super::run::compare_config(data, setup, &Engine::Cpu, &Stop::default())?;
    Ok(config.jobs_on(data.prepared.train.d_z))
}

/// Runs one job of `setup`'s comparison on `engine`: each of its methods' students with its
/// seed's run, in the job's order of methods. A job that names a method the setup does not
/// have is refused.
pub async fn run(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    stop: &Stop,
    job: &Job,
    on: &mut OnProgress<'_>,
) -> Result<Vec<(Ensemble, SeedRun)>> {
    let config = super::run::compare_config(data, setup, engine, stop)?;
    if let Some(m) = job.methods.iter().find(|m| !config.methods.contains(m)) {
        return Err(Error::Config(format!(
            "the job names {m}, which is not a method of the setup"
        )));
    }
    run_job(&data.prepared, &config, job, on).await
}

/// The jobs' runs as the comparison's methods: `results[k]` is job `k`'s `(method, run)`s, in
/// the order of `jobs`; each method's runs come out in seed order, as [`jobs`] lists the seeds.
pub fn methods_of(
    setup: &Setup,
    jobs: &[Job],
    results: Vec<Vec<(crate::ranking::distill::Method, SeedRun)>>,
) -> Result<Vec<MethodRuns>> {
    if results.len() != jobs.len() {
        return Err(Error::Config(format!(
            "{} jobs' results for {} jobs",
            results.len(),
            jobs.len()
        )));
    }
    let mut methods = MethodRuns::none_yet(&setup.methods);
    for (k, runs) in results.into_iter().enumerate() {
        for (method, run) in runs {
            let Some(m) = methods.iter_mut().find(|m| m.method == method) else {
                return Err(Error::Config(format!(
                    "job {k} returned {method}, which is not a method of the setup"
                )));
            };
            m.runs.push(run);
        }
    }
    for m in &mut methods {
        m.runs.sort_by_key(|r| r.seed);
    }
    Ok(methods)
}

/// What the jobs found, as `results.json` holds it: the same function as `compare`'s, the
/// paired tests and their sentences among them, and the settings that could not matter in words.
pub fn summary(data: &PreparedData, setup: &Setup, methods: Vec<MethodRuns>) -> serde_json::Value {
    let comparison = Comparison {
        methods,
        students: Vec::new(),
    };
    let tests = super::report::tests(data, setup, &comparison);
    let mut results = super::report::results_json_with(data, setup, &comparison, &tests);
    super::report::results_in_words(&mut results);
    results
}
