// Global objectives (Eban et al.; spec §7) on the GPU, exactly as the CPU engine's
// `objectives::Objective::loss` and `objectives::dual_ascent`: the constrained objectives' weighted
// surrogates, their gradients and the multipliers' dual ascent; the pairwise AUC-ROC surrogate; the
// F-beta bound. (Log-loss is bce.wgsl with weights 1 / n; the anchor biases train with adam.wgsl
// at an offset.) Every sum is a fixed-order loop or reduce.wgsl's tree: deterministic, no atomics.
//
// ## Constrained objectives (recall at precision, precision at recall, TPR at FPR, AUC-PR)
//
// K constraints (1 for recall at precision, precision at recall and TPR at FPR; K anchors for
// AUC-PR). Constraint k has coefficients (c0, c1, d0, d1, kappa), a multiplier lambda_k and a bias
// b_k; with c = c0 + c1 lambda_k, d = d0 + d1 lambda_k and g = f_i + b_k, example i contributes
//
//   value  = c y l(g, +1) + d (1 - y) l(g, -1)       (the weighted surrogate)
//   slope  = d value / d f_i                          (= d value / d b_k)
//   share  = c1 y l(g, +1) + d1 (1 - y) l(g, -1)      (= d value / d lambda_k)
//
// with l the hinge max(0, 1 - y g) or the log-loss over ln 2, log2(1 + e^(-y g)). The batch loss
// is scale * sum_k (mean_i value + kappa_k lambda_k), scale = 1 / K (the mean over anchors).
//
//   objective_terms       one invocation per example: dlogits[i] = scale * sum_k slope / n, and
//                         the three per-example rows of every k into partial (3 K rows of n).
//   (reduce.wgsl's reduce_sum, one workgroup per row of partial: sums[r] = the sum of row r.)
//   update_multipliers    one workgroup: from the sums, dbias_k = scale * sum slope / n,
//                         dlambda_k = scale * (sum share / n + kappa_k) (the constraint's
//                         violation), the loss, then lambda_k <- max(0, lambda_k + step dlambda_k).
//
// Bindings (the shared layout):
//   objective_terms:    1 logits (n); 2 labels (n) then coefficients (5 K: c0 c1 d0 d1 kappa);
//                       3 state: lambdas (K) then biases (K); 4 dlogits (n); 5 partial (3 K n),
//                       row 3k + 0 the values, 3k + 1 the slopes, 3k + 2 the shares.
//   reduce_sum:         1 partial (3 K n); 4 sums (3 K), with params (n, 0, 0, 0).
//   update_multipliers: 1 sums (3 K); 2 labels then coefficients; 4 state (updated in place);
//                       5 out: dbias (K), dlambda (K), loss terms (K), loss (1).
// Dispatch: ceil(n / 256) for objective_terms, (3 K, 1, 1) for reduce_sum, (1, 1, 1) for
// update_multipliers. n >= 1.
//
// ## AUC-ROC: 0.5 * mean over (positive, negative) pairs of l(f_pos - f_neg, +1)
//
//   roc_auc_pairs         one invocation per example, looping over the examples of the other
//                         class (labels above 0.5 are positives), scale = 0.5 / (positives *
//                         negatives), 0 for a batch without a pair:
//                         positive i: dlogits[i] = scale * sum_{j neg} l'(f_i - f_j, +1),
//                                     partial[i] = scale * sum_{j neg} l(f_i - f_j, +1);
//                         negative j: dlogits[j] = -scale * sum_{i pos} l'(f_i - f_j, +1),
//                                     partial[j] = 0.
//                         The loss is the sum of partial (reduce_sum).
// Bindings: 1 logits (n); 2 labels (n); 4 dlogits (n); 5 partial (n). Dispatch: ceil(n / 256).
// O(n^2) work per batch, O(n) memory.
//
// ## F-beta: minus the lower bound (1 + b2) tp_l / (b2 |Y+| + max(tp_l, 0) + fp_u), b2 = beta^2
//
//   f_beta_terms          one invocation per example: three rows of partial, y (row 0),
//                         y (1 - l(f, +1)) (row 1, tp_l's terms), (1 - y) l(f, -1) (row 2, fp_u's).
//   (reduce_sum, 3 workgroups: sums = (|Y+|, tp_l, fp_u).)
//   f_beta_gradient       one invocation per example: with den = b2 |Y+| + max(tp_l, 0) + fp_u and
//                         num = (1 + b2) tp_l, dF/dtp_l = (1 + b2)(b2 |Y+| + fp_u) / den^2 when
//                         tp_l > 0, else (1 + b2) / den; dF/dfp_u = -num / den^2;
//                         dlogits[i] = dF/dtp_l y l'(f, +1) - dF/dfp_u (1 - y) l'(f, -1); the
//                         first invocation writes the loss -num / den to out[0]. A batch with
//                         den <= 0 has loss 0 and zero gradients.
// Bindings: f_beta_terms: 1 logits (n); 2 labels (n); 5 partial (3 n). f_beta_gradient: 1 logits;
// 2 labels; 3 sums (3); 4 dlogits (n); 5 out (1). params.scale holds b2.
// Dispatch: ceil(n / 256) for both, (3, 1, 1) for reduce_sum.

struct Params {
    n: u32,
    constraints: u32,   // K
    surrogate: u32,     // 0: hinge, 1: log-loss / ln 2
    _pad0: u32,
    scale: f32,         // 1 / K; roc_auc_pairs: 0.5 / pairs; f-beta: beta^2
    step: f32,          // the dual step: dual_rate_factor * learning rate
    _pad1: u32,
    _pad2: u32,
}

