//! The PFD paper's data preparation (spec §1).

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::Path;

use distillrank::data::inputs::Inputs;
use distillrank::data::letor::{read_letor_file, ReadOptions};
use distillrank::data::prepare::{
    correlations, filter_groups, prepare, signed_log1p, FeatureView, GumbelDraws, PrepareOptions,
    PrivilegedSplit,
};
use distillrank::data::synth::{generate, SynthKind, SynthOptions};
use distillrank::data::Dataset;
use distillrank::error::Error;

fn mq2008(split: &str) -> Dataset {
    let path = Path::new(&letor_data::data("mq2008/Fold1")).join(split);
    read_letor_file(&path, None, &ReadOptions::default()).unwrap()
}

#[test]
fn filter_reports_what_each_rule_removed() {
    let data = mq2008("train.txt");
    let (kept, report) = filter_groups(&data, 10);
    // Counted independently of the filter: per group, all-zero grades first, then size < 10.
    let (mut no_rel, mut small) = (0, 0);
    for g in 0..data.n_groups() {
        let docs = data.group(g);
        if data.grades[docs.clone()].iter().all(|&r| r == 0) {
            no_rel += 1;
        } else if docs.len() < 10 {
            small += 1;
        }
    }
    assert_eq!(report.no_relevant_groups, no_rel);
    assert_eq!(
        report.no_relevant_groups, 132,
        "the stats command reports 132 groups without a positive grade"
    );
    assert_eq!(report.small_groups, small);
    assert_eq!(kept.n_groups(), 471 - no_rel - small);
    assert_eq!(
        report.docs_in,
        report.no_relevant_docs + report.small_docs + report.docs_out
    );
    assert!((0..kept.n_groups()).all(|g| kept.group(g).len() >= 10));
}

#[test]
fn signed_log1p_keeps_sign() {
    let mut v = [0.0f32, 1.0, -1.0, 11_089_534.0, -71.7];
    signed_log1p(&mut v);
    let want = [
        0.0,
        2f32.ln(),
        -(2f32.ln()),
        11_089_535f32.ln(),
        -(72.7f32.ln()),
    ];
    for (a, b) in v.iter().zip(want) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
}

#[test]
fn gumbel_labels_have_the_logistic_rate_and_are_seeded() {
    let n = 200_000;
    let grades: Vec<u8> = (0..n).map(|i| (i % 5) as u8).collect();
    let draws = GumbelDraws::new(n, 42, 0);
    let labels = draws.labels(&grades, 4.0, 2.5);
    for r in 0..5u8 {
        let (mut ones, mut count) = (0.0, 0.0);
        for (g, y) in grades.iter().zip(&labels) {
            if *g == r {
                ones += *y as f64;
                count += 1.0;
            }
        }
        let want = 1.0 / (1.0 + (-(4.0 * (r as f64 - 2.5))).exp());
        // 40,000 draws per grade: 5 standard errors at most.
        let se = (want * (1.0 - want) / count).sqrt().max(1e-4);
        assert!(
            (ones / count - want).abs() < 5.0 * se,
            "grade {r}: {} vs {want}",
            ones / count
        );
    }
    assert_eq!(
        GumbelDraws::new(n, 42, 0).labels(&grades, 4.0, 2.5),
        labels,
        "same seed, same labels"
    );
    assert_ne!(
        GumbelDraws::new(n, 43, 0).labels(&grades, 4.0, 2.5),
        labels,
        "another seed, other labels"
    );
}

#[test]
fn zero_variance_features_have_zero_correlation() {
    // Column 1 constant, column 2 = y, column 3 = -y.
    let y = [1.0, 0.0, 1.0, 0.0];
    let features = [5.0, 1.0, -1.0, 5.0, 0.0, 0.0, 5.0, 1.0, -1.0, 5.0, 0.0, 0.0];
    let c = correlations(&features, 3, &y);
    assert_eq!(c[0], 0.0);
    assert!(
        (c[1] - 1.0).abs() < 1e-12 && (c[2] + 1.0).abs() < 1e-12,
        "{c:?}"
    );
}

