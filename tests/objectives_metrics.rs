//! The binary metrics of the global objectives (AUC-PR, AUC-ROC, recall at precision, ...)
//! against scikit-learn on hand-computed cases, and their edge cases.

#![cfg(not(target_arch = "wasm32"))]

use distillrank::model::objective::{Objective, Targets};
use distillrank::objectives::metrics::{
    auc_pr_trapezoid, average_precision, evaluate, precision_at_recall, recall_at_precision,
    roc_auc, Confusion,
};
use distillrank::objectives::train::ConstraintCheck;

#[test]
fn binary_metrics_match_scikit_learn_on_hand_cases() {
    // (labels, scores, AP, ROC AUC, trapezoid AUC-PR, R@P0.8, P@R0.9, F1, F2, accuracy at 0),
    // from scikit-learn 1.9's average_precision_score, roc_auc_score, auc(precision_recall_curve),
    // f1_score, fbeta_score and accuracy_score with predictions 1[score > 0].
    let cases: [(&[f32], &[f32], [f64; 8]); 3] = [
        (
            &[0.0, 0.0, 1.0, 1.0],
            &[0.1, 0.4, 0.35, 0.8],
            [
                5.0 / 6.0,
                0.75,
                0.791_666_666_666_666_6,
                0.5,
                2.0 / 3.0,
                2.0 / 3.0,
                5.0 / 6.0,
                0.5,
            ],
        ),
        (
            // Tied scores across classes: the pairs count one half, the points enter together.
            &[1.0, 0.0, 1.0, 0.0, 0.0],
            &[0.8, 0.8, 0.3, 0.3, 0.1],
            [
                0.5,
                2.0 / 3.0,
                0.625,
                0.0,
                0.5,
                4.0 / 7.0,
                0.769_230_769_230_769_3,
                0.4,
            ],
        ),
        (
            &[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
            &[2.0, 1.5, 1.5, 0.7, 0.2, 0.2, -0.1, -0.5, -1.0, -2.0],
            [
                0.611_111_111_111_111_2,
                0.604_166_666_666_666_6,
                0.581_597_222_222_222_2,
                0.25,
                4.0 / 9.0,
                0.6,
                0.681_818_181_818_181_8,
                0.6,
            ],
        ),
    ];
    for (i, (labels, scores, e)) in cases.iter().enumerate() {
        let c = Confusion::at(scores, labels, 0.0);
        let got = [
            average_precision(scores, labels).unwrap(),
            roc_auc(scores, labels).unwrap(),
            auc_pr_trapezoid(scores, labels).unwrap(),
            recall_at_precision(scores, labels, 0.8).unwrap(),
            precision_at_recall(scores, labels, 0.9).unwrap(),
            c.f_beta(1.0),
            c.f_beta(2.0),
            c.accuracy(),
        ];
        for (k, (g, want)) in got.iter().zip(e).enumerate() {
            assert!(
                (g - want).abs() < 1e-12,
                "case {i}, metric {k}: {g} vs {want}"
            );
        }
        let all = evaluate(
            scores,
            labels,
            Targets {
                precision: 0.8,
                recall: 0.9,
            },
        )
        .unwrap();
        assert_eq!((all.auc_pr, all.auc_roc, all.f1), (got[0], got[1], got[5]));
    }
}

#[test]
fn binary_metrics_edge_cases() {
    // One class only: the curve metrics are undefined.
    assert_eq!(average_precision(&[0.3, 0.1], &[0.0, 0.0]), None);
    assert_eq!(roc_auc(&[0.3, 0.1], &[1.0, 1.0]), None);
    assert!(evaluate(&[0.3, 0.1], &[1.0, 1.0], Targets::default()).is_none());
    // A perfect ranking and a reversed one.
    let labels = [1.0, 1.0, 0.0, 0.0, 0.0];
    assert_eq!(
        average_precision(&[5.0, 4.0, 3.0, 2.0, 1.0], &labels),
        Some(1.0)
    );
    assert_eq!(roc_auc(&[1.0, 2.0, 3.0, 4.0, 5.0], &labels), Some(0.0));
    // All scores tied: AP is the positive rate, AUC-ROC one half.
    assert_eq!(average_precision(&[0.0; 5], &labels), Some(0.4));
    assert_eq!(roc_auc(&[0.0; 5], &labels), Some(0.5));
    // Nothing predicted positive: precision undefined, recall 0, F1 0.
    let c = Confusion::at(&[-1.0; 5], &labels, 0.0);
    assert_eq!((c.precision(), c.recall(), c.f_beta(1.0)), (None, 0.0, 0.0));
    assert_eq!(c.false_positive_rate(), Some(0.0));
    assert!(ConstraintCheck::of(&Objective::RecallAtPrecision(0.5), &c).is_some_and(|k| !k.holds));
    assert!(ConstraintCheck::of(&Objective::TprAtFpr(0.1), &c).is_some_and(|k| k.holds));
    assert!(ConstraintCheck::of(&Objective::LogLoss, &c).is_none());
}
