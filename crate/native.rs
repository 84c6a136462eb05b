//! The library's one blocking edge, native builds only. The library's API is async, for the
//! browser's sake (a WebGPU read-back can only be awaited there); the native doors (the CLI, the
//! Python package, the benchmarks and the tests) block here, and only here, on its futures
//! ([`block_on`]). On the CPU engine those futures complete without waiting; on the GPU engine
//! they wait for the device's read-backs.
//!
//! The comparison's CPU jobs, one per thread ([`ranking::compare`]), live here too: threads are
//! the native way to run them side by side (the page's pool of Web Workers is the browser's).

use std::future::Future;

use crate::engine::{Backend, Engine, Opened};
use crate::error::Result;

/// Runs `future` to its end on this thread: the one place the library blocks.
pub fn block_on<F: Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// [`Engine::open`], blocking until the adapter answers (the probe kept quiet,
/// [`quiet_gpu_probe`]).
pub fn open_engine(backend: Backend) -> Result<Opened> {
    quiet_gpu_probe();
    block_on(Engine::open(backend))
}

/// Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set" to stderr when they
/// probe for a display and the variable is missing, as it is in containers and over ssh. A
/// compute program needs no display: point the variable at a private directory before wgpu
/// looks for adapters, so that the probe stays quiet. Called before the first adapter probe of
/// every native door ([`open_engine`]; the CLI's `main` first of all), once per process.
pub fn quiet_gpu_probe() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(quiet_probe_now);
}

fn quiet_probe_now() {
    let valid = std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .is_some_and(|dir| dir.is_absolute() && dir.is_dir());
    if valid {
        return;
    }
    let dir = std::env::temp_dir().join(format!("distillrank-runtime-{}", user_id()));
    if std::fs::create_dir_all(&dir).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
}

/// The user's id (the owner of `/proc/self`), to keep per-user directories apart.
fn user_id() -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
    }
    #[cfg(not(unix))]
    0
}

/// Ranking models: one model ([`ranking::fit`], [`ranking::train`]) and a comparison's jobs on
/// threads ([`ranking::compare`]).
pub mod ranking {
    use crate::data::prepare::{Prepared, RankingSet};
    use crate::engine::Engine;
    use crate::error::{Error, Result};
    use crate::ranking::experiment::{
        compare_async, run_job, CompareConfig, Comparison, OnProgress, SeedRun, Training, MAX_SEEDS,
    };
    use crate::ranking::train::{
        fit_async, EpochLog, Event, Guidance, Split, TrainConfig, Trained,
    };

    /// Trains a model on the `config.view` features of `train`, without guidance or with one teacher.
    pub fn train(
        train: &RankingSet,
        valid: &RankingSet,
        config: &TrainConfig,
        teacher: Option<&[f32]>,
        on: &mut dyn FnMut(Event),
    ) -> Result<Trained> {
        let guidance = Guidance {
            teachers: teacher.into_iter().collect(),
            ..Guidance::default()
        };
        fit(
            &Engine::Cpu,
            Split::of(train, config.view),
            Split::of(valid, config.view),
            None,
            config,
            &guidance,
            on,
        )
    }

    /// [`fit_async`]: trains a model on given input matrices on `engine`, picking the epoch with the
    /// best validation NDCG@k.
    pub fn fit(
        engine: &Engine,
        train: Split,
        valid: Split,
        test: Option<Split>,
        config: &TrainConfig,
        guidance: &Guidance,
        on: &mut dyn FnMut(Event),
    ) -> Result<Trained> {
        super::block_on(fit_async(engine, train, valid, test, config, guidance, on))
    }

    /// Runs every method of `config` on the prepared data, blocking until the GPU (if any) is done.
    /// On the CPU engine its jobs ([`CompareConfig::jobs_on`]) run on `config.jobs` threads, one job a
    /// thread, the longest first, with the same results as one after the other.
    pub fn compare(
        p: &Prepared,
        config: &CompareConfig,
        on: &mut OnProgress,
    ) -> Result<Comparison> {
        match side_by_side(config, p.train.d_z) {
            jobs if jobs > 1 => compare_parallel(p, config, jobs, on),
            _ => super::block_on(compare_async(p, config, on)),
        }
    }

