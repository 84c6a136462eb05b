//! What a comparison found, as `results.json` holds it.

use super::preparation::PreparedData;
use crate::engine::Engine;
use crate::ranking::distill::ExternalScores;
use crate::ranking::experiment::{Comparison, ModelRun};
use crate::setup::Setup;
use crate::stats::PairedTest;

/// The seed of the paired tests' bootstrap and permutations: fixed, so that a report reproduces.
pub const TESTS_SEED: u64 = 0x7465_7374;

/// The reference model's name in the paired tests (their `b`) and in `results.json`.
pub const REFERENCE: &str = "reference";

/// The figures of the reference model (`data.reference`) on the comparison's test split, when
/// the data name one.
pub fn reference_run(data: &PreparedData, setup: &Setup) -> Option<ModelRun> {
    let reference = data.reference.as_deref()?;
    Some(crate::ranking::experiment::reference_run(
        &data.prepared,
        reference,
        setup.idcg_zero,
    ))
}

/// Every paired test of a comparison: its own ([`Comparison::tests`]) and, with a reference
/// model, every method's students against it ([`REFERENCE`]), Holm-corrected within each
/// metric's family of them. The reference scores once, so each seed of a method is paired with
/// the same scores.
pub fn tests(data: &PreparedData, setup: &Setup, comparison: &Comparison) -> Vec<PairedTest> {
    tests_with(comparison, reference_run(data, setup).as_ref())
}

/// [`tests`] with the reference's figures given (None: no reference): the folds' pooled
/// comparison's too ([`super::folds::tests`]).
pub fn tests_with(comparison: &Comparison, reference: Option<&ModelRun>) -> Vec<PairedTest> {
    let mut all = comparison.tests(TESTS_SEED);
    let Some(reference) = reference else {
        return all;
    };
    for (graded, metric) in [(false, "ndcg@8"), (true, "graded_ndcg@8")] {
        let theirs = match graded {
            false => &reference.per_query,
            true => &reference.per_query_graded,
        };
        let mut family: Vec<PairedTest> = comparison
            .methods
            .iter()
            .filter_map(|r| {
                let ours = comparison.per_query(r.method, graded);
                if ours.is_empty() || ours.iter().any(Vec::is_empty) {
                    return None;
                }
                let same = vec![theirs.clone(); ours.len()];
                crate::stats::paired_test(
                    r.method.name(),
                    REFERENCE,
                    metric,
                    &ours,
                    &same,
                    TESTS_SEED,
                )
                .ok()
            })
            .collect();
        crate::stats::holm(&mut family);
        all.extend(family);
    }
    all
}

/// `results.json`'s `reference`: what the model is, what it reads, and its figures.
fn reference_json(reference: &ExternalScores, run: &ModelRun) -> serde_json::Value {
    serde_json::json!({
        "label": reference.label(),
        "description": reference.description,
        "split_features": reference.split_features,
        "privileged_features": reference.privileged_features,
        "note": reference.note,
        "run": run,
    })
}

/// What a comparison found, as `results.json` holds it: the data, the preparation, the
/// configuration, the setup, per method every figure with its spread (the `methods` object of
/// [`Comparison::methods_json`]), the test queries (`test_qids`, and `valid_qids` beside them
/// when there is a test split), each student's NDCG@8 on every
/// test query (`per_query`: `{method: [[NDCG@8 of each test query] for each seed]}`, and
/// `per_query_graded` on the graded relevance), and the paired tests (`tests`,
/// [`crate::stats::PairedTest`]).
pub fn results_json(
    data: &PreparedData,
    setup: &Setup,
    comparison: &Comparison,
) -> serde_json::Value {
    results_json_with(data, setup, comparison, &tests(data, setup, comparison))
}

