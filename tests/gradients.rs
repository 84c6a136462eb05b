//! Every backward pass of the CPU engine against central finite differences, in f64.

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use distillrank::cpu::loss::{
    data_loss, lambdarank, rank_bce, ranking_distillation_loss, ranknet, ranknet_soft, teacher_loss,
};
use distillrank::cpu::mlp::{dense_backward, dense_forward, Activations};
use distillrank::model::mlp::{Dense, Mlp};
use distillrank::model::LossKind;
use distillrank::rng::Rng;

#[path = "common/finite_differences.rs"]
mod finite_differences;
use finite_differences::{assert_close, numeric_gradient};

fn random(n: usize, rng: &mut Rng) -> Vec<f64> {
    (0..n).map(|_| rng.normal()).collect()
}

/// Groups with the edge cases: one document, all labels tied, a large group.
fn groups() -> (Vec<usize>, Vec<f64>) {
    let sizes = [1, 4, 3, 7, 2, 5];
    let mut offsets = vec![0];
    for s in sizes {
        offsets.push(offsets.last().unwrap() + s);
    }
    let mut labels = vec![0.0; *offsets.last().unwrap()];
    let mut rng = Rng::new(3);
    for (g, w) in offsets.windows(2).enumerate() {
        for label in &mut labels[w[0]..w[1]] {
            // group 2: all tied (no pairs); others: grades 0..2
            *label = if g == 2 {
                1.0
            } else {
                rng.int_range(0, 2) as f64
            };
        }
    }
    (offsets, labels)
}

#[test]
fn dense_layer_backward_matches_finite_differences() {
    let mut rng = Rng::new(1);
    for &(b, n_in, n_out, relu) in &[(5, 3, 4, true), (7, 6, 1, false), (1, 9, 5, true)] {
        let inp = random(b * n_in, &mut rng);
        let layer = Dense {
            n_in,
            n_out,
            weight: random(n_in * n_out, &mut rng),
            bias: random(n_out, &mut rng),
        };
        // Loss = sum(out * r) for a fixed random r, so dL/dout = r.
        let r = random(b * n_out, &mut rng);
        let loss = |inp: &[f64], layer: &Dense<f64>| {
            let mut out = vec![0.0; b * n_out];
            dense_forward(&mut out, inp, layer, relu);
            out.iter().zip(&r).map(|(o, r)| o * r).sum::<f64>()
        };
        let mut out = vec![0.0; b * n_out];
        dense_forward(&mut out, &inp, &layer, relu);
        let (mut dinp, mut dweight, mut dbias, mut dout) = (
            vec![0.0; b * n_in],
            vec![0.0; n_in * n_out],
            vec![0.0; n_out],
            r.clone(),
        );
        dense_backward(
            Some(&mut dinp),
            &mut dweight,
            &mut dbias,
            &mut dout,
            &out,
            &inp,
            &layer,
            relu,
        );

        let what = format!("dense {b}x{n_in}->{n_out} relu={relu}");
        assert_close(
            &dinp,
            &numeric_gradient(&inp, |x| loss(x, &layer)),
            1e-7,
            1e-6,
            &format!("{what} dinp"),
        );
        let dw_num = numeric_gradient(&layer.weight, |w| {
            loss(
                &inp,
                &Dense {
                    weight: w.to_vec(),
                    ..layer.clone()
                },
            )
        });
        assert_close(&dweight, &dw_num, 1e-7, 1e-6, &format!("{what} dweight"));
        let db_num = numeric_gradient(&layer.bias, |bv| {
            loss(
                &inp,
                &Dense {
                    bias: bv.to_vec(),
                    ..layer.clone()
                },
            )
        });
        assert_close(&dbias, &db_num, 1e-7, 1e-6, &format!("{what} dbias"));
    }
}

#[test]
fn mlp_backward_matches_finite_differences() {
    let mut rng = Rng::new(2);
    let (b, n_in) = (9, 5);
    let model = Mlp::<f64>::new(n_in, &[7, 6, 4], 11);
    let inp = random(b * n_in, &mut rng);
    let (offsets, labels) = (
        vec![0, 4, 9],
        (0..b).map(|i| (i % 3) as f64).collect::<Vec<_>>(),
    );
    let include = [true, true];
    let loss = |params: &[f64]| {
        let mut m = model.clone();
        m.set_parameters(params);
        let logits = m.predict(&inp);
        ranknet(&logits, &labels, &offsets, &include, 1.0, &mut vec![0.0; b])
    };
    let mut acts = Activations::default();
    let logits = model.forward(&inp, &mut acts).to_vec();
    let mut dlogits = vec![0.0; b];
    ranknet(&logits, &labels, &offsets, &include, 1.0, &mut dlogits);
    let mut grads = model.zero_gradients();
    model.backward(&inp, &acts, &dlogits, &mut grads);
    assert_close(
        &grads.flatten(),
        &numeric_gradient(&model.parameters(), loss),
        1e-7,
        1e-5,
        "mlp parameters",
    );
}