    /// How many jobs [`compare`] runs at once: `config.jobs` (default: one per core) on the CPU
    /// engine, at most one per job; one on the GPU.
    pub fn side_by_side(config: &CompareConfig, d_z: usize) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // At most one thread per job.
        let most = if config.seeds > MAX_SEEDS {
            1 // refused by the checks that come next
        } else {
            config.jobs_on(d_z).len().max(1)
        };
        match config.engine {
            Engine::Cpu => config.jobs.unwrap_or(cores).clamp(1, most),
            _ => 1,
        }
    }

    /// What one job gives: each of its methods' student and runs.
    type JobResult = Result<Vec<(crate::model::Ensemble, SeedRun)>>;

    /// What a job tells the thread that reports: an event of one of its models, or its end.
    enum JobMessage {
        Step(Training, usize),
        Epoch(Training, Box<EpochLog>),
        Done(usize, Box<JobResult>),
    }

    /// [`compare`] on `threads` threads: each takes the next job (those with more models first) and
    /// trains it whole; this thread relays their events to `on` and puts the results in the order of
    /// one job after the other. The prepared data are shared, never copied: a job adds only its own
    /// buffers. A failing job stops the others at their next step.
    fn compare_parallel(
        p: &Prepared,
        config: &CompareConfig,
        threads: usize,
        on: &mut OnProgress,
    ) -> Result<Comparison> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        config.validate(p)?;
        let jobs = config.jobs_on(p.train.d_z);
        // Indices into `jobs`, the jobs with the most models first.
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&k| (std::cmp::Reverse(jobs[k].models), k));
        let next = AtomicUsize::new(0);
        let mut results: Vec<Option<JobResult>> = (0..jobs.len()).map(|_| None).collect();
        let (sender, receiver) = std::sync::mpsc::channel::<JobMessage>();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let sender = sender.clone();
                let (jobs, order, next) = (&jobs, &order, &next);
                scope.spawn(move || {
                    while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let run =
                            super::block_on(run_job(p, config, &jobs[k], &mut |model, event| {
                                let message = match event {
                                    Event::Step { docs } => JobMessage::Step(*model, docs),
                                    Event::Epoch(log) => {
                                        JobMessage::Epoch(*model, Box::new(log.clone()))
                                    }
                                };
                                let _ = sender.send(message);
                            }));
                        if run.is_err() {
                            config.train.stop.request();
                        }
                        let _ = sender.send(JobMessage::Done(k, Box::new(run)));
                    }
                });
            }
            drop(sender);
            for message in receiver {
                match message {
                    JobMessage::Step(model, docs) => on(&model, Event::Step { docs }),
                    JobMessage::Epoch(model, log) => on(&model, Event::Epoch(&log)),
                    JobMessage::Done(k, run) => results[k] = Some(*run),
                }
            }
        });
        let mut results: Vec<JobResult> = results
            .into_iter()
            .map(|r| r.expect("every job reports its end"))
            .collect();
        // The first failure (in the order the jobs started) that is not the stop it caused in the
        // other jobs.
        let failure = order
            .iter()
            .copied()
            .find(|&k| matches!(&results[k], Err(e) if !matches!(e, Error::Stopped { .. })))
            .or_else(|| order.iter().copied().find(|&k| results[k].is_err()));
        if let Some(k) = failure {
            results.swap_remove(k)?;
        }
        let runs = results
            .into_iter()
            .map(|r| r.expect("a failure is returned above"))
            .collect();
        Ok(Comparison::of_jobs(config, &jobs, runs))
    }
}

/// Global objectives' classifiers: one model ([`objectives::fit`]) and every objective over the
/// seeds ([`objectives::compare`]).
pub mod objectives {
    use crate::engine::Engine;
    use crate::error::Result;
    use crate::model::objective::Config;
    use crate::model::objective::Objective;
    use crate::objectives::data::{BinarySet, BinarySplits};
    use crate::objectives::experiment::{compare_async, ObjectiveRuns};
    use crate::objectives::train::{fit_async, Event, Trained};

