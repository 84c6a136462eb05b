//! One student trained on the bundled MQ2008 Fold1's grades, saved (safetensors + JSON), read
//! back and scoring the raw test file as `distillrank predict` does; prints its test NDCG@8.
//!
//! ```sh
//! cargo run --release --example train_and_predict
//! ```

use distillrank::data::inputs::Inputs;
use distillrank::engine::Backend;
use distillrank::metrics::{mean_ndcg, IdcgZero};
use distillrank::pipeline::{self, store::Disk, Silent};
use distillrank::ranking::distill::Method;
use distillrank::setup::{DataSource, Labels, Setup};
use distillrank::stop::Stop;

fn main() -> distillrank::error::Result<()> {
    let mut setup = Setup::default();
    setup.data.source = DataSource::Mq2008;
    setup.data.labels = Labels::Grades;
    setup.epochs = 10;
    setup.widths = vec![64, 32];
    setup.backend = Backend::Cpu;
    setup.check(None)?;

    let (engine, _) = distillrank::native::open_engine(setup.backend)?;
    let data =
        pipeline::preparation::prepare(&setup.data, &mut Disk::default(), true, &mut Silent)?;
    let (model, run) = distillrank::native::pipeline::fit(
        &data,
        &setup,
        Method::NoDistillation,
        0,
        &engine,
        &Stop::default(),
        &mut Silent,
    )?;
    println!("kept epoch {} of {}", run.student.best_epoch, setup.epochs);

    // Saved as `distillrank train --save` saves, and read back.
    let dir = std::env::temp_dir().join(format!("distillrank-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| distillrank::error::Error::io(&dir, e))?;
    let prefix = dir.join("student");
    let config = pipeline::run::student_config(&data, &setup, &model);
    distillrank::model_io::save(&prefix, &model, &config)?;
    let (model, config) = distillrank::model_io::load(&prefix, false)?;

    // The raw test file, as `distillrank predict` reads it: the model applies its own transform.
    let [_, _, test] = distillrank::data::bundled::mq2008()?;
    let inputs = distillrank::model_io::model_inputs(&test, &config, &prefix, false)?;
    let scores = distillrank::native::block_on(
        engine.score_ensemble(&model, Inputs::dense(&inputs, test.n_docs())),
    )?;
    let grades: Vec<f32> = test.grades.iter().map(|&g| f32::from(g)).collect();
    let ndcg = mean_ndcg(8, &scores, &grades, &test.group_offsets, IdcgZero::Exclude);
    println!(
        "test NDCG@8 of the saved student: {:.4}",
        ndcg.unwrap_or(f64::NAN)
    );
    std::fs::remove_dir_all(&dir).map_err(|e| distillrank::error::Error::io(&dir, e))?;
    Ok(())
}
