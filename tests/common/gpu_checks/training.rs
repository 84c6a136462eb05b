//! A ranking model's training steps on the GPU engine against the CPU engine's, for every loss.

use super::*;

/// A batch for the step checks: inputs, labels, group offsets, positive groups, teacher logits.
type TestBatch = (Vec<f32>, Vec<f32>, Vec<usize>, Vec<bool>, Vec<f32>);

/// Batches of whole groups with varied sizes (one-document groups included) and binary labels.
fn batches(n_in: usize, rng: &mut Rng) -> Vec<TestBatch> {
    (0..10)
        .map(|_| {
            let mut offsets = vec![0];
            let mut positive = Vec::new();
            let mut labels = Vec::new();
            while *offsets.last().unwrap() < 90 {
                let size = rng.int_range(1, 25);
                let ys: Vec<f32> = (0..size)
                    .map(|_| (rng.uniform() < 0.2) as u8 as f32)
                    .collect();
                positive.push(ys.iter().any(|&y| y > 0.0));
                labels.extend(ys);
                offsets.push(labels.len());
            }
            let n = labels.len();
            (
                random(n * n_in, rng),
                labels,
                offsets,
                positive,
                random(n, rng),
            )
        })
        .collect()
}

/// Ranking Distillation candidates for a batch: up to 3 unlabeled documents of each group, in a
/// shuffled order (the teacher's, here random).
fn rd_candidates(labels: &[f32], offsets: &[usize], scheme: RdScheme, rng: &mut Rng) -> RdBatch {
    let mut batch = RdBatch {
        scheme,
        lambda: 1.5,
        mu: 0.3,
        offsets: vec![0],
        documents: Vec::new(),
    };
    for w in offsets.windows(2) {
        let mut unlabeled: Vec<usize> = (w[0]..w[1]).filter(|&i| labels[i] == 0.0).collect();
        rng.shuffle(&mut unlabeled);
        batch.documents.extend(unlabeled.into_iter().take(3));
        batch.offsets.push(batch.documents.len());
    }
    batch
}

/// One case of [`training_steps`]: what, the loss, its teachers, Ranking Distillation's scheme,
/// a global objective as the data loss, the hidden layers' normalisation, and the heads of
/// attention over each query's documents (0: the MLP).
type Case = (
    String,
    LossKind,
    usize,
    Option<RdScheme>,
    Option<ObjectivePlan>,
    Norm,
    usize,
);

