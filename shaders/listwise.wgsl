// The listwise losses (softmax cross-entropy, LambdaRank) and their gradients w.r.t. the logits,
// per query group, exactly as the CPU engine's `softmax_ce` and `lambdarank`. One invocation per
// document loops over the documents of its group: no atomics, deterministic. The group weights
// (`loss_weights` on the host) follow the targets, as in ranknet.wgsl.
//
//   softmax_ce    p = softmax(f) over the group; q the targets over their sum (hard: the labels'
//                 gains 2^y - 1, which the host computes, binary y being its own gain) or
//                 the mean over teachers of softmax(t) over the group (soft); document i adds
//                 -w q_i ln p_i to the loss and w (p_i - q_i) to its gradient.
//   lambda_ranks  each document's rank in its group by descending logit (ties by document order)
//                 into scratch[i], and its share of the group's ideal DCG, (2^y_i - 1) /
//                 log2(1 + its rank by descending label), into scratch[n + i].
//   lambdarank    RankNet's hard pairs (y_i > y_j), each weighted by |delta NDCG_ij| =
//                 |(2^y_i - 2^y_j)(1 / log2(1 + r_i) - 1 / log2(1 + r_j))| / IDCG from the ranks
//                 that lambda_ranks wrote; loss shares as ranknet.wgsl's hard pairs.
//
// The gradient, times params.scale, is written or added (params.accumulate) into dlogits; each
// document's (unscaled) share of the loss goes to partial[params.partial_offset + i].
//
// Parameters and bindings: loss_prologue.wgsl, with one weight per group after the targets;
// lambda_ranks' scratch (2 n) at scratch_offset in partial, which lambdarank reads.
// Dispatch: ceil(n / 256) for each.

// ln sum_j exp(v_j) - over documents start..end of values[base + j], stably.
fn log_sum_exp_logits(start: u32, end: u32) -> vec2<f32> {
    var m = -3.0e38;
    for (var j = start; j < end; j = j + 1u) { m = max(m, logits[j]); }
    var s = 0.0;
    for (var j = start; j < end; j = j + 1u) { s = s + exp(logits[j] - m); }
    return vec2<f32>(m, log(s));
}

fn log_sum_exp_teacher(t: u32, start: u32, end: u32) -> vec2<f32> {
    let base = t * params.n;
    var m = -3.0e38;
    for (var j = start; j < end; j = j + 1u) { m = max(m, targets[base + j]); }
    var s = 0.0;
    for (var j = start; j < end; j = j + 1u) { s = s + exp(targets[base + j] - m); }
    return vec2<f32>(m, log(s));
}

@compute @workgroup_size(256, 1, 1)
fn softmax_ce(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let group = group_of(i);
    let g = group.g;
    let start = group.start;
    let end = group.end;
    let w = group_weight(g);
    if (w <= 0.0) {
        write_gradient(i, 0.0);
        partial[params.partial_offset + i] = 0.0;
        return;
    }
    var q = 0.0;
    if (params.teachers == 0u) {
        var sum = 0.0;
        for (var j = start; j < end; j = j + 1u) { sum = sum + targets[j]; }
        q = targets[i] / sum;
    } else {
        for (var t = 0u; t < params.teachers; t = t + 1u) {
            let lse = log_sum_exp_teacher(t, start, end);
            q = q + exp(targets[t * params.n + i] - lse.x - lse.y);
        }
        q = q / f32(params.teachers);
    }
    let lse = log_sum_exp_logits(start, end);
    let log_p = logits[i] - lse.x - lse.y;
    write_gradient(i, w * (exp(log_p) - q));
    partial[params.partial_offset + i] = -w * q * log_p;
}

@compute @workgroup_size(256, 1, 1)
fn lambda_ranks(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let group = group_of(i);
    let g = group.g;
    let start = group.start;
    let end = group.end;
    let f = logits[i];
    let y = targets[i];
    var rank = 1u;
    var ideal = 1u;
    for (var j = start; j < end; j = j + 1u) {
        let o = logits[j];
        if (o > f || (o == f && j < i)) { rank = rank + 1u; }
        let z = targets[j];
        if (z > y || (z == y && j < i)) { ideal = ideal + 1u; }
    }
    partial[params.scratch_offset + i] = f32(rank);
    partial[params.scratch_offset + params.n + i] = (exp2(y) - 1.0) / log2(1.0 + f32(ideal));
}

@compute @workgroup_size(256, 1, 1)
fn lambdarank(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let group = group_of(i);
    let g = group.g;
    let start = group.start;
    let end = group.end;
    let w = group_weight(g);
    var idcg = 0.0;
    for (var j = start; j < end; j = j + 1u) {
        idcg = idcg + partial[params.scratch_offset + params.n + j];
    }
    var grad = 0.0;
    var loss = 0.0;
    if (w > 0.0 && idcg > 0.0) {
        let fi = logits[i];
        let yi = targets[i];
        let gain_i = exp2(yi) - 1.0;
        let discount_i = 1.0 / log2(1.0 + partial[params.scratch_offset + i]);
        for (var j = start; j < end; j = j + 1u) {
            let yj = targets[j];
            if (j == i || yi == yj) { continue; }
            let discount_j = 1.0 / log2(1.0 + partial[params.scratch_offset + j]);
            let delta = abs((gain_i - (exp2(yj) - 1.0)) * (discount_i - discount_j)) / idcg;
            let d = fi - logits[j];
            if (yi > yj) {
                loss = loss + softplus(-d) * w * delta;
                grad = grad - sigmoid(-d) * w * delta;
            } else {
                grad = grad + sigmoid(d) * w * delta;
            }
        }
    }
    write_gradient(i, grad);
    partial[params.partial_offset + i] = loss;
}