#[test]
fn privileged_split_takes_the_most_correlated_training_features() {
    let (train, valid, test) = (mq2008("train.txt"), mq2008("vali.txt"), mq2008("test.txt"));
    let options = PrepareOptions {
        tau_target: 2.8,
        privileged: PrivilegedSplit::TopCorrelation(10),
        ..Default::default()
    };
    let p = prepare(&train, Some(&valid), Some(&test), &options).unwrap();
    assert_eq!(p.privileged_columns.len(), 10);
    assert_eq!(p.regular_columns.len(), 36);
    assert_eq!((p.train.d_x, p.train.d_z), (36, 10));
    // A share of the 40 informative columns, rounded, one at least: a share above 0 makes
    // some feature privileged.
    for (percent, d_z) in [(30.0, 12), (1.0, 1), (1e-300, 1)] {
        let options = PrepareOptions {
            privileged: PrivilegedSplit::TopShare(percent / 100.0),
            ..options.clone()
        };
        let p = prepare(&train, Some(&valid), Some(&test), &options).unwrap();
        assert_eq!(p.train.d_z, d_z, "top:{percent}%");
    }
    // Every privileged column correlates at least as much as every regular one.
    let min_z = p
        .privileged_columns
        .iter()
        .map(|&c| p.correlations[c - 1].abs())
        .fold(f64::INFINITY, f64::min);
    let max_x = p
        .regular_columns
        .iter()
        .map(|&c| p.correlations[c - 1].abs())
        .fold(0.0, f64::max);
    assert!(min_z >= max_x);
    // The constant columns 6-10 and 43 are never privileged.
    assert!(![6, 7, 8, 9, 10, 43]
        .iter()
        .any(|c| p.privileged_columns.contains(c)));
    // Positive groups are those with a y = 1.
    for g in 0..p.train.n_groups() {
        assert_eq!(
            p.train.positive_group[g],
            p.train.labels[p.train.group(g)].contains(&1.0)
        );
    }
    assert!(!p.holdout);
    // Same seed, same preparation.
    let again = prepare(&train, Some(&valid), Some(&test), &options).unwrap();
    assert_eq!(again.train, p.train);
    assert_eq!(again.test, p.test);
    // The inputs of each view: x and z side by side, row by row, without a copy of either.
    let both = Inputs::of(&p.train, FeatureView::Both);
    assert_eq!((both.n_rows(), both.width()), (p.train.n_docs(), 46));
    assert!(both.as_dense().is_none());
    let mut rows = Vec::new();
    both.append_rows(3..5, &mut rows);
    let (dx, dz) = (p.train.d_x, p.train.d_z);
    for (i, d) in (3..5).enumerate() {
        let row = &rows[i * 46..(i + 1) * 46];
        assert_eq!(row[..dx], p.train.regular[d * dx..(d + 1) * dx]);
        assert_eq!(row[dx..], p.train.privileged[d * dz..(d + 1) * dz]);
    }
    let x = Inputs::of(&p.train, FeatureView::Regular);
    assert_eq!(x.as_dense(), Some(&p.train.regular[..]));
    // Multi-teacher PFD: x beside columns 0 and 2 of z.
    let subset = [0, 2];
    let some = Inputs::with_subset(&p.train, &subset);
    assert_eq!(some.width(), dx + 2);
    let mut row = Vec::new();
    some.append_rows(7..8, &mut row);
    assert_eq!(row[..dx], p.train.regular[7 * dx..8 * dx]);
    assert_eq!(
        row[dx..],
        [p.train.privileged[7 * dz], p.train.privileged[7 * dz + 2]]
    );
    // Chunks cover every row once, in order.
    let mut chunked = Vec::new();
    some.for_each_chunk(100, |chunk| chunked.extend_from_slice(chunk));
    let mut whole = Vec::new();
    some.append_rows(0..p.train.n_docs(), &mut whole);
    assert_eq!(chunked, whole);
}

