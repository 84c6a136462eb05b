//! PFD from a teacher trained elsewhere: a LightGBM model on all 46 MQ2008 columns
//! (`tests/data/mq2008-lightgbm.txt`) teaches a student that reads x alone (the `top:30%` columns
//! held out as z), against the student trained alone, on MQ2008 Fold1's files
//! (`cargo xtask data` unpacks them into `target/data/`). Prints the test NDCG@8 of both and
//! the paired test's verdict.
//!
//! ```sh
//! cargo xtask data && cargo run --release --example distill_lightgbm
//! ```

use distillrank::engine::Backend;
use distillrank::pipeline::{self, store::Disk, Silent};
use distillrank::ranking::distill::Method;
use distillrank::setup::{DataSource, ExternalTeacher, Labels, Setup};
use distillrank::stop::Stop;

fn main() -> distillrank::error::Result<()> {
    let fold = "target/data/mq2008/Fold1";
    let mut setup = Setup::default();
    setup.data.source = DataSource::files(
        format!("{fold}/train.txt"),
        Some(format!("{fold}/vali.txt")),
        Some(format!("{fold}/test.txt")),
    );
    setup.data.labels = Labels::Grades;
    setup.data.privileged = Some("top:30%".into());
    setup.data.teacher = ExternalTeacher {
        model: Some("tests/data/mq2008-lightgbm.txt".into()),
        ..ExternalTeacher::default()
    };
    setup.methods = vec![Method::NoDistillation, Method::Pfd];
    setup.seeds = 3;
    setup.epochs = 10;
    setup.widths = vec![64, 32];
    setup.backend = Backend::Cpu;
    setup.check(None)?;

    let (engine, _) = distillrank::native::open_engine(setup.backend)?;
    let data =
        pipeline::preparation::prepare(&setup.data, &mut Disk::default(), true, &mut Silent)?;
    let comparison = distillrank::native::pipeline::compare(
        &data,
        &setup,
        &engine,
        &Stop::default(),
        &mut Silent,
    )?;
    let results = pipeline::report::results_json(&data, &setup, &comparison);
    for method in &setup.methods {
        let ndcg = &results["methods"][method.name()]["ndcg@8"];
        println!(
            "{:<16} test NDCG@8 {:.4}",
            method.name(),
            ndcg["mean"].as_f64().unwrap_or(f64::NAN)
        );
    }
    for sentence in results["sentences"].as_array().into_iter().flatten() {
        println!("{}", sentence.as_str().unwrap_or_default());
    }
    Ok(())
}
