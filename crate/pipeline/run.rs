//! Training what a setup describes on prepared data: every method over its seeds ([`compare`]),
//! one method at one seed ([`fit`]), and the models they save.

use std::path::Path;

use crate::data::prepare::FeatureView;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model::Ensemble;
use crate::model_io::ModelConfig;
use crate::ranking::distill::Method;
use crate::ranking::experiment::{self, CompareConfig, SeedRun};
use crate::setup::Setup;
use crate::stop::Stop;

use super::preparation::PreparedData;

/// The comparison `setup` describes, on `engine`, checked against the prepared data, stopping
/// when `stop` is raised.
pub fn compare_config(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    stop: &Stop,
) -> Result<CompareConfig> {
    let mut config = setup.compare_config(engine.clone())?;
    config.train.stop = stop.clone();
    config.external = data.teacher.clone();
    config.clicks = data.click_labels(&config.methods)?;
    config.validate(&data.prepared)?;
    Ok(config)
}

/// One method at one seed: its teachers, then its student, on the prepared data. Without a test
/// split (Python's `fit`), the student's figures are on the validation split.
pub async fn fit_async(
    data: &PreparedData,
    setup: &Setup,
    method: Method,
    seed: u64,
    engine: &Engine,
    stop: &Stop,
    on: &mut experiment::OnProgress<'_>,
) -> Result<(Ensemble, SeedRun)> {
    let mut config = setup.compare_config(engine.clone())?;
    config.train.stop = stop.clone();
    config.methods = vec![method];
    config.external = data.teacher.clone();
    config.clicks = data.click_labels(&config.methods)?;
    config.validate_methods(&data.prepared)?;
    experiment::run_method_seed(&data.prepared, &config, method, seed, on).await
}

/// The config a student of `setup` carries when saved: it reads the regular columns of the
/// source data, after the signed log1p and the fitted maps that follow it, and names the data and the setup that trained it.
pub fn student_config(data: &PreparedData, setup: &Setup, model: &Ensemble) -> ModelConfig {
    ModelConfig::new(
        model,
        setup.loss,
        FeatureView::Regular,
        data.prepared.regular_columns.clone(),
        data.source_features,
    )
    .with_input_maps(&data.prepared.input_maps, FeatureView::Regular)
    .trained_on(&data.description, serde_json::to_value(setup).ok())
    .labelled_as(&data.options)
    .named(data.feature_names.clone())
}

/// Checks a saved model's config beyond its own fields ([`crate::model_io::parse_config`]): the
/// setup it records, when it records one, must be a setup this build reads
/// ([`Setup::check_recorded`]), so that a config that says something this build does not know
/// (an `activation` the model does not have) is refused wherever it is written.
pub fn check_model_config(config: &ModelConfig, name: &Path) -> Result<()> {
    match &config.setup {
        Some(setup) => Setup::check_recorded(setup).map_err(|message| Error::Model {
            path: name.to_path_buf(),
            message,
        }),
        None => Ok(()),
    }
}

/// A saved model ([`crate::model_io::load`], `reads_trees` as there) with its config checked
/// as [`check_model_config`] does.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_model(prefix: &Path, reads_trees: bool) -> Result<(Ensemble, ModelConfig)> {
    let (model, config) = crate::model_io::load(prefix, reads_trees)?;
    check_model_config(&config, &crate::model_io::paths(prefix).1)?;
    Ok((model, config))
}