#[test]
fn mlp_backward_through_dropout_matches_finite_differences() {
    use distillrank::model::dropout::Dropout;
    let mut rng = Rng::new(5);
    let (b, n_in) = (9, 5);
    let model = Mlp::<f64>::new(n_in, &[8, 6], 13);
    let inp = random(b * n_in, &mut rng);
    let (offsets, labels) = (
        vec![0, 4, 9],
        (0..b).map(|i| (i % 3) as f64).collect::<Vec<_>>(),
    );
    let include = [true, true];
    for (rate, step) in [(0.3, 1), (0.5, 17)] {
        let dropout = Dropout { rate, seed: 9 };
        // The same masks at every evaluation: those of this step.
        let loss = |params: &[f64]| {
            let mut m = model.clone();
            m.set_parameters(params);
            let mut acts = Activations::default();
            let logits = m
                .forward_training(&inp, &[0, b], &mut acts, Some((&dropout, step)))
                .to_vec();
            ranknet(&logits, &labels, &offsets, &include, 1.0, &mut vec![0.0; b])
        };
        let mut acts = Activations::default();
        let logits = model
            .forward_training(&inp, &[0, b], &mut acts, Some((&dropout, step)))
            .to_vec();
        // Some units were dropped, and the logits differ from scoring's.
        assert!(acts.outputs[0].iter().filter(|&&v| v == 0.0).count() > 0);
        assert_ne!(logits, model.predict(&inp));
        let mut dlogits = vec![0.0; b];
        ranknet(&logits, &labels, &offsets, &include, 1.0, &mut dlogits);
        let mut grads = model.zero_gradients();
        model.backward(&inp, &acts, &dlogits, &mut grads);
        assert_close(
            &grads.flatten(),
            &numeric_gradient(&model.parameters(), loss),
            1e-7,
            1e-5,
            &format!("mlp parameters under dropout {rate}"),
        );
    }
}

#[test]
fn mlp_backward_through_layer_norm_matches_finite_differences() {
    use distillrank::model::dropout::Dropout;
    use distillrank::model::Norm;
    let mut rng = Rng::new(8);
    let (b, n_in) = (9, 5);
    let mut model = Mlp::<f64>::new(n_in, &[7, 6], 17).with_norm(Norm::Layer);
    // Gains and shifts away from their start, so that each enters the gradient.
    for norm in &mut model.norms {
        for (g, s) in norm.gain.iter_mut().zip(&mut norm.shift) {
            *g = 0.5 + rng.uniform();
            *s = rng.uniform() - 0.5;
        }
    }
    assert_eq!(
        model.n_parameters(),
        (5 * 7 + 7) + (7 * 6 + 6) + (6 + 1) + 2 * (7 + 6)
    );
    let inp = random(b * n_in, &mut rng);
    let (offsets, labels) = (
        vec![0, 4, 9],
        (0..b).map(|i| (i % 3) as f64).collect::<Vec<_>>(),
    );
    let include = [true, true];
    for dropout in [None, Some(Dropout { rate: 0.3, seed: 4 })] {
        let dropout = dropout.as_ref().map(|d| (d, 3));
        let loss = |params: &[f64]| {
            let mut m = model.clone();
            m.set_parameters(params);
            let mut acts = Activations::default();
            let logits = m
                .forward_training(&inp, &[0, b], &mut acts, dropout)
                .to_vec();
            ranknet(&logits, &labels, &offsets, &include, 1.0, &mut vec![0.0; b])
        };
        let mut acts = Activations::default();
        let logits = model
            .forward_training(&inp, &[0, b], &mut acts, dropout)
            .to_vec();
        // Each row's statistics, and its output: relu(gain (pre - mean) / sqrt(var + 1e-5) + shift).
        for ((row, stats), out) in acts.pre[0]
            .chunks_exact(7)
            .zip(acts.stats[0].chunks_exact(2))
            .zip(acts.outputs[0].chunks_exact(7))
        {
            let mean = row.iter().sum::<f64>() / 7.0;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 7.0;
            assert!((stats[0] - mean).abs() < 1e-12);
            assert!((stats[1] - 1.0 / (var + 1e-5).sqrt()).abs() < 1e-9);
            if dropout.is_none() {
                for j in 0..7 {
                    let norm = &model.norms[0];
                    let expected =
                        norm.gain[j] * (row[j] - mean) / (var + 1e-5).sqrt() + norm.shift[j];
                    assert!((out[j] - expected.max(0.0)).abs() < 1e-9);
                }
            }
        }
        let mut dlogits = vec![0.0; b];
        ranknet(&logits, &labels, &offsets, &include, 1.0, &mut dlogits);
        let mut grads = model.zero_gradients();
        model.backward(&inp, &acts, &dlogits, &mut grads);
        assert!(grads.gain.iter().flatten().any(|&g| g != 0.0));
        assert_close(
            &grads.flatten(),
            &numeric_gradient(&model.parameters(), loss),
            1e-7,
            1e-5,
            &format!(
                "mlp parameters with layer norm (dropout: {})",
                dropout.is_some()
            ),
        );
    }
}