/// The GPU engine's training step ([`GpuTrainer`]) against the CPU engine's ([`CpuRanking`]),
/// from the same initial weights and batches, for every kind of loss a ranking model trains
/// with: every loss of the table (`LossKind::ALL`) without a teacher and with two, Ranking
/// Distillation under each weighting scheme, and global objectives as the data loss (over S_label, gathered and
/// scattered; with a teacher and without). `steps` steps each: the per-step loss curves (read
/// back every 25 steps) and the weights at the end agree within 2e-3 + 2e-2 relative.
pub async fn training_steps(gpu: &Arc<Gpu>, steps: usize) {
    let mut rng = Rng::new(4);
    let n_in = 13;
    let data = batches(n_in, &mut rng);
    let auc_pr = Objective::parse("auc-pr").unwrap();
    let recall = Objective::parse("recall-at-precision:0.7").unwrap();
    let objective = |o: Objective| {
        Some(ObjectivePlan {
            objective: o,
            dual_step: 0.3,
        })
    };
    // (what, loss, teachers, Ranking Distillation scheme, objective as the data loss): every
    // loss of the table without a teacher and with two, then Ranking Distillation's schemes and
    // the global objectives as the data loss.
    let mut cases: Vec<Case> = LossKind::ALL
        .iter()
        .flat_map(|&kind| {
            [0, 2].map(|teachers| {
                let what = format!("{}, {teachers} teachers", kind.entry().label);
                (what, kind, teachers, None, None, Norm::None, 0)
            })
        })
        .collect();
    let rd =
        |what: &str, kind, scheme| (what.to_string(), kind, 0, Some(scheme), None, Norm::None, 0);
    cases.extend([
        rd("RankNet, RD equal", LossKind::RankNet, RdScheme::Equal),
        rd(
            "RankNet, RD position",
            LossKind::RankNet,
            RdScheme::Position,
        ),
        rd(
            "RankBCE, RD discrepancy",
            LossKind::RankBce,
            RdScheme::Discrepancy,
        ),
        rd(
            "RankNet, RD hybrid",
            LossKind::RankNet,
            RdScheme::PositionTimesDiscrepancy,
        ),
        (
            "AUC-PR data loss, 1 teacher".to_string(),
            LossKind::RankNet,
            1,
            None,
            objective(auc_pr),
            Norm::None,
            0,
        ),
        (
            "recall at precision data loss".to_string(),
            LossKind::RankBce,
            0,
            None,
            objective(recall),
            Norm::None,
            0,
        ),
        // Layer normalisation on the hidden layers, with teachers and without.
        (
            "RankNet, layer norm, 2 teachers".to_string(),
            LossKind::RankNet,
            2,
            None,
            None,
            Norm::Layer,
            0,
        ),
        (
            "RankBCE, layer norm".to_string(),
            LossKind::RankBce,
            0,
            None,
            None,
            Norm::Layer,
            0,
        ),
        // The listwise family: attention over each query's documents (groups of 1 to 24),
        // with one head and with several, with a teacher, Ranking Distillation and layer norm.
        (
            "RankNet, attention 1 head".to_string(),
            LossKind::RankNet,
            0,
            None,
            None,
            Norm::None,
            1,
        ),
        (
            "Softmax, attention 3 heads, 2 teachers".to_string(),
            LossKind::Softmax,
            2,
            None,
            None,
            Norm::None,
            3,
        ),
        (
            "RankBCE, attention 4 heads, layer norm, RD position".to_string(),
            LossKind::RankBce,
            0,
            Some(RdScheme::Position),
            None,
            Norm::Layer,
            4,
        ),
    ]);
    for (what, kind, n_teachers, scheme, objective, norm, heads) in cases {
        let model = Mlp::<f32>::new(n_in, &[24, 12], 9)
            .with_norm(norm)
            .with_attention(heads, 9);
        let adam = AdamConfig {
            lr: 3e-3,
            ..Default::default()
        };
        let plan = LossPlan::new(kind, 0.4, n_teachers, scheme.map(|_| 0.8), objective, adam);
        let mut trainer = GpuTrainer::new(gpu.clone(), &model, &plan, 128).unwrap();
        let mut cpu = CpuRanking::new(model.clone(), &plan);
        let (mut cpu_losses, mut gpu_losses) = (Vec::new(), Vec::new());
        let mut candidates = Rng::new(11);
        for step in 0..steps {
            let (x, y, offsets, positive, teacher) = &data[step % data.len()];
            let second: Vec<f32> = teacher.iter().map(|t| 0.5 - t).collect();
            let teachers: Vec<&[f32]> =
                [teacher.as_slice(), second.as_slice()][..n_teachers].to_vec();
            let rd = scheme.map(|s| rd_candidates(y, offsets, s, &mut candidates));
            let batch = StepBatch {
                inputs: x,
                labels: y,
                offsets,
                positive,
                teachers: &teachers,
                ranking_distillation: rd.as_ref(),
            };
            cpu_losses.push(cpu.step(&batch));
            trainer.step(&batch).await.unwrap();
            if (step + 1) % 25 == 0 || step + 1 == steps {
                gpu_losses.extend(trainer.read_losses().await.unwrap());
            }
        }
        assert_eq!(gpu_losses.len(), cpu_losses.len());
        let curve = |losses: &[StepLosses], f: fn(&StepLosses) -> f32| -> Vec<f32> {
            losses.iter().map(f).collect()
        };
        for (name, f) in [
            ("data", (|l: &StepLosses| l.data) as fn(&StepLosses) -> f32),
            ("teacher", |l: &StepLosses| l.teacher),
            ("ranking distillation", |l: &StepLosses| l.rd),
        ] {
            assert_close(
                &curve(&gpu_losses, f),
                &curve(&cpu_losses, f),
                2e-3,
                2e-2,
                &format!("{what}: {name} loss curve"),
            );
        }
        if n_teachers == 0 {
            assert!(cpu_losses.iter().all(|l| l.teacher == 0.0), "{what}");
        }
        if scheme.is_some() {
            assert!(cpu_losses.iter().any(|l| l.rd > 0.0), "{what}: L_D is used");
        }
        let trained = trainer.model().await.unwrap();
        let (mut g, mut c) = (trained.parameters(), cpu.model().parameters());
        let pairwise = matches!(
            kind,
            LossKind::RankNet | LossKind::LambdaRank | LossKind::Softmax
        );
        if heads > 0 {
            // Softmax is unchanged by a constant added to a row's logits, and the key bias adds
            // q_i . b_K to every logit of document i's row: its gradient is zero up to rounding,
            // which Adam turns into lr-sized steps on either engine.
            let d = 12;
            let key_bias = g.len() - d * d - 2 * d..g.len() - d * d - d;
            g.drain(key_bias.clone());
            c.drain(key_bias);
        }
        if pairwise && objective.is_none() {
            // A pairwise or listwise loss does not depend on the output bias: its gradient is zero up to
            // rounding, and Adam turns that rounding into lr-sized steps on either engine. It is
            // the last of the MLP's parameters, before the attention's.
            let output_bias = Mlp::<f32>::new(n_in, &[24, 12], 9)
                .with_norm(norm)
                .n_parameters()
                - 1;
            g.remove(output_bias);
            c.remove(output_bias);
        }
        assert_close(
            &g,
            &c,
            2e-3,
            2e-2,
            &format!("{what}: weights after {steps} steps"),
        );
        // A constrained objective's Lagrangian grows with its multipliers; the other losses fall:
        // the mean over the first pass through the batches against the mean over the last
        // whole pass (a step's loss alone depends on its batch).
        if objective.is_none() {
            let pass = data.len();
            let mean = |from: usize| {
                cpu_losses[from..from + pass]
                    .iter()
                    .map(StepLosses::sum)
                    .sum::<f64>()
                    / pass as f64
            };
            let (first, last) = (mean(0), mean((steps / pass - 1) * pass));
            assert!(last < first, "{what}: the loss falls ({first} to {last})");
        }
    }
}