const INV_LN2: f32 = 1.4426950408889634;

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(2) var<storage, read> labels_coefficients: array<f32>;
@group(0) @binding(3) var<storage, read> state_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> out4: array<f32>;
@group(0) @binding(5) var<storage, read_write> out5: array<f32>;

// l(g, +1) and its derivative in g.
fn positive(g: f32) -> vec2<f32> {
    if (params.surrogate == 0u) {
        return select(vec2<f32>(0.0, 0.0), vec2<f32>(1.0 - g, -1.0), g < 1.0);
    }
    // softplus(-g) and d/dg softplus(-g) = -sigmoid(-g), from one exponential.
    let e = exp(-abs(g));
    let softplus = max(-g, 0.0) + log(1.0 + e);
    let sigmoid_minus = select(1.0 / (1.0 + e), e / (1.0 + e), g >= 0.0);
    return vec2<f32>(softplus, -sigmoid_minus) * INV_LN2;
}

// l(g, -1) = l(-g, +1) and its derivative in g.
fn negative(g: f32) -> vec2<f32> {
    let p = positive(-g);
    return vec2<f32>(p.x, -p.y);
}

fn coefficient(k: u32, j: u32) -> f32 {
    return labels_coefficients[params.n + 5u * k + j];
}

@compute @workgroup_size(256, 1, 1)
fn objective_terms(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let n = params.n;
    if (i >= n) { return; }
    let f = in1[i];
    let y = labels_coefficients[i];
    var slope_sum = 0.0;
    for (var k = 0u; k < params.constraints; k = k + 1u) {
        let lambda = state_in[k];
        let g = f + state_in[params.constraints + k];
        let c = coefficient(k, 0u) + coefficient(k, 1u) * lambda;
        let d = coefficient(k, 2u) + coefficient(k, 3u) * lambda;
        let lp = positive(g);
        let ln = negative(g);
        let wp = c * y;
        let wn = d * (1.0 - y);
        let slope = wp * lp.y + wn * ln.y;
        out5[(3u * k) * n + i] = wp * lp.x + wn * ln.x;
        out5[(3u * k + 1u) * n + i] = slope;
        out5[(3u * k + 2u) * n + i] = coefficient(k, 1u) * y * lp.x + coefficient(k, 3u) * (1.0 - y) * ln.x;
        slope_sum = slope_sum + slope;
    }
    out4[i] = params.scale * slope_sum / f32(n);
}

@compute @workgroup_size(64, 1, 1)
fn update_multipliers(@builtin(local_invocation_id) local: vec3<u32>) {
    let big_k = params.constraints;
    let inv_n = 1.0 / f32(params.n);
    for (var k = local.x; k < big_k; k = k + 64u) {
        let lambda = out4[k];
        let kappa = coefficient(k, 4u);
        let dlambda = params.scale * (in1[3u * k + 2u] * inv_n + kappa);
        out5[k] = params.scale * in1[3u * k + 1u] * inv_n;
        out5[big_k + k] = dlambda;
        out5[2u * big_k + k] = params.scale * (in1[3u * k] * inv_n + kappa * lambda);
        out4[k] = max(lambda + params.step * dlambda, 0.0);
    }
    storageBarrier();
    if (local.x == 0u) {
        var loss = 0.0;
        for (var k = 0u; k < big_k; k = k + 1u) {
            loss = loss + out5[2u * big_k + k];
        }
        out5[3u * big_k] = loss;
    }
}

@compute @workgroup_size(256, 1, 1)
fn roc_auc_pairs(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let n = params.n;
    if (i >= n) { return; }
    let f = in1[i];
    let is_positive = labels_coefficients[i] > 0.5;
    var loss = 0.0;
    var slope = 0.0;
    for (var j = 0u; j < n; j = j + 1u) {
        if ((labels_coefficients[j] > 0.5) == is_positive) { continue; }
        if (is_positive) {
            let p = positive(f - in1[j]);
            loss = loss + p.x;
            slope = slope + p.y;
        } else {
            slope = slope - positive(in1[j] - f).y;
        }
    }
    out4[i] = params.scale * slope;
    out5[i] = params.scale * loss;
}

@compute @workgroup_size(256, 1, 1)
fn f_beta_terms(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let n = params.n;
    if (i >= n) { return; }
    let f = in1[i];
    let y = labels_coefficients[i];
    out5[i] = y;
    out5[n + i] = y * (1.0 - positive(f).x);
    out5[2u * n + i] = (1.0 - y) * negative(f).x;
}

@compute @workgroup_size(256, 1, 1)
fn f_beta_gradient(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let b2 = params.scale;
    let positives = state_in[0];
    let tp_l = state_in[1];
    let fp_u = state_in[2];
    let den = b2 * positives + max(tp_l, 0.0) + fp_u;
    if (den <= 0.0) {
        out4[i] = 0.0;
        if (i == 0u) { out5[0] = 0.0; }
        return;
    }
    let num = (1.0 + b2) * tp_l;
    let d_tp = select((1.0 + b2) / den, (1.0 + b2) * (b2 * positives + fp_u) / (den * den), tp_l > 0.0);
    let d_fp = -num / (den * den);
    let f = in1[i];
    let y = labels_coefficients[i];
    out4[i] = d_tp * y * positive(f).y - d_fp * (1.0 - y) * negative(f).y;
    if (i == 0u) { out5[0] = -num / den; }
}
