//! A comparison on the bundled MQ2008 Fold1, trained on its grades: no distillation against PFD,
//! three seeds, a small student, on the CPU engine; prints each method's test NDCG@8 and the
//! paired test's verdict.
//!
//! ```sh
//! cargo run --release --example compare
//! ```

use distillrank::engine::Backend;
use distillrank::pipeline::{self, store::Disk, Silent};
use distillrank::ranking::distill::Method;
use distillrank::setup::{DataSource, Labels, Setup};
use distillrank::stop::Stop;

fn main() -> distillrank::error::Result<()> {
    let mut setup = Setup::default();
    setup.data.source = DataSource::Mq2008;
    setup.data.labels = Labels::Grades;
    setup.methods = vec![Method::NoDistillation, Method::Pfd];
    setup.seeds = 3;
    setup.epochs = 10;
    setup.widths = vec![32, 16];
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
        let (mean, std) = (ndcg["mean"].as_f64(), ndcg["std"].as_f64());
        println!(
            "{:<16} test NDCG@8 {:.4} ± {:.4}",
            method.name(),
            mean.unwrap_or(f64::NAN),
            std.unwrap_or(f64::NAN)
        );
    }
    for sentence in results["sentences"].as_array().into_iter().flatten() {
        println!("{}", sentence.as_str().unwrap_or_default());
    }
    Ok(())
}
