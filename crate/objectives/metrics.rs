//! Binary classification metrics over one scored set of examples (the global objectives of
//! spec §7), following scikit-learn's definitions:
//!
//! * The **precision-recall curve** has one point per distinct score threshold t (highest first),
//!   counting every example with score >= t as predicted positive: **tied scores enter together**.
//! * **AUC-PR** is the *average precision* `sum_n (R_n - R_(n-1)) P_n` over those points
//!   (`average_precision_score`; no interpolation) — the figure every table reports.
//!   [`auc_pr_trapezoid`] is the trapezoid area under the same curve with the point
//!   (recall 0, precision 1) added (`auc(recall, precision)` on `precision_recall_curve`).
//! * **AUC-ROC** is the trapezoid area under the ROC curve over the same thresholds
//!   (`roc_auc_score`): a tied (positive, negative) pair counts one half.
//! * **Recall at precision alpha** is the largest recall of a curve point with precision >= alpha
//!   (0 when none has); **precision at recall beta** the largest precision of a point with recall
//!   >= beta.
//! * Threshold metrics (precision, recall, false positive rate, F-beta, accuracy) take the
//!   classifier's decision `f > 0` (sigmoid(f) > 1/2), as `predict` does; an empty denominator
//!   gives 0 (scikit-learn's `zero_division` default), except for precision and FPR, which are
//!   `None` when undefined so that a constraint on them is not declared met by a classifier that
//!   predicts nothing.
//!
//! Labels > 0.5 are positives.

use crate::model::objective::Targets;
/// One point of the precision-recall and ROC curves: the counts at a threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    tp: f64,
    fp: f64,
}

/// The curve points, highest threshold first, and the numbers of positives and negatives.
fn curve(scores: &[f32], labels: &[f32]) -> (Vec<Point>, f64, f64) {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut tp, mut fp) = (0.0, 0.0);
    let mut points = Vec::new();
    for (r, &i) in order.iter().enumerate() {
        if labels[i] > 0.5 {
            tp += 1.0;
        } else {
            fp += 1.0;
        }
        // A point after the last example of each run of equal scores (0.0 and -0.0 are equal).
        let last_of_run = order
            .get(r + 1)
            .is_none_or(|&next| scores[next] != scores[i]);
        if last_of_run {
            points.push(Point { tp, fp });
        }
    }
    (points, tp, fp)
}

/// Average precision (scikit-learn's `average_precision_score`); `None` without positives.
pub fn average_precision(scores: &[f32], labels: &[f32]) -> Option<f64> {
    let (points, p, _) = curve(scores, labels);
    if p == 0.0 {
        return None;
    }
    let mut previous_recall = 0.0;
    let mut ap = 0.0;
    for pt in points {
        let recall = pt.tp / p;
        ap += (recall - previous_recall) * pt.tp / (pt.tp + pt.fp);
        previous_recall = recall;
    }
    Some(ap)
}

/// Trapezoid area under the precision-recall curve from (recall 0, precision 1); `None` without
/// positives.
pub fn auc_pr_trapezoid(scores: &[f32], labels: &[f32]) -> Option<f64> {
    let (points, p, _) = curve(scores, labels);
    if p == 0.0 {
        return None;
    }
    let (mut recall, mut precision) = (0.0, 1.0);
    let mut area = 0.0;
    for pt in points {
        let (r, pr) = (pt.tp / p, pt.tp / (pt.tp + pt.fp));
        area += (r - recall) * (pr + precision) / 2.0;
        (recall, precision) = (r, pr);
    }
    Some(area)
}

/// Area under the ROC curve, ties counting one half; `None` unless there are positives and
/// negatives.
pub fn roc_auc(scores: &[f32], labels: &[f32]) -> Option<f64> {
    let (points, p, n) = curve(scores, labels);
    if p == 0.0 || n == 0.0 {
        return None;
    }
    let mut previous = Point { tp: 0.0, fp: 0.0 };
    let mut area = 0.0;
    for pt in points {
        area += (pt.fp - previous.fp) * (pt.tp + previous.tp) / 2.0;
        previous = pt;
    }
    Some(area / (p * n))
}

/// The largest recall at a threshold whose precision is >= `alpha` (0 when none is); `None`
/// without positives.
pub fn recall_at_precision(scores: &[f32], labels: &[f32], alpha: f64) -> Option<f64> {
    let (points, p, _) = curve(scores, labels);
    (p > 0.0).then(|| {
        points
            .iter()
            .filter(|pt| pt.tp / (pt.tp + pt.fp) >= alpha)
            .map(|pt| pt.tp / p)
            .fold(0.0, f64::max)
    })
}

/// The largest precision at a threshold whose recall is >= `beta`; `None` without positives.
pub fn precision_at_recall(scores: &[f32], labels: &[f32], beta: f64) -> Option<f64> {
    let (points, p, _) = curve(scores, labels);
    (p > 0.0).then(|| {
        points
            .iter()
            .filter(|pt| pt.tp / p >= beta)
            .map(|pt| pt.tp / (pt.tp + pt.fp))
            .fold(0.0, f64::max)
    })
}

/// Counts of the decision `score > threshold`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Confusion {
    pub tp: usize,
    pub fp: usize,
    pub tn: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
}

impl Confusion {
    pub fn at(scores: &[f32], labels: &[f32], threshold: f32) -> Self {
        let mut c = Confusion::default();
        for (&s, &y) in scores.iter().zip(labels) {
            match (s > threshold, y > 0.5) {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, false) => c.tn += 1,
                (false, true) => c.fn_ += 1,
            }
        }
        c
    }
    /// tp / (tp + fp); `None` when nothing is predicted positive.
    pub fn precision(&self) -> Option<f64> {
        let predicted = self.tp + self.fp;
        (predicted > 0).then(|| self.tp as f64 / predicted as f64)
    }
    /// tp / (tp + fn); 0 without positives.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    /// fp / (fp + tn); `None` without negatives.
    pub fn false_positive_rate(&self) -> Option<f64> {
        let negatives = self.fp + self.tn;
        (negatives > 0).then(|| self.fp as f64 / negatives as f64)
    }
    /// (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp); 0 when that is 0 / 0.
    pub fn f_beta(&self, beta: f64) -> f64 {
        let b2 = beta * beta;
        let num = (1.0 + b2) * self.tp as f64;
        let den = num + b2 * self.fn_ as f64 + self.fp as f64;
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    }
    pub fn accuracy(&self) -> f64 {
        ratio(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn_)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Every metric of one scored set.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BinaryMetrics {
    /// Average precision.
    pub auc_pr: f64,
    pub auc_pr_trapezoid: f64,
    pub auc_roc: f64,
    pub recall_at_precision: f64,
    pub precision_at_recall: f64,
    /// At the decision f > 0.
    pub f1: f64,
    pub accuracy: f64,
    pub confusion: Confusion,
}

/// Every metric of `scores` against `labels`; `None` unless there are positives and negatives.
pub fn evaluate(scores: &[f32], labels: &[f32], targets: Targets) -> Option<BinaryMetrics> {
    let confusion = Confusion::at(scores, labels, 0.0);
    Some(BinaryMetrics {
        auc_pr: average_precision(scores, labels)?,
        auc_pr_trapezoid: auc_pr_trapezoid(scores, labels)?,
        auc_roc: roc_auc(scores, labels)?,
        recall_at_precision: recall_at_precision(scores, labels, targets.precision)?,
        precision_at_recall: precision_at_recall(scores, labels, targets.recall)?,
        f1: confusion.f_beta(1.0),
        accuracy: confusion.accuracy(),
        confusion,
    })
}
