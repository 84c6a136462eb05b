//! The global objectives (spec §7): every gradient against finite differences in f64, the dual
//! update, the reference's formulas and parsing (the binary metrics: tests/objectives_metrics.rs;
//! the data and training: tests/objectives_training.rs).

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use distillrank::error::Error;
use distillrank::model::objective::{
    dual_ascent, f_beta_bound, precision_anchors, Grad, LabelPrior, Objective, Params, Surrogate,
};
use distillrank::objectives::metrics::Confusion;
use distillrank::rng::Rng;

#[path = "common/finite_differences.rs"]
mod finite_differences;
use finite_differences::{assert_close, numeric_gradient};

/// The tolerance of every gradient check here.
fn assert_near(analytic: &[f64], numeric: &[f64], what: &str) {
    assert_close(analytic, numeric, 1e-6, 1e-5, what);
}

/// A batch of 23 logits with 6 positives, and lambdas and biases away from 0.
fn batch(seed: u64, n_lambdas: usize, n_biases: usize) -> (Vec<f64>, Vec<f64>, Params<f64>) {
    let mut rng = Rng::new(seed);
    let logits: Vec<f64> = (0..23).map(|_| 1.5 * rng.normal()).collect();
    let labels: Vec<f64> = (0..23).map(|i| (i % 4 == 1) as u8 as f64).collect();
    let params = Params {
        lambdas: (0..n_lambdas)
            .map(|_| rng.uniform_range(0.2, 3.0))
            .collect(),
        biases: (0..n_biases)
            .map(|_| rng.uniform_range(-1.0, 1.0))
            .collect(),
    };
    (logits, labels, params)
}

/// The points where the hinge has a kink, for the arguments the objective feeds it.
fn near_hinge_kink(objective: &Objective, logits: &[f64], labels: &[f64], biases: &[f64]) -> bool {
    let near = |v: f64| (v.abs() - 1.0).abs() < 1e-4;
    match objective {
        Objective::RocAuc => (0..logits.len()).any(|i| {
            (0..logits.len())
                .any(|j| labels[i] > 0.5 && labels[j] < 0.5 && near(logits[i] - logits[j]))
        }),
        _ => logits
            .iter()
            .any(|&f| near(f) || biases.iter().any(|&b| near(f + b))),
    }
}

/// The loss alone, without its gradients.
fn loss_value(
    objective: &Objective,
    surrogate: Surrogate,
    logits: &[f64],
    labels: &[f64],
    pi: f64,
    params: &Params<f64>,
) -> f64 {
    objective.loss(surrogate, logits, labels, pi, params, &mut Grad::default())
}

fn all_objectives() -> Vec<Objective> {
    let mut list = Objective::defaults();
    list.push(Objective::AucPr { anchors: 5 });
    list.push(Objective::FBeta(2.0));
    list.push(Objective::RecallAtPrecision(0.3));
    list
}

#[test]
fn every_objective_gradient_matches_finite_differences() {
    let pi = 0.27;
    for surrogate in [Surrogate::Log, Surrogate::Hinge] {
        for (o, objective) in all_objectives().iter().enumerate() {
            let what = format!("{objective} ({surrogate})");
            let (logits, labels, params) =
                batch(o as u64 + 10, objective.n_lambdas(), objective.n_biases());
            assert!(
                !(surrogate == Surrogate::Hinge
                    && near_hinge_kink(objective, &logits, &labels, &params.biases)),
                "{what}: the batch sits on a hinge kink; pick another seed"
            );
            let mut grad = Grad::default();
            let loss = objective.loss(surrogate, &logits, &labels, pi, &params, &mut grad);
            assert!(loss.is_finite(), "{what}: loss {loss}");
            let value = |logits: &[f64], params: &Params<f64>| {
                loss_value(objective, surrogate, logits, &labels, pi, params)
            };
            let numeric = numeric_gradient(&logits, |x| value(x, &params));
            assert_near(&grad.dlogits, &numeric, &format!("{what} dlogits"));
            assert!(
                grad.dlogits.iter().any(|g| g.abs() > 1e-6),
                "{what}: no gradient at all"
            );

            let numeric = numeric_gradient(&params.biases, |b| {
                value(
                    &logits,
                    &Params {
                        lambdas: params.lambdas.clone(),
                        biases: b.to_vec(),
                    },
                )
            });
            assert_near(&grad.dbiases, &numeric, &format!("{what} dbiases"));
            let numeric = numeric_gradient(&params.lambdas, |l| {
                value(
                    &logits,
                    &Params {
                        lambdas: l.to_vec(),
                        biases: params.biases.clone(),
                    },
                )
            });
            assert_near(&grad.dlambdas, &numeric, &format!("{what} dlambdas"));
            assert_eq!(grad.dbiases.len(), objective.n_biases(), "{what}");
            assert_eq!(grad.dlambdas.len(), objective.n_lambdas(), "{what}");
        }
    }
}

