// Global objectives (Eban et al.; spec §7): the constrained objectives' per-example weighted
// surrogates and their gradients, and the dual ascent of their Lagrange multipliers, exactly as
// the CPU engine's `objectives::Lagrangian::term` and `objectives::dual_ascent`.
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

struct Params {
    n: u32,
    constraints: u32,   // K
    surrogate: u32,     // 0: hinge, 1: log-loss / ln 2
    _pad0: u32,
    scale: f32,         // 1 / K
    step: f32,          // the dual step: dual_rate_factor * learning rate
    _pad1: u32,
    _pad2: u32,
}

const INV_LN2: f32 = 1.4426950408889634;

@group(0) @binding(0) var<uniform> params: Params;
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