    /// [`fit_async`]: trains a classifier for `config.objective` on `train` on `engine`, choosing the
    /// epoch on validation by [`better_epoch`] (AUC-PR among the epochs whose constraint holds).
    pub fn fit(
        engine: &Engine,
        train: &BinarySet,
        valid: &BinarySet,
        config: &Config,
        on: &mut dyn FnMut(Event),
    ) -> Result<Trained> {
        super::block_on(fit_async(engine, train, valid, config, on))
    }

    /// [`compare_async`]: trains every objective with seeds `seeds.1..seeds.1 + seeds.0` on `engine`,
    /// the rest of `base` shared; `on` hears each model's progress with its label (`objective,
    /// seed`).
    pub fn compare(
        splits: &BinarySplits,
        objectives: &[Objective],
        base: &Config,
        seeds: (usize, u64),
        engine: &Engine,
        on: &mut dyn FnMut(&str, Event),
    ) -> Result<Vec<ObjectiveRuns>> {
        super::block_on(compare_async(splits, objectives, base, seeds, engine, on))
    }
}

/// The pipeline's runs ([`crate::pipeline`]): a setup's comparison and one method at one seed on
/// prepared data, with a reporter's progress over every model, and the objectives' comparison.
pub mod pipeline {
    use crate::engine::Engine;
    use crate::error::Result;
    use crate::objectives::data::BinarySplits;
    use crate::objectives::experiment::ObjectiveRuns;
    use crate::objectives::train::Event as ObjectiveEvent;
    use crate::pipeline::objectives::objectives_async;
    use crate::pipeline::preparation::PreparedData;
    use crate::pipeline::run::{compare_config, fit_async};
    use crate::pipeline::Reporter;
    use crate::ranking::distill::Method;
    use crate::ranking::experiment::{self, CompareConfig, Comparison, SeedRun, Training};
    use crate::ranking::train::Event;
    use crate::setup::{ObjectivesSetup, Setup};
    use crate::stop::Stop;