/// The listwise family: self-attention within each query group and its latent cross, under
/// every combination with layer normalisation and dropout, over groups of 1 to 7 documents
/// (a one-document query attends to itself alone).
#[test]
fn mlp_backward_through_attention_matches_finite_differences() {
    use distillrank::model::dropout::Dropout;
    use distillrank::model::Norm;
    let mut rng = Rng::new(21);
    let (offsets, labels) = groups();
    let b = labels.len();
    let n_in = 5;
    let inp = random(b * n_in, &mut rng);
    let include = vec![true; offsets.len() - 1];
    for (heads, norm, dropout) in [
        (1, Norm::None, None),
        (2, Norm::None, None),
        (3, Norm::Layer, None),
        (2, Norm::None, Some(Dropout { rate: 0.3, seed: 4 })),
    ] {
        let mut model = Mlp::<f64>::new(n_in, &[7, 6], 19)
            .with_norm(norm)
            .with_attention(heads, 19);
        // Biases away from 0, so that each enters the gradient, and so that a document whose
        // hidden units are all dropped does not sit on the next ReLU's kink (a pre-activation
        // of exactly its bias, 0).
        for a in model.attention.iter_mut() {
            for p in [&mut a.query, &mut a.key, &mut a.value] {
                p.bias.iter_mut().for_each(|v| *v = rng.uniform() - 0.5);
            }
        }
        for layer in &mut model.layers {
            layer.bias.iter_mut().for_each(|v| *v = rng.uniform() - 0.5);
        }
        assert_eq!(
            model.n_parameters(),
            Mlp::<f64>::new(n_in, &[7, 6], 19)
                .with_norm(norm)
                .n_parameters()
                + 3 * (6 * 6 + 6)
        );
        let dropout = dropout.as_ref().map(|d| (d, 5));
        let loss = |params: &[f64]| {
            let mut m = model.clone();
            m.set_parameters(params);
            let mut acts = Activations::default();
            let logits = m
                .forward_training(&inp, &offsets, &mut acts, dropout)
                .to_vec();
            ranknet(&logits, &labels, &offsets, &include, 1.0, &mut vec![0.0; b])
        };
        let mut acts = Activations::default();
        let logits = model
            .forward_training(&inp, &offsets, &mut acts, dropout)
            .to_vec();
        let mut dlogits = vec![0.0; b];
        ranknet(&logits, &labels, &offsets, &include, 1.0, &mut dlogits);
        let mut grads = model.zero_gradients();
        model.backward(&inp, &acts, &dlogits, &mut grads);
        // Every projection's gradient is used, the key bias's aside: softmax is unchanged by the
        // q_i . b_K it adds to all of row i's logits, so its gradient is 0 up to rounding.
        for (t, g) in grads.attention.iter().enumerate() {
            assert!(
                t == 3 || g.iter().any(|&v| v != 0.0),
                "attention tensor {t}"
            );
        }
        assert_close(
            &grads.flatten(),
            &numeric_gradient(&model.parameters(), loss),
            1e-7,
            1e-5,
            &format!(
                "attention with {heads} heads, norm {norm:?}, dropout {}",
                dropout.is_some()
            ),
        );
    }
}