#[test]
fn without_a_validation_split_ten_percent_of_queries_are_held_out() {
    let synthetic = generate(&SynthOptions {
        queries: 200,
        ..Default::default()
    })
    .unwrap();
    let options = PrepareOptions {
        tau_target: 3.5,
        privileged: PrivilegedSplit::Columns(synthetic.privileged_columns.clone()),
        ..Default::default()
    };
    let p = prepare(&synthetic.dataset, None, None, &options).unwrap();
    assert!(p.holdout);
    assert_eq!(p.valid.n_groups(), 20);
    assert_eq!(p.train.n_groups(), 180);
    assert_eq!(
        p.train.n_docs() + p.valid.n_docs(),
        synthetic.dataset.n_docs()
    );
}

#[test]
fn discriminative_z_equals_y_when_tau_priv_is_tau_target() {
    let synthetic = generate(&SynthOptions::default()).unwrap();
    let base = PrepareOptions {
        tau_target: 3.5,
        ..Default::default()
    };
    let same = prepare(
        &synthetic.dataset,
        None,
        None,
        &PrepareOptions {
            privileged: PrivilegedSplit::Discriminative { tau_priv: 3.5 },
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(same.train.d_z, 1);
    assert_eq!(same.train.privileged, same.train.labels);
    assert_eq!(
        same.train.d_x, synthetic.dataset.n_features,
        "every original feature stays regular"
    );
    // A smaller tau_priv marks a superset of the documents y marks (same draws).
    let loose = prepare(
        &synthetic.dataset,
        None,
        None,
        &PrepareOptions {
            privileged: PrivilegedSplit::Discriminative { tau_priv: 2.5 },
            ..base
        },
    )
    .unwrap();
    assert!(loose
        .train
        .privileged
        .iter()
        .zip(&loose.train.labels)
        .all(|(z, y)| z >= y));
    assert!(loose.train.privileged.iter().sum::<f32>() > loose.train.labels.iter().sum::<f32>());
}

#[test]
fn bad_configurations_fail_before_training() {
    let synthetic = generate(&SynthOptions::default()).unwrap();
    let data = &synthetic.dataset;
    let all: Vec<usize> = (1..=data.n_features).collect();
    let cases: Vec<(PrepareOptions, &str)> = vec![
        (
            PrepareOptions {
                privileged: PrivilegedSplit::Columns(vec![3, 999]),
                tau_target: 3.5,
                ..Default::default()
            },
            "privileged column 999 does not exist",
        ),
        (
            PrepareOptions {
                privileged: PrivilegedSplit::Columns(all),
                tau_target: 3.5,
                ..Default::default()
            },
            "every feature is privileged",
        ),
        (
            PrepareOptions {
                privileged: PrivilegedSplit::TopCorrelation(30),
                tau_target: 3.5,
                ..Default::default()
            },
            "at least one feature must stay regular",
        ),
        (
            PrepareOptions {
                privileged: PrivilegedSplit::TopCorrelation(3),
                tau_target: 40.0,
                ..Default::default()
            },
            "no positive training groups",
        ),
        (
            PrepareOptions {
                min_group_size: 1000,
                ..Default::default()
            },
            "no training groups left",
        ),
    ];
    for (options, fragment) in cases {
        let err = prepare(data, None, None, &options).unwrap_err();
        assert!(matches!(err, Error::Config(_) | Error::Data(_)));
        assert!(err.to_string().contains(fragment), "{err}");
    }
}

#[test]
fn synthetic_data_is_seeded_and_has_both_kinds() {
    for kind in [SynthKind::Letor, SynthKind::Linear] {
        let o = SynthOptions {
            kind,
            queries: 50,
            ..Default::default()
        };
        let a = generate(&o).unwrap();
        assert_eq!(a.dataset, generate(&o).unwrap().dataset);
        assert_ne!(
            a.dataset,
            generate(&SynthOptions {
                seed: 99,
                ..o.clone()
            })
            .unwrap()
            .dataset
        );
        assert_eq!(a.dataset.n_groups(), 50);
        assert_eq!(a.privileged_columns, (25..=30).collect::<Vec<_>>());
        let stats = a.dataset.stats();
        assert!(
            stats.grades.len() == 5,
            "grades 0..4 all occur: {:?}",
            stats.grades
        );
        assert!((10..=40).contains(&stats.docs_per_query_min) && stats.docs_per_query_max <= 40);
    }
}

#[test]
fn synthetic_privileged_features_carry_signal_the_regular_ones_lack() {
    // With privileged strength 0.8, z correlates with relevance more than in the 0.0 setting.
    let corr_z = |strength: f64| {
        let s = generate(&SynthOptions {
            privileged_strength: strength,
            queries: 600,
            ..Default::default()
        })
        .unwrap();
        let grades: Vec<f32> = s.dataset.grades.iter().map(|&g| g as f32).collect();
        let c = correlations(&s.dataset.features, s.dataset.n_features, &grades);
        s.privileged_columns
            .iter()
            .map(|&c_| c[c_ - 1].abs())
            .fold(0.0, f64::max)
    };
    let (strong, none) = (corr_z(0.8), corr_z(0.0));
    assert!(
        strong > 0.2 && none < 0.1,
        "max |corr(z, r)|: {strong} at strength 0.8, {none} at 0"
    );
}

/// The seeded draws are pinned bit for bit: ChaCha8 plus `libm` give the same values on every
/// platform (native and wasm32), so the same seed gives the same labels everywhere. A change here
/// changes every dataset's labels and must be deliberate.
#[test]
fn seeded_draws_are_pinned_bit_for_bit() {
    let draws = GumbelDraws::new(2, 0, 0);
    let bits: Vec<u64> = [draws.g0[0], draws.g1[0], draws.g0[1]]
        .iter()
        .map(|g| g.to_bits())
        .collect();
    assert_eq!(
        bits,
        vec![0x3fb8210917413f34, 0xbfd71139fbbfccbc, 0xbfdda2c0a769777e]
    );
    let mut rng = distillrank::rng::Rng::new(5);
    assert_eq!(
        [rng.normal().to_bits(), rng.normal().to_bits()],
        [0xbfd8df656cf99d78, 0x3fdb623971d19be8]
    );
}

#[test]
fn data_without_features_or_validation_positives_are_refused() {
    let text: String = (0..12).map(|i| format!("{} qid:1\n", i % 2)).collect();
    let data = distillrank::data::letor::parse_letor_bytes(
        Path::new("bare.txt"),
        text.as_bytes(),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    let err = prepare(&data, None, None, &PrepareOptions::default()).unwrap_err();
    assert!(err.to_string().contains("no features"), "{err}");
}

#[test]
fn privileged_correlation_ties_z_to_x() {
    // Largest |Pearson correlation| between a regular feature and a privileged one.
    let max_corr_x_z = |rho: f64| {
        let s = generate(&SynthOptions {
            privileged_correlation: rho,
            queries: 600,
            ..Default::default()
        })
        .unwrap();
        let d = &s.dataset;
        let column = |j: usize| -> Vec<f32> {
            (0..d.n_docs())
                .map(|i| d.features[i * d.n_features + j])
                .collect()
        };
        let mut largest = 0f64;
        for &z in &s.privileged_columns {
            let c = correlations(&d.features, d.n_features, &column(z - 1));
            for r in &c[..d.n_features - s.privileged_columns.len()] {
                largest = largest.max(r.abs());
            }
        }
        largest
    };
    let (independent, tied) = (max_corr_x_z(0.0), max_corr_x_z(0.8));
    assert!(
        independent < 0.06 && tied > 0.15,
        "max |corr(x, z)|: {independent} at correlation 0, {tied} at 0.8"
    );
    let err = generate(&SynthOptions {
        privileged_correlation: 1.5,
        ..Default::default()
    })
    .err()
    .expect("a correlation above 1 is refused");
    assert!(
        err.to_string()
            .contains("privileged correlation 1.5 must lie in [0, 1]"),
        "{err}"
    );
}

#[test]
fn a_query_spread_gathers_the_relevant_documents_in_fewer_queries() {
    // The share of queries with a grade-4 document: about 1 - 0.96^25 without a spread, and
    // clearly fewer when each query's relevance is shifted as a whole.
    let share_with_top_grade = |query_spread: f64| {
        let s = generate(&SynthOptions {
            query_spread,
            ..Default::default()
        })
        .unwrap()
        .dataset;
        let groups = s.group_offsets.windows(2);
        let top = groups
            .clone()
            .filter(|w| s.grades[w[0]..w[1]].contains(&4))
            .count();
        top as f64 / groups.count() as f64
    };
    let (alike, spread) = (share_with_top_grade(0.0), share_with_top_grade(1.0));
    assert!(
        alike > 0.5 && spread < 0.75 * alike,
        "queries with a grade-4 document: {alike} without a spread, {spread} with 1.0"
    );
    // The shift has its own random stream: the documents' features are the same draw.
    let a = generate(&SynthOptions::default()).unwrap().dataset;
    let b = generate(&SynthOptions {
        query_spread: 1.0,
        ..Default::default()
    })
    .unwrap()
    .dataset;
    assert_eq!(a.features, b.features);
    assert_ne!(a.grades, b.grades);
    let err = generate(&SynthOptions {
        query_spread: -1.0,
        ..Default::default()
    })
    .err()
    .expect("a negative spread is refused");
    assert!(err.to_string().contains("query spread -1 must be"), "{err}");
}

#[test]
fn parallel_preparation_gives_the_same_bits_for_any_number_of_threads() {
    use distillrank::data::prepare::{correlations, gather_columns, signed_log1p};
    // More rows than one piece of the parallel passes, and a ragged last piece.
    let (n, width) = (10_000, 7);
    let mut rng = distillrank::rng::Rng::new(3);
    let features: Vec<f32> = (0..n * width)
        .map(|_| (rng.normal() * 10.0) as f32)
        .collect();
    let y: Vec<f32> = (0..n).map(|_| (rng.uniform() < 0.2) as u8 as f32).collect();
    let data = distillrank::data::Dataset {
        n_features: width,
        features: features.clone().into(),
        grades: vec![1; n],
        group_offsets: vec![0, n],
        qids: vec![1],
        source: None,
        feature_names: None,
    };
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut logged = features.clone();
                signed_log1p(&mut logged);
                (
                    logged,
                    correlations(&features, width, &y),
                    gather_columns(&data, &[7, 2, 2]),
                )
            })
    };
    let one = run(1);
    for threads in [2, 3] {
        let other = run(threads);
        assert_eq!(one.0, other.0);
        assert_eq!(
            one.1.iter().map(|c| c.to_bits()).collect::<Vec<_>>(),
            other.1.iter().map(|c| c.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(one.2, other.2);
    }
    // The gathered columns are the columns.
    for d in [0, 4095, 4096, n - 1] {
        assert_eq!(
            &one.2[d * 3..d * 3 + 3],
            &[
                features[d * width + 6],
                features[d * width + 1],
                features[d * width + 1]
            ]
        );
    }
    // And the correlation is Pearson's, computed directly in one pass.
    let j = 3;
    let xs: Vec<f64> = (0..n).map(|d| features[d * width + j] as f64).collect();
    let ys: Vec<f64> = y.iter().map(|&v| v as f64).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / n as f64,
        ys.iter().sum::<f64>() / n as f64,
    );
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
    assert!((one.1[j] - sxy / (sxx * syy).sqrt()).abs() < 1e-12);
}

/// Preparation of splits it owns, giving their memory back window by window, gives the same bits
/// as preparation of borrowed splits: with parsed and with memory-mapped matrices, with a
/// validation file or a held-out validation split, and with a test file or a test split held out
/// of the training queries. The owned and the mapped matrices are released as they are read.
#[test]
fn prepared_from_owned_or_mapped_splits_the_same_as_from_borrowed_ones() {
    use distillrank::data::cache::{read_cache, write_cache};
    use distillrank::data::prepare::{hold_out_test, prepare_raw, Prepared, RawSplits};
    let same = |a: &Prepared, b: &Prepared| {
        assert_eq!(a.train, b.train);
        assert_eq!(a.valid, b.valid);
        assert_eq!(a.test, b.test);
        assert_eq!(a.privileged_columns, b.privileged_columns);
        assert_eq!(a.correlations, b.correlations);
        assert_eq!(a.filter, b.filter);
    };
    let (train, valid, test) = (mq2008("train.txt"), mq2008("vali.txt"), mq2008("test.txt"));
    let options = PrepareOptions {
        tau_target: 2.8,
        ..Default::default()
    };
    let mut quiet = |_: &str| {};

    // Three files.
    let borrowed = prepare(&train, Some(&valid), Some(&test), &options).unwrap();
    let raw = RawSplits {
        train: train.clone(),
        valid: Some(valid.clone()),
        test: Some(test.clone()),
        hold_out_test: None,
    };
    same(&prepare_raw(raw, &options, &mut quiet).unwrap(), &borrowed);

    // One file: validation held out by preparation, the test split by the draw of hold_out_test.
    let (rest, held_out) = hold_out_test(&train, 0.2, 5).unwrap();
    let borrowed = prepare(&rest, None, Some(&held_out), &options).unwrap();
    let raw = RawSplits {
        train: train.clone(),
        valid: None,
        test: None,
        hold_out_test: Some((0.2, 5)),
    };
    same(&prepare_raw(raw, &options, &mut quiet).unwrap(), &borrowed);

    // The training matrix read in place from a binary cache.
    let folder = tempfile::tempdir().unwrap();
    let (source, cache) = (
        folder.path().join("train.txt"),
        folder.path().join("train.drcache"),
    );
    std::fs::write(&source, "").unwrap();
    write_cache(&train, &source, &cache).unwrap();
    let mapped = read_cache(&cache, None).unwrap().0;
    assert!(mapped.features.is_mapped());
    let raw = RawSplits {
        train: mapped,
        valid: None,
        test: None,
        hold_out_test: Some((0.2, 5)),
    };
    same(&prepare_raw(raw, &options, &mut quiet).unwrap(), &borrowed);

    // A matrix of several windows (over 16 MiB), the held-out test groups spread over all of them.
    let large = generate(&SynthOptions {
        queries: 2_000,
        min_docs: 100,
        max_docs: 140,
        regular: 40,
        ..Default::default()
    })
    .unwrap()
    .dataset;
    assert!(large.features.len() * 4 > 2 * (16 << 20));
    let (rest, held_out) = hold_out_test(&large, 0.2, 1).unwrap();
    let borrowed = prepare(&rest, None, Some(&held_out), &PrepareOptions::default()).unwrap();
    let raw = RawSplits {
        train: large,
        valid: None,
        test: None,
        hold_out_test: Some((0.2, 1)),
    };
    same(
        &prepare_raw(raw, &PrepareOptions::default(), &mut quiet).unwrap(),
        &borrowed,
    );
}

/// Giving memory back leaves the rest of a matrix as it was, owned or mapped.
#[test]
fn released_rows_leave_the_others_untouched() {
    use distillrank::data::Features;
    let values: Vec<f32> = (0..300_000).map(|i| i as f32).collect();
    let mut owned = Features::from(values.clone());
    owned.release(10_000..200_000);
    assert_eq!(owned[..10_000], values[..10_000]);
    assert_eq!(owned[200_000..], values[200_000..]);
    assert!(owned[10_000..200_000]
        .iter()
        .zip(&values[10_000..200_000])
        .all(|(&a, &b)| a == b || a == 0.0));
}