    /// Turns the training loop's events into a reporter's progress over every model of `plan`: the
    /// model being trained (its place among all) and the documents trained so far.
    struct PlanProgress<'a> {
        plan: Vec<(Training, u64)>,
        total: u64,
        current: Option<usize>,
        done: u64,
        reporter: &'a mut dyn Reporter,
    }

    impl<'a> PlanProgress<'a> {
        /// Progress over every model `config` trains on `data`.
        fn new(
            data: &PreparedData,
            config: &CompareConfig,
            reporter: &'a mut dyn Reporter,
        ) -> Self {
            let plan = experiment::plan(&data.prepared, config);
            let total = plan.iter().map(|(_, docs)| docs).sum();
            PlanProgress {
                plan,
                total,
                current: None,
                done: 0,
                reporter,
            }
        }

        fn event(&mut self, model: &Training, event: Event) {
            match event {
                Event::Step { docs } => {
                    // Jobs may run side by side: the count only grows, and the label names the model
                    // that trained last, with its place in the plan.
                    if self.current.is_none_or(|i| self.plan[i].0 != *model) {
                        self.current = self.plan.iter().position(|(m, _)| m == model);
                    }
                    self.done += docs as u64;
                    let place = self.current.map_or(String::new(), |i| {
                        format!(" (model {} of {})", i + 1, self.plan.len())
                    });
                    self.reporter.progress(
                        &format!("{model}{place}"),
                        "docs",
                        self.done.min(self.total),
                        self.total,
                    );
                }
                Event::Epoch(log) => self.reporter.epoch(model, log),
            }
        }
    }

    /// Trains every method of `setup` over its seeds on the prepared data (which must have a test
    /// split), blocking until the GPU, if any, is done; on the CPU engine, `setup.jobs` jobs (a
    /// method at a seed) side by side (None: one per core), with the same results for any number.
    pub fn compare(
        data: &PreparedData,
        setup: &Setup,
        engine: &Engine,
        stop: &Stop,
        reporter: &mut dyn Reporter,
    ) -> Result<Comparison> {
        let config = compare_config(data, setup, engine, stop)?;
        let mut progress = PlanProgress::new(data, &config, reporter);
        let result = super::ranking::compare(&data.prepared, &config, &mut |model, event| {
            progress.event(model, event)
        });
        progress
            .reporter
            .progress("training", "docs", progress.total, progress.total);
        result
    }

    /// The comparison of `setup` on each of its folds (`data.folds`, [`crate::pipeline::folds`])
    /// from files on disk, one fold after the other: each fold prepared from its files (its
    /// training parts read as one) and compared as [`compare`] does.
    pub fn compare_folds(
        setup: &Setup,
        store: &mut dyn crate::pipeline::store::Store,
        engine: &Engine,
        stop: &Stop,
        reporter: &mut dyn Reporter,
    ) -> Result<Vec<crate::pipeline::folds::FoldRun>> {
        use crate::pipeline::folds::{fold_setup, folds_of_data, BundledParts, FoldRun, Joined};
        let folds = folds_of_data(&setup.data)?;
        crate::pipeline::folds::check_fold_files(setup, &folds, &|f| {
            std::path::Path::new(f).is_file()
        })?;
        for warning in crate::pipeline::folds::warnings(setup) {
            reporter.warn(&warning);
        }
        reporter.note(&crate::pipeline::folds::layout_note(&folds));
        let mut runs = Vec::new();
        let mut store = BundledParts { inner: store };
        crate::pipeline::folds::check_distinct_test_queries(&folds, &mut store, reporter)
            .map_err(crate::pipeline::folds::without_query_flags)?;
        for fold in folds {
            reporter.note(&format!(
                "fold {}: train {}, validation {}, test {}",
                fold.fold,
                fold.train_name(),
                fold.valid,
                fold.test
            ));
            let setup = fold_setup(setup, &fold);
            let mut joined = Joined {
                inner: &mut store,
                name: fold.train_name(),
                parts: fold.train.clone(),
                allow_missing_features: setup.data.allow_missing_features,
            };
            let mut preparing = crate::pipeline::folds::FoldPreparation { inner: reporter };
            let data = crate::pipeline::preparation::prepare(
                &setup.data,
                &mut joined,
                true,
                &mut preparing,
            )
            .and_then(|data| {
                crate::pipeline::folds::shared_queries_in_fold(&data)?;
                Ok(data)
            })
            .map_err(|e| fold.named_in(e))?;
            let comparison =
                compare(&data, &setup, engine, stop, reporter).map_err(|e| fold.named_in(e))?;
            runs.push(FoldRun {
                fold,
                setup,
                data,
                comparison,
            });
        }
        Ok(runs)
    }

    /// [`fit_async`], blocking natively, with the reporter hearing every epoch and the documents
    /// trained.
    pub fn fit(
        data: &PreparedData,
        setup: &Setup,
        method: Method,
        seed: u64,
        engine: &Engine,
        stop: &Stop,
        reporter: &mut dyn Reporter,
    ) -> Result<(crate::model::Ensemble, SeedRun)> {
        let mut config = setup.compare_config(engine.clone())?;
        config.seeds = 1;
        config.first_seed = seed;
        config.methods = vec![method];
        let mut progress = PlanProgress::new(data, &config, reporter);
        super::block_on(fit_async(
            data,
            setup,
            method,
            seed,
            engine,
            stop,
            &mut |model, event| progress.event(model, event),
        ))
    }

    /// [`objectives_async`] for every objective and seed, blocking until the GPU, if any, is done.
    pub fn objectives(
        splits: &BinarySplits,
        setup: &ObjectivesSetup,
        engine: &Engine,
        on: &mut dyn FnMut(&str, ObjectiveEvent),
    ) -> Result<Vec<ObjectiveRuns>> {
        super::block_on(objectives_async(splits, setup, None, engine, on))
    }
}

/// Trains on the CPU engine, through the same [`Trainer`] as `train` and `compare`.
pub fn bench_cpu(
    shape: &crate::bench::TrainShape,
    budget: crate::bench::Budget,
) -> crate::bench::Throughput {
    block_on(crate::bench::train(&Engine::Cpu, shape, budget))
        .expect("the CPU engine trains any shape the benchmark makes")
}
