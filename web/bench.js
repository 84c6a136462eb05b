// Training throughput of distillrank (WebGPU with the adapter's choice of product kernels, then
// each kind forced, and the wasm CPU engine) against TensorFlow.js on WebGPU, same model, loss,
// optimiser and batches. The result lands in `window.benchResult` and in
// the page as JSON; `bench/web.mjs` runs the page headless and prints it.

import init, { start_gpu, bench_batch, bench_train } from "./pkg/distillrank.js";

const q = new URLSearchParams(location.search);
const shape = {
  features: Number(q.get("features") ?? 136),
  groups: Number(q.get("groups") ?? 8),
  docs_per_group: Number(q.get("docs") ?? 64),
  widths: (q.get("widths") ?? "256,256,128,64").split(",").map(Number),
};
const steps = Number(q.get("steps") ?? 20);
const warmup = Number(q.get("warmup") ?? 3);

/// The same training step in TensorFlow.js: forward, RankNet, backward and Adam in one
/// `optimizer.minimize`.
async function tfjs() {
  await tf.setBackend("webgpu");
  await tf.ready();
  const { features: F, groups: G, docs_per_group: D } = shape;
  const batches = [];
  for (let i = 0; i < 16; i++) {
    const b = bench_batch(shape, i);
    batches.push({ x: tf.tensor2d(b.x, [G * D, F]), y: tf.tensor2d(b.y, [G, D]) });
  }
  const dims = [F, ...shape.widths, 1];
  const layers = [];
  for (let l = 0; l + 1 < dims.length; l++) {
    layers.push({
      w: tf.variable(tf.randomNormal([dims[l], dims[l + 1]], 0, Math.sqrt(2 / dims[l]), "float32", l)),
      b: tf.variable(tf.zeros([dims[l + 1]])),
    });
  }
  const optimizer = tf.train.adam(1e-3, 0.9, 0.999, 1e-8);
  const loss = (x, y) => {
    let h = x;
    layers.forEach(({ w, b }, l) => {
      h = tf.add(tf.matMul(h, w), b);
      if (l + 1 < layers.length) h = tf.relu(h);
    });
    const s = tf.reshape(h, [G, D]);
    const diff = tf.sub(tf.expandDims(s, 2), tf.expandDims(s, 1)); // s_i - s_j
    const pair = tf.cast(tf.greater(tf.expandDims(y, 2), tf.expandDims(y, 1)), "float32");
    const pairs = tf.sum(pair, [1, 2]);
    const perGroup = tf.div(tf.sum(tf.mul(tf.softplus(tf.neg(diff)), pair), [1, 2]), tf.maximum(pairs, 1));
    const hasPairs = tf.cast(tf.greater(pairs, 0), "float32");
    return tf.div(tf.sum(tf.mul(perGroup, hasPairs)), tf.maximum(tf.sum(hasPairs), 1));
  };
  const step = (i) => optimizer.minimize(() => loss(batches[i % 16].x, batches[i % 16].y), true);
  for (let i = 0; i < warmup; i++) {
    const l = step(i);
    await l.data();
    l.dispose();
  }
  const t0 = performance.now();
  let last = null;
  for (let i = 0; i < steps; i++) {
    last?.dispose();
    last = step(warmup + i);
  }
  const finalLoss = (await last.data())[0];
  const seconds = (performance.now() - t0) / 1000;
  return { docs_per_s: (steps * G * D) / seconds, steps, batch_docs: G * D, seconds, final_loss: finalLoss, backend: tf.getBackend() };
}

async function main() {
  await init();
  const result = { shape, steps, warmup, userAgent: navigator.userAgent };
  try {
    result.adapter = await start_gpu();
    result.distillrank_webgpu = await bench_train("webgpu", shape, steps, warmup);
    result.distillrank_webgpu_tiled = await bench_train("webgpu-tiled", shape, steps, warmup);
    result.distillrank_webgpu_direct = await bench_train("webgpu-direct", shape, steps, warmup);
    result.tfjs_webgpu = await tfjs();
    result.ratio_webgpu = result.distillrank_webgpu.docs_per_s / result.tfjs_webgpu.docs_per_s;
  } catch (e) {
    result.webgpu_error = String(e.message ?? e);
  }
  result.distillrank_cpu_wasm = await bench_train("cpu", shape, steps, warmup);
  const rows = [["distillrank, WebGPU", result.distillrank_webgpu],
    ["distillrank, WebGPU, tiled products", result.distillrank_webgpu_tiled],
    ["distillrank, WebGPU, direct products", result.distillrank_webgpu_direct],
    ["TensorFlow.js, WebGPU", result.tfjs_webgpu],
    ["distillrank, CPU engine (wasm)", result.distillrank_cpu_wasm]];
  document.getElementById("results").innerHTML = "<tr><th>trainer</th><th>docs/s</th><th>final loss</th></tr>" +
    rows.filter(([, r]) => r).map(([n, r]) =>
      `<tr><td>${n}</td><td>${Math.round(r.docs_per_s).toLocaleString()}</td><td>${r.final_loss.toFixed(4)}</td></tr>`).join("");
  document.getElementById("status").textContent = result.ratio_webgpu
    ? `distillrank / TensorFlow.js on WebGPU: ${result.ratio_webgpu.toFixed(2)}x`
    : `WebGPU: ${result.webgpu_error}`;
  document.getElementById("out").textContent = JSON.stringify(result, null, 2);
  window.benchResult = result;
}

main().catch((e) => {
  document.getElementById("status").textContent = `Failed: ${e.message ?? e}`;
  window.benchResult = { error: String(e.message ?? e) };
});