/// A listwise score depends on the document's own query and on nothing else: scoring the
/// groups together equals scoring each alone, a permutation within a group permutes its scores,
/// and the forward pass equals the formula written out for one document.
#[test]
fn attention_attends_within_each_query_alone() {
    let mut rng = Rng::new(23);
    let (offsets, _) = groups();
    let b = *offsets.last().unwrap();
    let n_in = 4;
    let inp = random(b * n_in, &mut rng);
    let model = Mlp::<f64>::new(n_in, &[8, 4], 3).with_attention(2, 3);
    let mut acts = Activations::default();
    let together = model
        .forward_training(&inp, &offsets, &mut acts, None)
        .to_vec();
    for w in offsets.windows(2) {
        let alone = model.predict(&inp[w[0] * n_in..w[1] * n_in]);
        for (x, y) in together[w[0]..w[1]].iter().zip(&alone) {
            assert!((x - y).abs() < 1e-12, "{x} against {y} scored alone");
        }
    }
    // The group of 7 documents, reversed.
    let (s, e) = (offsets[3], offsets[4]);
    let reversed: Vec<f64> = (s..e)
        .rev()
        .flat_map(|i| inp[i * n_in..(i + 1) * n_in].to_vec())
        .collect();
    let scores = model.predict(&reversed);
    for (k, i) in (s..e).rev().enumerate() {
        assert!((scores[k] - together[i]).abs() < 1e-12);
    }
    // Document 0 of that group, by the formula: h' = h (1 + sum_j softmax_j(q.k_j / sqrt(2)) v_j).
    let a = model.attention.as_ref().unwrap();
    let mut acts = Activations::default();
    model.forward(&inp[s * n_in..e * n_in], &mut acts);
    let h = &acts.outputs[1];
    let project = |p: &Dense<f64>, row: usize| -> Vec<f64> {
        (0..4)
            .map(|c| {
                p.bias[c]
                    + (0..4)
                        .map(|r| h[row * 4 + r] * p.weight[r * 4 + c])
                        .sum::<f64>()
            })
            .collect()
    };
    let q = project(&a.query, 0);
    let mut gathered = [0.0; 4];
    for head in 0..2 {
        let cols = head * 2..head * 2 + 2;
        let logits: Vec<f64> = (0..e - s)
            .map(|j| {
                let k = project(&a.key, j);
                cols.clone().map(|c| q[c] * k[c]).sum::<f64>() / 2f64.sqrt()
            })
            .collect();
        let total: f64 = logits.iter().map(|l| l.exp()).sum();
        for (j, l) in logits.iter().enumerate() {
            let v = project(&a.value, j);
            for c in cols.clone() {
                gathered[c] += l.exp() / total * v[c];
            }
        }
    }
    let out = &model.layers[2];
    let expected = out.bias[0]
        + (0..4)
            .map(|c| h[c] * (1.0 + gathered[c]) * out.weight[c])
            .sum::<f64>();
    assert!(
        (together[s] - expected).abs() < 1e-12,
        "{} against {expected}",
        together[s]
    );
}

/// Checks a loss's gradient (and that `scale` scales it) w.r.t. the logits.
fn check_loss(what: &str, f: impl Fn(&[f64], f64, &mut [f64]) -> f64) {
    let (offsets, _) = groups();
    let n = *offsets.last().unwrap();
    let logits = random(n, &mut Rng::new(5));
    let mut grad = vec![0.0; n];
    let value = f(&logits, 0.7, &mut grad);
    assert!(value.is_finite() && value > 0.0, "{what}: loss {value}");
    let numeric: Vec<f64> = numeric_gradient(&logits, |x| f(x, 0.7, &mut vec![0.0; n]))
        .iter()
        .map(|g| 0.7 * g)
        .collect();
    assert_close(&grad, &numeric, 1e-8, 1e-6, what);
}