#[test]
fn f_beta_gradient_where_the_true_positive_bound_is_negative() {
    // Positives scored far below 0: tp_l < 0, the branch with max(tp_l, 0) = 0 in the denominator.
    let labels = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let logits = [-3.0, -2.5, -4.0, 0.3, -1.2, -2.2];
    for surrogate in [Surrogate::Log, Surrogate::Hinge] {
        let tp_l: f64 = logits
            .iter()
            .zip(&labels)
            .map(|(&f, &y)| y * (1.0 - surrogate.positive(f).0))
            .sum();
        assert!(tp_l < 0.0, "{surrogate}: tp_l = {tp_l}");
        let mut d = vec![0.0; 6];
        let loss = f_beta_bound(surrogate, 1.0, &logits, &labels, &mut d);
        // A negative bound: the loss (its negative) is positive, and raising the positives helps.
        assert!(loss > 0.0, "{surrogate}: {loss}");
        assert!(d[0] < 0.0 && d[2] < 0.0 && d[5] < 0.0, "{surrogate}: {d:?}");
        let numeric = numeric_gradient(&logits, |x| {
            f_beta_bound(surrogate, 1.0, x, &labels, &mut [0.0; 6])
        });
        assert_near(&d, &numeric, &format!("f-beta {surrogate}, tp_l < 0"));
    }
    // Continuity at tp_l = 0: just above and just below give nearly the same loss.
    let f = |shift: f64| {
        let logits = [shift, -5.0];
        f_beta_bound(Surrogate::Hinge, 1.0, &logits, &[1.0, 0.0], &mut [0.0; 2])
    };
    assert!((f(1e-9) - f(-1e-9)).abs() < 1e-8);
}

#[test]
fn f_beta_bound_is_below_the_true_f_beta() {
    let mut rng = Rng::new(5);
    for beta in [0.5, 1.0, 2.0] {
        for _ in 0..20 {
            let logits: Vec<f64> = (0..30).map(|_| 2.0 * rng.normal()).collect();
            let labels: Vec<f64> = (0..30)
                .map(|_| (rng.uniform() < 0.3) as u8 as f64)
                .collect();
            let scores: Vec<f32> = logits.iter().map(|&f| f as f32).collect();
            let labels32: Vec<f32> = labels.iter().map(|&y| y as f32).collect();
            let truth = Confusion::at(&scores, &labels32, 0.0).f_beta(beta);
            for surrogate in [Surrogate::Log, Surrogate::Hinge] {
                let bound = -f_beta_bound(surrogate, beta, &logits, &labels, &mut [0.0; 30]);
                assert!(
                    bound <= truth + 1e-12,
                    "beta {beta} {surrogate}: bound {bound} > F {truth}"
                );
            }
        }
    }
}

