// Ranking Distillation's loss L_D (spec §6) on the GPU, exactly as the CPU engine's
// `RdBatch::weights` and `ranking_distillation_loss`: each batch group's candidates (the teacher's
// top-K unlabeled documents, best first) are weighted positives, L_D = the mean over the groups
// with weights of sum_r w_r softplus(-f_r), the weights taken from the student's current logits
// and carrying no gradient.
//
//   rd_weights   one invocation per batch group b. Candidate r (1-based) weighs, by params.scheme:
//                0 equal: 1;  1 position: w^a = exp(-r / lambda);
//                2 discrepancy: w^b = max(0, tanh(mu (rhat - r))), rhat the student's rank of the
//                  candidate in its group (1 + the documents scoring above it, ties by document
//                  order);  3 both: w^a w^b.
//                The weights are normalised to sum 1 over the group, or all 0 when their sum is
//                not positive; has[b] = 1 when the group has weights, else 0.
//   (reduce.wgsl's reduce_sum: the count of groups with weights, into weights[candidates].)
//   rd_loss      one invocation per candidate c, document i: with `count` from weights,
//                partial[c] = w_c softplus(-f_i) / count and dlogits[i] -= scale w_c sigmoid(-f_i)
//                / count. Candidates are distinct documents: no two invocations write one dlogit.
//
// Bindings (the shared layout):
//   rd_weights: 1 logits (n); 2 index (u32): group offsets (groups + 1), candidate offsets
//               (groups + 1), the candidates' batch documents (C); 4 weights (C, the count at C);
//               5 has (groups).
//   rd_loss:    1 logits (n); 2 index; 3 weights (C + 1); 4 dlogits (n, added to); 5 partial (C).
// Dispatch: ceil(groups / 256) for rd_weights, ceil(C / 256) for rd_loss. C >= 1.

struct Params {
    n: u32,
    groups: u32,
    candidates: u32,     // C
    scheme: u32,
    lambda: f32,
    mu: f32,
    scale: f32,          // alpha_RD
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> index: array<u32>;
@group(0) @binding(3) var<storage, read> weights_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> out4: array<f32>;
@group(0) @binding(5) var<storage, read_write> out5: array<f32>;

// The weight of candidate r (1-based) of document `doc` in the group of documents start..end.
fn raw_weight(r: u32, doc: u32, start: u32, end: u32) -> f32 {
    let position = exp(-f32(r) / params.lambda);
    if (params.scheme == 0u) { return 1.0; }
    if (params.scheme == 1u) { return position; }
    let f = logits[doc];
    var rhat = 1u;
    for (var j = start; j < end; j = j + 1u) {
        let o = logits[j];
        if (o > f || (o == f && j < doc)) { rhat = rhat + 1u; }
    }
    let discrepancy = max(tanh(params.mu * (f32(rhat) - f32(r))), 0.0);
    if (params.scheme == 2u) { return discrepancy; }
    return position * discrepancy;
}

@compute @workgroup_size(256, 1, 1)
fn rd_weights(@builtin(global_invocation_id) id: vec3<u32>) {
    let b = id.x;
    if (b >= params.groups) { return; }
    let start = index[b];
    let end = index[b + 1u];
    let first = index[params.groups + 1u + b];
    let last = index[params.groups + 2u + b];
    let docs = 2u * (params.groups + 1u);
    var sum = 0.0;
    for (var c = first; c < last; c = c + 1u) {
        let w = raw_weight(c - first + 1u, index[docs + c], start, end);
        out4[c] = w;
        sum = sum + w;
    }
    if (sum > 0.0) {
        for (var c = first; c < last; c = c + 1u) {
            out4[c] = out4[c] / sum;
        }
        out5[b] = 1.0;
    } else {
        for (var c = first; c < last; c = c + 1u) {
            out4[c] = 0.0;
        }
        out5[b] = 0.0;
    }
}

@compute @workgroup_size(256, 1, 1)
fn rd_loss(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if (c >= params.candidates) { return; }
    let i = index[2u * (params.groups + 1u) + c];
    let count = weights_in[params.candidates];
    let w = weights_in[c];
    if (count <= 0.0 || w <= 0.0) {
        out5[c] = 0.0;
        return;
    }
    let minus_f = -logits[i];
    let e = exp(-abs(minus_f));
    let softplus = max(minus_f, 0.0) + log(1.0 + e);
    let sigmoid = select(e / (1.0 + e), 1.0 / (1.0 + e), minus_f >= 0.0);
    out5[c] = w * softplus / count;
    out4[i] = out4[i] - params.scale * w * sigmoid / count;
}
