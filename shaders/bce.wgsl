// RankBCE: pointwise binary cross-entropy from logits, BCE(target, sigmoid(f)) =
// softplus(f) - target * f, with hard labels y or soft teacher targets (the mean over teachers of
// sigmoid(t_i)) (spec §3). Each document carries its weight w_i (1 / documents included, 0 for
// excluded groups). Writes or adds (params.accumulate) params.scale * (sigmoid(f) - target) * w_i into dlogits and writes the
// document's loss share to partial[params.partial_offset + i].
//
// Parameters and bindings: loss_prologue.wgsl, with one weight per document after the targets;
// group_info is not read. Dispatch: ceil(n / 256).

@compute @workgroup_size(256, 1, 1)
fn bce(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let w = targets[weights_at() + i];
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
    write_gradient(i, (sigmoid(f) - goal) * w);
    partial[params.partial_offset + i] = (softplus(f) - goal * f) * w;
}