/// [`results_json`] with the comparison's paired tests already computed
/// ([`tests`]): a door that shows them too (the CLI's table and report, the
/// page's verdicts) computes them once; the bootstrap and the sign flips are most of a summary's
/// time.
pub fn results_json_with(
    data: &PreparedData,
    setup: &Setup,
    comparison: &Comparison,
    tests: &[crate::stats::PairedTest],
) -> serde_json::Value {
    let mut config = setup
        .compare_config(Engine::Cpu)
        .map(|c| serde_json::to_value(c).expect("a configuration serialises"))
        .unwrap_or(serde_json::Value::Null);
    // Adam's learning rate and weight decay are the setup's `lr` and `weight_decay`: recorded
    // once, there, not again under the configuration derived from it.
    if let Some(adam) = config
        .pointer_mut("/train/adam")
        .and_then(|a| a.as_object_mut())
    {
        adam.remove("lr");
        adam.remove("weight_decay");
    }
    let test = data.prepared.test.as_ref().unwrap_or(&data.prepared.valid);
    let sentences: Vec<String> = tests
        .iter()
        .filter(|t| t.metric == comparison.verdict_metric())
        .map(crate::stats::sentence)
        .collect();
    let mut results = serde_json::json!({
        "data": data.description,
        "preparation": data.options,
        "privileged_columns": data.prepared.privileged_columns,
        "logs": data.logs,
        "config": config,
        "methods": comparison.methods_json(),
        "setup": setup,
        "test_qids": test.qids,
        "per_query": comparison.per_query_json(false),
        "per_query_graded": comparison.per_query_json(true),
        "tests": tests,
        "verdict_metric": comparison.verdict_metric(),
        "sentences": sentences,
    });
    // With a test split, the validation split's queries too: a script that trains elsewhere on
    // the same file (bench/unbiased_gbdt.py) holds out the same queries.
    if data.prepared.test.is_some() {
        results["valid_qids"] = data.prepared.valid.qids.clone().into();
    }
    // Models that do not rank, by method and seed (left out when there are none).
    let not_ranking = comparison.not_ranking();
    if !not_ranking.is_empty() {
        results["not_ranking"] = not_ranking.into();
    }
    // What preparation warned of the splits (few validation groups, shared queries, ...).
    if !data.prepared.warnings.is_empty() {
        results["warnings"] = data.prepared.warnings.clone().into();
    }
    // Settings given another value than the default that no part of the comparison reads.
    let unused = setup.unused_settings();
    if !unused.is_empty() {
        results["unused_settings"] = unused.into();
    }
    // The reference model: what it is, what it reads, and its figures.
    if let (Some(reference), Some(run)) = (&data.reference, reference_run(data, setup)) {
        results["reference"] = reference_json(reference, &run);
    }
    // A teacher trained elsewhere: what it is and what it reads.
    if let Some(teacher) = &data.teacher {
        results["external_teacher"] = teacher.report_json();
    }
    // The clicks the methods that learn from them read: propensities, true and estimated.
    if let Ok(Some(clicks)) = data.click_labels(&setup.methods) {
        results["clicks"] = clicks.report_json();
        let learned = comparison.learned_propensities();
        if !learned.is_empty() {
            results["clicks"]["learned_propensities"] = learned.into();
            results["clicks"]["learned_propensities_are"] = "the propensities each method learned with its ranker from its scores, relative to rank 1, mean over the seeds: DLA's as they stood at the end of its best epoch (learned at every step from the batch's scores, starting at 1), two-tower's those its best epoch trained on (learned from the whole training split's scores after the epoch before; the first epoch's are 1)".into();
        }
    }
    // The teachers trained once for two methods, when there are any.
    let shared = shared_teachers(data, setup);
    if !shared.is_empty() && data.teacher.is_none() {
        results["shared_teachers"] = shared.into();
    }
    results
}

/// results.json's sentences (`unused_settings`, `warnings`) in the words of a door without
/// flags (the page, Python): each flag as its setting's field
/// ([`crate::settings::flags_in_words`]).
pub fn results_in_words(results: &mut serde_json::Value) {
    for key in ["unused_settings", "warnings"] {
        if let Some(list) = results.get_mut(key).and_then(|v| v.as_array_mut()) {
            for sentence in list {
                if let Some(text) = sentence.as_str() {
                    *sentence = crate::settings::flags_in_words(text, &|_| None).into();
                }
            }
        }
    }
}

/// The verdicts of a comparison's paired tests on `metric` ([`Comparison::verdict_metric`]), one
/// per question it asks (each method against no distillation, PFD against GenD and
/// self-distillation, ...), in plain words ([`crate::stats::verdict`]): `{a, b, separates,
/// text}`, in the tests' order. The page shows them above its table and marks only what
/// `separates`; the CLI prints them first. The reference model (`data.reference`), when there
/// is one, is named by what it is ("PFD against LightGBM on x alone: ...").
pub fn verdicts(
    tests: &[PairedTest],
    metric: &str,
    reference: Option<&ExternalScores>,
) -> Vec<serde_json::Value> {
    let label = |name: &str| match (name, reference) {
        (REFERENCE, Some(reference)) => reference.label(),
        _ => crate::ranking::distill::Method::parse(name)
            .map_or(name, |m| m.entry().label)
            .to_string(),
    };
    // The first method opens the sentence.
    let opening = |name: &str| {
        let label = label(name);
        let mut chars = label.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    // A verdict on another metric than NDCG@8 on y names it ("... against naive on graded
    // NDCG@8"), so that it is not read as the table's first figure.
    let against = |name: &str| match metric {
        "ndcg@8" => label(name),
        other => format!("{} on {}", label(name), crate::stats::metric_words(other)),
    };
    tests
        .iter()
        .filter(|t| t.metric == metric)
        .map(|t| {
            serde_json::json!({
                "a": t.a,
                "b": t.b,
                "separates": crate::stats::separates(t),
                "text": crate::stats::verdict(t, &opening(&t.a), &against(&t.b)),
            })
        })
        .collect()
}

/// What the reports say of the teachers a comparison trains once for two methods
/// ([`CompareConfig::jobs_on`]): a sentence each; none when every method trains its own.
pub fn shared_teachers(data: &PreparedData, setup: &Setup) -> Vec<String> {
    setup
        .compare_config(Engine::Cpu)
        .map(|c| c.shared_teachers(data.prepared.train.d_z))
        .unwrap_or_default()
}