#[test]
fn surrogates_bound_the_zero_one_loss() {
    for i in -400..=400 {
        let f = i as f64 / 50.0;
        for s in [Surrogate::Log, Surrogate::Hinge] {
            let (pos, neg) = (s.positive(f).0, s.negative(f).0);
            assert!(
                pos >= (f <= 0.0) as u8 as f64 - 1e-12,
                "{s} l({f}, +1) = {pos}"
            );
            assert!(
                neg >= (f > 0.0) as u8 as f64 - 1e-12,
                "{s} l({f}, -1) = {neg}"
            );
        }
    }
    assert!((Surrogate::Log.positive(0.0f64).0 - 1.0).abs() < 1e-15);
}

/// The per-example sums of the spec, computed directly: tp_l, fp_u and the label mean.
fn bounds(s: Surrogate, logits: &[f64], labels: &[f64], bias: f64) -> (f64, f64) {
    let mut tp_l = 0.0;
    let mut fp_u = 0.0;
    for (&f, &y) in logits.iter().zip(labels) {
        tp_l += y * (1.0 - s.positive(f + bias).0);
        fp_u += (1.0 - y) * s.negative(f + bias).0;
    }
    (tp_l, fp_u)
}

#[test]
fn multiplier_gradients_are_the_constraint_violations() {
    let (logits, labels, _) = batch(3, 1, 0);
    let n = logits.len() as f64;
    let positives: f64 = labels.iter().sum();
    // With pi the batch's own positive rate, dL/dlambda is exactly each constraint's violation.
    let pi = positives / n;
    let negatives = n - positives;
    for s in [Surrogate::Log, Surrogate::Hinge] {
        let (tp_l, fp_u) = bounds(s, &logits, &labels, 0.0);
        let cases = [
            (
                Objective::RecallAtPrecision(0.7),
                (0.7 * fp_u - 0.3 * tp_l) / n,
            ),
            (
                Objective::PrecisionAtRecall(0.6),
                (0.6 * positives - tp_l) / n,
            ),
            (Objective::TprAtFpr(0.1), (fp_u - 0.1 * negatives) / n),
        ];
        for (objective, violation) in cases {
            let mut grad = Grad::default();
            let params = Params {
                lambdas: vec![1.3],
                biases: vec![],
            };
            objective.loss(s, &logits, &labels, pi, &params, &mut grad);
            assert!(
                (grad.dlambdas[0] - violation).abs() < 1e-12,
                "{objective} {s}: {} vs {violation}",
                grad.dlambdas[0]
            );
        }
    }
}

#[test]
fn log_surrogate_loss_is_the_reference_loss_over_ln2() {
    // The reference (loss_layers.py) uses the plain log-loss and multiplies the constant term by
    // ln 2; this loss divides the log-loss by ln 2 and has no ln 2 in the constant term.
    let (logits, labels, _) = batch(4, 1, 0);
    let (lambda, pi, n) = (1.7, 0.3, logits.len() as f64);
    let xent = |f: f64, y: f64| -> f64 {
        let softplus = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
        y * softplus(-f) + (1.0 - y) * softplus(f)
    };
    let ln2 = std::f64::consts::LN_2;
    let reference = |c: f64, d: f64, constant: f64| -> f64 {
        logits
            .iter()
            .zip(&labels)
            .map(|(&f, &y)| c * y * xent(f, 1.0) + d * (1.0 - y) * xent(f, 0.0))
            .sum::<f64>()
            / n
            + constant
    };
    let (alpha, beta, r) = (0.8, 0.9, 0.05);
    let cases = [
        (
            Objective::RecallAtPrecision(alpha),
            reference(
                1.0 + lambda * (1.0 - alpha),
                lambda * alpha,
                -lambda * (1.0 - alpha) * pi * ln2,
            ),
        ),
        (
            Objective::PrecisionAtRecall(beta),
            reference(lambda, 1.0, lambda * pi * (beta - 1.0) * ln2),
        ),
        (
            Objective::TprAtFpr(r),
            reference(1.0, lambda, -lambda * r * (1.0 - pi) * ln2),
        ),
    ];
    for (objective, expected) in cases {
        let params = Params {
            lambdas: vec![lambda],
            biases: vec![],
        };
        let loss = loss_value(&objective, Surrogate::Log, &logits, &labels, pi, &params);
        assert!(
            (loss * ln2 - expected).abs() < 1e-12,
            "{objective}: {} vs {expected}",
            loss * ln2
        );
    }
}

