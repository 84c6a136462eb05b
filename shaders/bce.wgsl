// RankBCE: pointwise binary cross-entropy from logits, BCE(target, sigmoid(f)) =
// softplus(f) - target * f, with hard labels y or soft teacher targets (the mean over teachers of
// sigmoid(t_i)) (spec §3). Each document carries its weight w_i (1 / documents included, 0 for
// excluded groups). Writes or adds (params.accumulate) params.scale * (sigmoid(f) - target) * w_i into dlogits and writes the
// document's loss share to partial[params.partial_offset + i].
//
// Bindings: 0 params; 1 logits (n); 2 targets: labels (n) or teacher logits (teachers * n),
// followed by the per-document weights (n); 4 dlogits (n, accumulated); 5 partial.
// Bindings 3 is not used. Dispatch: ceil(n / 256).

struct Params {
    n: u32,
    groups: u32,
    teachers: u32,
    partial_offset: u32,
    scale: f32,
    accumulate: u32,     // 0: overwrite dlogits (the first loss of a step), 1: add to it
    scratch_offset: u32, // listwise.wgsl's LambdaRank only
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<f32>;
@group(0) @binding(4) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(5) var<storage, read_write> partial: array<f32>;

fn sigmoid(x: f32) -> f32 {
    let e = exp(-abs(x));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), x >= 0.0);
}

@compute @workgroup_size(256, 1, 1)
fn bce(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let weights_at = select(params.n, params.teachers * params.n, params.teachers > 0u);
    let w = targets[weights_at + i];
    var goal = 0.0;
    if (params.teachers == 0u) {
        goal = targets[i];
    } else {
        for (var t = 0u; t < params.teachers; t = t + 1u) {
            goal = goal + sigmoid(targets[t * params.n + i]);
        }
        goal = goal / f32(params.teachers);
    }
    let f = logits[i];
    let softplus_f = max(f, 0.0) + log(1.0 + exp(-abs(f)));
    dlogits[i] = select(0.0, dlogits[i], params.accumulate == 1u) + params.scale * (sigmoid(f) - goal) * w;
    partial[params.partial_offset + i] = (softplus_f - goal * f) * w;
}