#[test]
fn loss_gradients_match_finite_differences() {
    let (offsets, labels) = groups();
    let n = labels.len();
    let binary: Vec<f64> = labels.iter().map(|&l| (l > 0.0) as u8 as f64).collect();
    let teacher = random(n, &mut Rng::new(9));
    let teacher2 = random(n, &mut Rng::new(10));
    let soft: Vec<f64> = teacher.iter().map(|&t| 1.0 / (1.0 + (-t).exp())).collect();
    let some = [true, false, true, true, false, true];
    let all = [true; 6];
    check_loss("rank_bce hard", |f, s, g| {
        rank_bce(f, &binary, &offsets, &some, s, g)
    });
    check_loss("rank_bce soft", |f, s, g| {
        rank_bce(f, &soft, &offsets, &all, s, g)
    });
    check_loss("ranknet", |f, s, g| {
        ranknet(f, &labels, &offsets, &some, s, g)
    });
    check_loss("ranknet_soft", |f, s, g| {
        ranknet_soft(f, &[&teacher], &offsets, &all, s, g)
    });
    check_loss("teacher rankbce", |f, s, g| {
        teacher_loss(LossKind::RankBce, f, &[&teacher], &offsets, &all, s, g)
    });
    // The listwise losses: softmax cross-entropy with graded, binary and teacher targets, and
    // LambdaRank (its |delta NDCG| weights are constant between ranking changes, and the
    // perturbations here change no ranking).
    check_loss("softmax graded", |f, s, g| {
        data_loss(LossKind::Softmax, f, &labels, &offsets, &some, s, g)
    });
    check_loss("softmax binary", |f, s, g| {
        data_loss(LossKind::Softmax, f, &binary, &offsets, &all, s, g)
    });
    check_loss("softmax teachers", |f, s, g| {
        teacher_loss(
            LossKind::Softmax,
            f,
            &[&teacher, &teacher2],
            &offsets,
            &all,
            s,
            g,
        )
    });
    check_loss("lambdarank", |f, s, g| {
        lambdarank(f, &labels, &offsets, &some, s, g)
    });
    // PFD Eq. 1: alpha * data + (1 - alpha) * teacher, through one gradient buffer.
    for kind in LossKind::ALL {
        let alpha = 0.3;
        check_loss(&format!("distillation mix {kind}"), |f, s, g| {
            data_loss(kind, f, &binary, &offsets, &some, s * alpha, g) * alpha
                + teacher_loss(
                    kind,
                    f,
                    &[&teacher, &teacher2],
                    &offsets,
                    &all,
                    s * (1.0 - alpha),
                    g,
                ) * (1.0 - alpha)
        });
    }
}

#[test]
fn losses_follow_their_definitions_on_small_cases() {
    // Two documents, y = (1, 0): RankNet = ln(1 + e^-(f1 - f2)).
    let mut g = vec![0.0; 2];
    let v = ranknet(&[0.3, -0.2], &[1.0, 0.0], &[0, 2], &[true], 1.0, &mut g);
    assert!((v - (1.0f64 + (-0.5f64).exp()).ln()).abs() < 1e-12);
    // No pairs anywhere (one document; all tied): zero loss, zero gradient.
    let mut g = vec![0.0; 4];
    assert_eq!(
        ranknet(
            &[1.0, 2.0, 3.0, 4.0],
            &[0.0, 1.0, 1.0, 1.0],
            &[0, 1, 4],
            &[true, true],
            1.0,
            &mut g
        ),
        0.0
    );
    assert!(g.iter().all(|&x| x == 0.0));
    // Soft RankNet with the teacher equal to the student: gradient zero (the minimum).
    let f = [0.4f64, -1.0, 2.0];
    let mut g = vec![0.0; 3];
    ranknet_soft(&f, &[&f[..]], &[0, 3], &[true], 1.0, &mut g);
    assert!(g.iter().all(|&x| x.abs() < 1e-12), "{g:?}");
    // BCE is stable for large logits.
    let mut g = vec![0.0; 2];
    let v: f64 = rank_bce(&[800.0, -800.0], &[0.0, 1.0], &[0, 2], &[true], 1.0, &mut g);
    assert!((v - 800.0).abs() < 1e-9, "{v}");
    // Nothing included: zero.
    assert_eq!(
        rank_bce(&[1.0], &[1.0], &[0, 1], &[false], 1.0, &mut [0.0]),
        0.0
    );
}

#[test]
fn f32_engine_agrees_with_f64() {
    let model64 = Mlp::<f64>::new(6, &[8, 4], 3);
    let mut model32 = Mlp::<f32>::new(6, &[8, 4], 3);
    model32.set_parameters(
        &model64
            .parameters()
            .iter()
            .map(|&v| v as f32)
            .collect::<Vec<_>>(),
    );
    let inp64 = random(10 * 6, &mut Rng::new(4));
    let inp32: Vec<f32> = inp64.iter().map(|&v| v as f32).collect();
    let a = model64.predict(&inp64);
    let b = model32.predict(&inp32);
    for (x, y) in a.iter().zip(&b) {
        assert!((x - *y as f64).abs() <= 1e-5 + 1e-5 * x.abs(), "{x} vs {y}");
    }
}