#[test]
fn auc_pr_is_the_mean_of_recall_at_precision_losses_at_the_anchors() {
    let anchors = precision_anchors(4);
    assert_eq!(anchors, vec![0.2, 0.4, 0.6, 0.8]);
    assert_eq!(precision_anchors(20).len(), 20);
    let (logits, labels, params) = batch(6, 4, 4);
    let pi = 0.2;
    let auc = loss_value(
        &Objective::AucPr { anchors: 4 },
        Surrogate::Log,
        &logits,
        &labels,
        pi,
        &params,
    );
    let mean: f64 = anchors
        .iter()
        .enumerate()
        .map(|(k, &a)| {
            let shifted: Vec<f64> = logits.iter().map(|f| f + params.biases[k]).collect();
            let single = Params {
                lambdas: vec![params.lambdas[k]],
                biases: vec![],
            };
            loss_value(
                &Objective::RecallAtPrecision(a),
                Surrogate::Log,
                &shifted,
                &labels,
                pi,
                &single,
            )
        })
        .sum::<f64>()
        / 4.0;
    assert!((auc - mean).abs() < 1e-12, "{auc} vs {mean}");
}

#[test]
fn roc_auc_surrogate_is_half_the_mean_pairwise_loss() {
    let logits = [0.5f64, -0.2, 1.0, 0.1];
    let labels = [1.0, 0.0, 1.0, 0.0];
    let loss = loss_value(
        &Objective::RocAuc,
        Surrogate::Hinge,
        &logits,
        &labels,
        0.5,
        &Params {
            lambdas: vec![],
            biases: vec![],
        },
    );
    // pairs (0,1): 1 - 0.7 = 0.3; (0,3): 1 - 0.4 = 0.6; (2,1): 0 (margin 1.2); (2,3): 1 - 0.9 = 0.1
    assert!(
        (loss - 0.5 * (0.3 + 0.6 + 0.0 + 0.1) / 4.0).abs() < 1e-12,
        "{loss}"
    );
    // No pair: no loss, no gradient.
    let mut grad = Grad::default();
    let none = Objective::RocAuc.loss(
        Surrogate::Log,
        &[0.3, 0.9],
        &[1.0, 1.0],
        0.5,
        &Params {
            lambdas: vec![],
            biases: vec![],
        },
        &mut grad,
    );
    assert_eq!((none, grad.dlogits), (0.0, vec![0.0, 0.0]));
}

#[test]
fn dual_ascent_raises_violated_multipliers_lowers_slack_ones_and_stays_non_negative() {
    let objective = Objective::RecallAtPrecision(0.8);
    let labels = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let pi = 2.0 / 6.0;
    let params = Params {
        lambdas: vec![1.0f64],
        biases: vec![],
    };
    // Everything scored positive: precision 1/3 < 0.8, the bound says the constraint fails.
    let mut grad = Grad::default();
    objective.loss(Surrogate::Hinge, &[2.0; 6], &labels, pi, &params, &mut grad);
    assert!(grad.dlambdas[0] > 0.0, "{:?}", grad.dlambdas);
    let mut lambdas = params.lambdas.clone();
    dual_ascent(&mut lambdas, &grad.dlambdas, 0.1);
    assert!(lambdas[0] > 1.0);
    // Separated with a margin: the constraint holds with room, the multiplier falls ...
    let separated = [3.0, -3.0, -3.0, -3.0, 3.0, -3.0];
    objective.loss(
        Surrogate::Hinge,
        &separated,
        &labels,
        pi,
        &params,
        &mut grad,
    );
    assert!(grad.dlambdas[0] < 0.0, "{:?}", grad.dlambdas);
    let mut lambdas = params.lambdas.clone();
    dual_ascent(&mut lambdas, &grad.dlambdas, 0.1);
    assert!(lambdas[0] < 1.0 && lambdas[0] >= 0.0);
    // ... and a large step stops at 0, never below.
    dual_ascent(&mut lambdas, &grad.dlambdas, 1e6);
    assert_eq!(lambdas[0], 0.0);
    dual_ascent(&mut lambdas, &[-5.0], 1.0);
    assert_eq!(lambdas[0], 0.0);
}

