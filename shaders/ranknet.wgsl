// RankNet loss and gradient w.r.t. the logits, per query group, with hard targets (y_i > y_j) or
// soft teacher targets P_ij = mean over teachers of sigmoid(t_i - t_j) (spec §3). One invocation
// per document loops over the documents of its group: no n^2 memory, no atomics, deterministic.
// Groups of one document and groups without pairs have weight 0 and add nothing.
//
//   hard: for pairs y_i > y_j, loss softplus(-(f_i - f_j)), weight w_g = 1 / (pairs_g * groups)
//   soft: for pairs i < j, loss softplus(d) - P d with d = f_i - f_j,
//         weight w_g = 1 / (n_g (n_g - 1) / 2 * groups)
//
// The gradient, times params.scale, is written or added (params.accumulate) into dlogits; each document's (unscaled) share of
// the loss is written to partial[params.partial_offset + i] for a deterministic reduction.
//
// Parameters and bindings: loss_prologue.wgsl, with one weight per group after the targets.
// Dispatch: ceil(n / 256).

// The soft target P_ij: the teachers' mean pairwise probability.
fn soft_target(i: u32, j: u32) -> f32 {
    var p = 0.0;
    for (var t = 0u; t < params.teachers; t = t + 1u) {
        p = p + sigmoid(targets[t * params.n + i] - targets[t * params.n + j]);
    }
    return p / f32(params.teachers);
}

@compute @workgroup_size(256, 1, 1)
fn ranknet(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let group = group_of(i);
    let g = group.g;
    let start = group.start;
    let end = group.end;
    let w = group_weight(g);
    let fi = logits[i];
    var grad = 0.0;
    var loss = 0.0;
    if (w > 0.0) {
        for (var j = start; j < end; j = j + 1u) {
            if (j == i) { continue; }
            let d = fi - logits[j];
            if (params.teachers == 0u) {
                let yi = targets[i];
                let yj = targets[j];
                if (yi > yj) {
                    loss = loss + softplus(-d) * w;
                    grad = grad - sigmoid(-d) * w;
                } else if (yj > yi) {
                    grad = grad + sigmoid(d) * w;
                }
            } else {
                let p = soft_target(i, j);
                grad = grad + (sigmoid(d) - p) * w;
                if (j > i) {
                    loss = loss + (softplus(d) - p * d) * w;
                }
            }
        }
    }
    write_gradient(i, grad);
    partial[params.partial_offset + i] = loss;
}