#[test]
fn ranking_distillation_loss_matches_finite_differences() {
    let weights: Vec<Vec<(usize, f64)>> = vec![vec![(1, 0.7), (3, 0.3)], vec![], vec![(6, 1.0)]];
    check_loss("ranking distillation", |f, s, g| {
        ranking_distillation_loss(f, &weights, s, g)
    });
    // Value: mean over the two groups with candidates of sum w * -ln sigmoid(f).
    let f = [0.0f64, 0.5, 0.0, -1.0, 0.0, 0.0, 2.0];
    let want = ((0.7 * (1.0 + (-0.5f64).exp()).ln() + 0.3 * (1.0 + 1f64.exp()).ln())
        + (1.0 + (-2.0f64).exp()).ln())
        / 2.0;
    let got = ranking_distillation_loss(&f, &weights, 1.0, &mut [0.0; 7]);
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
}

#[test]
fn several_teachers_give_the_mean_of_their_losses() {
    let (offsets, _) = groups();
    let n = *offsets.last().unwrap();
    let f = random(n, &mut Rng::new(21));
    let (t1, t2) = (random(n, &mut Rng::new(22)), random(n, &mut Rng::new(23)));
    let all = [true; 6];
    for kind in LossKind::ALL {
        let one = |t: &[f64]| teacher_loss(kind, &f, &[t], &offsets, &all, 1.0, &mut vec![0.0; n]);
        let both = teacher_loss(
            kind,
            &f,
            &[&t1, &t2],
            &offsets,
            &all,
            1.0,
            &mut vec![0.0; n],
        );
        assert!((both - (one(&t1) + one(&t2)) / 2.0).abs() < 1e-12, "{kind}");
    }
}

#[test]
fn listwise_losses_follow_their_definitions_on_small_cases() {
    // Softmax with y = (1, 0, 0): -ln softmax(f)_1.
    let f = [0.3f64, -0.2, 1.1];
    let want = -(0.3f64.exp() / f.iter().map(|v| v.exp()).sum::<f64>()).ln();
    let got = data_loss(
        LossKind::Softmax,
        &f,
        &[1.0, 0.0, 0.0],
        &[0, 3],
        &[true],
        1.0,
        &mut [0.0; 3],
    );
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // Softmax with the teacher equal to the student: gradient zero (the minimum).
    let mut g = [0.0; 3];
    teacher_loss(
        LossKind::Softmax,
        &f,
        &[&f[..]],
        &[0, 3],
        &[true],
        1.0,
        &mut g,
    );
    assert!(g.iter().all(|&x| x.abs() < 1e-12), "{g:?}");
    // LambdaRank on two documents, y = (1, 0), ranked (2, 1): |delta NDCG| = 1 - 1/log2(3) over
    // IDCG = 1, times RankNet's pair loss.
    let f = [-0.4f64, 0.6];
    let delta = 1.0 - 1.0 / 3f64.log2();
    let want = delta * (1.0 + 1f64.exp()).ln();
    let got = lambdarank(&f, &[1.0, 0.0], &[0, 2], &[true], 1.0, &mut [0.0; 2]);
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
}