#[test]
fn label_prior_is_the_running_smoothed_positive_rate() {
    let mut prior = LabelPrior::default();
    assert_eq!(prior.value(), 0.5);
    prior.observe(&[1.0f32, 0.0, 0.0]);
    prior.observe(&[0.0f32, 1.0, 0.0, 0.0]);
    assert!((prior.value() - 3.0 / 9.0).abs() < 1e-15);
}

#[test]
fn objectives_parse_and_print_back() {
    for o in Objective::defaults() {
        assert_eq!(Objective::parse(&o.name()).unwrap(), o);
    }
    assert_eq!(
        Objective::parse(" auc-pr:10 ").unwrap(),
        Objective::AucPr { anchors: 10 }
    );
    assert_eq!(Objective::parse("f-beta").unwrap(), Objective::FBeta(1.0));
    assert_eq!(Objective::parse("f-beta:0.5").unwrap().name(), "f-beta:0.5");
    // The extremes f32 still holds.
    assert!(Objective::parse("tpr-at-fpr:1.2e-38").is_ok());
    assert!(Objective::parse("recall-at-precision:0.9999999").is_ok());
    assert!(Objective::parse("f-beta:1.1e-19").is_ok());
    assert_eq!(Objective::AucPr { anchors: 20 }.name(), "auc-pr");
    assert_eq!(Surrogate::parse("hinge").unwrap(), Surrogate::Hinge);
    assert!(matches!(Surrogate::parse("square"), Err(Error::Config(_))));
}

#[test]
fn bad_objectives_are_config_errors_that_say_why() {
    for (text, needle) in [
        ("recall-at-precision:1.2", "strictly between 0 and 1"),
        ("recall-at-precision:0", "strictly between 0 and 1"),
        ("precision-at-recall:1", "strictly between 0 and 1"),
        ("tpr-at-fpr:-0.1", "strictly between 0 and 1"),
        ("recall-at-precision", "needs a target precision"),
        ("tpr-at-fpr:abc", "not a number"),
        ("f-beta:0", "must be positive"),
        ("f-beta:-2", "must be positive"),
        ("f-beta:inf", "must be positive"),
        // 0 or 1 to the f32 arithmetic training runs in.
        (
            "f-beta:1e-320",
            "its square is below f32's smallest normal number",
        ),
        (
            "f-beta:1e-20",
            "its square is below f32's smallest normal number",
        ),
        (
            "tpr-at-fpr:1e-320",
            "below 1 in f32, the precision training computes in",
        ),
        (
            "tpr-at-fpr:1e-46",
            "below 1 in f32, the precision training computes in",
        ),
        (
            "precision-at-recall:1e-320",
            "below 1 in f32, the precision training computes in",
        ),
        (
            "recall-at-precision:0.99999999999",
            "below 1 in f32, the precision training computes in",
        ),
        ("auc-pr:0", "from 1 to 1000"),
        ("auc-pr:2.5", "from 1 to 1000"),
        ("logloss:3", "takes no value"),
        ("accuracy", "unknown objective"),
        ("", "unknown objective"),
    ] {
        match Objective::parse(text) {
            Err(Error::Config(m)) => assert!(m.contains(needle), "{text}: {m}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}