/// The pairwise losses take their values as a group's sum of max(x, 0) plus the logarithm of a
/// product of (1 + e^-|x|), 512 factors at a time: on groups of several thousand pairs, in f32
/// and f64, against the mean of the pairs' softplus summed directly in f64.
#[test]
fn pairwise_loss_values_hold_on_large_groups() {
    let softplus = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let offsets = [0usize, 90, 91, 160];
    let n = offsets[3];
    let mut rng = Rng::new(31);
    // Mostly close logits, where (1 + e^-|x|) is near 2 and the product would overflow without
    // its logarithm taken on the way; every third one far out, where e^-|x| is tiny.
    let f: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { 20.0 } else { 0.5 } * rng.normal())
        .collect();
    let t: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let y: Vec<f64> = (0..n).map(|_| rng.int_range(0, 3) as f64).collect();
    let include = [true; 3];
    let (mut hard, mut soft) = (Vec::new(), Vec::new());
    for w in offsets.windows(2) {
        let (mut h, mut hn, mut s, mut sn) = (0.0, 0, 0.0, 0);
        for i in w[0]..w[1] {
            for j in w[0]..w[1] {
                if y[i] > y[j] {
                    h += softplus(-(f[i] - f[j]));
                    hn += 1;
                }
                if i < j {
                    let p = sigmoid(t[i] - t[j]);
                    s += softplus(f[i] - f[j]) - p * (f[i] - f[j]);
                    sn += 1;
                }
            }
        }
        if hn > 0 {
            hard.push(h / hn as f64);
        }
        if sn > 0 {
            soft.push(s / sn as f64);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (want_hard, want_soft) = (mean(&hard), mean(&soft));
    let got = ranknet(&f, &y, &offsets, &include, 1.0, &mut vec![0.0; n]);
    assert!(
        (got - want_hard).abs() <= 1e-12 * want_hard,
        "RankNet f64: {got} vs {want_hard}"
    );
    let got = ranknet_soft(&f, &[&t[..]], &offsets, &include, 1.0, &mut vec![0.0; n]);
    assert!(
        (got - want_soft).abs() <= 1e-12 * want_soft,
        "soft RankNet f64: {got} vs {want_soft}"
    );
    let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (f32s, t32, y32) = (narrow(&f), narrow(&t), narrow(&y));
    let got = ranknet(&f32s, &y32, &offsets, &include, 1.0, &mut vec![0.0; n]) as f64;
    assert!(
        (got - want_hard).abs() <= 1e-5 * want_hard,
        "RankNet f32: {got} vs {want_hard}"
    );
    let got = ranknet_soft(
        &f32s,
        &[&t32[..]],
        &offsets,
        &include,
        1.0,
        &mut vec![0.0; n],
    ) as f64;
    assert!(
        (got - want_soft).abs() <= 1e-5 * want_soft,
        "soft RankNet f32: {got} vs {want_soft}"
    );
}

/// An empty group among the offsets (none comes from data, where a query has a document) is no
/// query: it attends to nothing and the others are scored as without it.
#[test]
fn an_empty_group_changes_no_score() {
    let mut rng = Rng::new(29);
    let inp = random(9 * 4, &mut rng);
    let model = Mlp::<f64>::new(4, &[6], 5).with_attention(2, 5);
    let (mut a, mut b) = (Activations::default(), Activations::default());
    let with = model
        .forward_training(&inp, &[0, 4, 4, 9], &mut a, None)
        .to_vec();
    let without = model
        .forward_training(&inp, &[0, 4, 9], &mut b, None)
        .to_vec();
    assert_eq!(with, without);
    let mut grads = model.zero_gradients();
    model.backward(&inp, &a, &[1.0; 9], &mut grads);
    assert!(grads.flatten().iter().all(|g| g.is_finite()));
}

/// Scoring makes each head's probabilities a block of rows at a time and keeps none of them,
/// so that a long query needs memory in its length, not its square: its scores are the forward
/// pass's that keeps every probability for the backward pass, for queries longer than a block
/// and for a short one beside them.
#[test]
fn scoring_a_long_query_a_block_of_rows_at_a_time_equals_the_training_forward_pass() {
    use distillrank::cpu::attention::SCORING_ROWS;
    use distillrank::data::inputs::Inputs;
    let mut rng = Rng::new(29);
    let sizes = [2 * SCORING_ROWS + 37, 3, SCORING_ROWS + 1];
    let mut offsets = vec![0];
    for s in sizes {
        offsets.push(offsets.last().unwrap() + s);
    }
    let b = *offsets.last().unwrap();
    let n_in = 5;
    let inp: Vec<f32> = (0..b * n_in).map(|_| rng.normal() as f32).collect();
    let model = Mlp::<f32>::new(n_in, &[16, 8], 4).with_attention(2, 5);
    let mut acts = Activations::default();
    let kept = model
        .forward_training(&inp, &offsets, &mut acts, None)
        .to_vec();
    assert!(!acts.attention.probabilities.is_empty());
    let scored =
        distillrank::cpu::mlp::score_inputs(&model, Inputs::dense(&inp, b).with_groups(&offsets));
    assert_eq!(scored.len(), b);
    for (i, (x, y)) in scored.iter().zip(&kept).enumerate() {
        assert!(
            (x - y).abs() <= 1e-6 * (1.0 + y.abs()),
            "document {i}: {x} scored, {y} in training"
        );
    }
}
