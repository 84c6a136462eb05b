// The charts (Chart.js): test NDCG@8 and the loss terms per epoch, and the alpha sweep.

import { $ } from "./dom.js";

// ---------------------------------------------------------------- charts

/// Each method's colour, from its entry in the library (filled by choices.js at start-up).
export const METHOD_COLOURS = {};

export function lineChart(canvas, yTitle, xTitle = "epoch") {
  return new Chart(canvas, {
    type: "line",
    data: { datasets: [] },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      interaction: { mode: "nearest", intersect: false },
      scales: {
        x: { type: "linear", title: { display: true, text: xTitle } },
        y: { title: { display: true, text: yTitle } },
      },
      plugins: {
        legend: { labels: { boxWidth: 12, filter: (item, data) => !data.datasets[item.datasetIndex].hideInLegend } },
        tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.parsed.y.toFixed(4)}` } },
      },
    },
  });
}

export let ndcgChart, lossChart, sweepChart, propensityChart;

/// Draws the empty charts.
export function initCharts() {
  ndcgChart = lineChart($("ndcg-chart"), "test NDCG@8");
  lossChart = lineChart($("loss-chart"), "loss");
  sweepChart = lineChart($("sweep-chart"), "test NDCG@8", "alpha");
  propensityChart = lineChart($("propensity-chart"), "propensity", "displayed rank");
}

/// The propensities of a run whose methods learn from clicks (results.json's `clicks`): the
/// simulator's true ones, EM's estimate and those learned with a ranker; hidden otherwise. A
/// rank no session showed (null) has no point.
export function showPropensities(clicks) {
  $("propensity-box").hidden = !clicks;
  propensityChart.data.datasets = [];
  if (clicks) {
    const points = (values) => (values ?? []).flatMap((v, k) => (v === null ? [] : [{ x: k + 1, y: v }]));
    const series = [
      ["true (the simulator's)", clicks.true_propensities, "#24292f"],
      ["estimated by EM", clicks.estimated_propensities, METHOD_COLOURS["ips-estimated"]],
      ["harvested from the shuffles", clicks.harvested_propensities, METHOD_COLOURS["ips-harvested"]],
      ...Object.entries(clicks.learned_propensities ?? {}).map(([m, v]) => [`learned by ${m}`, v, METHOD_COLOURS[m]]),
    ];
    for (const [label, values, colour] of series) {
      if (!values) continue;
      propensityChart.data.datasets.push({ label, data: points(values), borderColor: colour, backgroundColor: colour, pointRadius: 3, borderWidth: 2 });
    }
  }
  propensityChart.update("none");
}

export function dataset(chart, key, make) {
  let d = chart.data.datasets.find((d) => d.key === key);
  if (!d) {
    d = { key, data: [], pointRadius: 2, borderWidth: 2, ...make() };
    chart.data.datasets.push(d);
  }
  return d;
}

/// Empties the charts for a Run whose seeds start at `first` (the setup's first_seed): that
/// seed's curves are drawn bold, the others thin.
export function resetCharts(first = 0) {
  firstSeed = first;
  for (const c of [ndcgChart, lossChart]) {
    c.data.datasets = [];
    c.update("none");
  }
}

export let firstSeed = 0;

export function onEpoch(model, log) {
  if (model.teacher !== null) return;
  const m = model.method;
  const colour = METHOD_COLOURS[m];
  const later = model.seed !== firstSeed;
  dataset(ndcgChart, `${m}/${model.seed}`, () => ({
    label: later ? `${m} (seed ${model.seed})` : m,
    hideInLegend: later,
    borderColor: colour + (later ? "66" : ""),
    backgroundColor: colour,
    borderWidth: later ? 1 : 2,
  })).data.push({ x: log.epoch, y: log.test_ndcg ?? NaN });
  if (!later) {
    dataset(lossChart, `${m}/data`, () => ({ label: `${m} data`, borderColor: colour, backgroundColor: colour }))
      .data.push({ x: log.epoch, y: log.data_loss });
    if (log.teacher_loss > 0) {
      dataset(lossChart, `${m}/teacher`, () => ({
        label: `${m} teacher`, borderColor: colour, backgroundColor: colour, borderDash: [5, 4],
      })).data.push({ x: log.epoch, y: log.teacher_loss });
    }
  }
  scheduleChartUpdate();
}

/// After a run, the NDCG chart shows each method's mean over the seeds, epoch by epoch, with a
/// band from the lowest to the highest seed; each seed's own curve stays on the chart, hidden
/// unless `showSeeds` (the "each seed" box). `result` is the run's results (each method's
/// students' per-epoch history).
export function summarizeNdcg(result, showSeeds) {
  const seeds = ndcgChart.data.datasets.filter((d) => d.key.includes("/"));
  const summary = [];
  for (const [m, r] of Object.entries(result.methods)) {
    const colour = METHOD_COLOURS[m];
    const byEpoch = new Map();
    for (const run of r.runs) {
      for (const log of run.student.history) {
        if (log.test_ndcg === null || log.test_ndcg === undefined) continue;
        if (!byEpoch.has(log.epoch)) byEpoch.set(log.epoch, []);
        byEpoch.get(log.epoch).push(log.test_ndcg);
      }
    }
    const epochs = [...byEpoch.keys()].sort((a, b) => a - b);
    const at = (f) => epochs.map((e) => ({ x: e, y: f(byEpoch.get(e)) }));
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    summary.push(
      { key: `${m}:low`, label: `${m} lowest seed`, data: at((v) => Math.min(...v)), hideInLegend: true,
        borderWidth: 0, pointRadius: 0, borderColor: "transparent", backgroundColor: colour + "26", fill: false },
      { key: `${m}:high`, label: `${m} highest seed`, data: at((v) => Math.max(...v)), hideInLegend: true,
        borderWidth: 0, pointRadius: 0, borderColor: "transparent", backgroundColor: colour + "26", fill: "-1" },
      { key: `${m}:mean`, label: `${m} (mean of ${r.runs.length} seeds)`, data: at(mean), borderColor: colour,
        backgroundColor: colour, borderWidth: 2, pointRadius: 2 },
    );
  }
  for (const d of seeds) {
    d.hidden = !showSeeds;
    d.hideInLegend = true;
  }
  ndcgChart.data.datasets = [...summary, ...seeds];
  ndcgChart.update("none");
}

/// Shows or hides each seed's own curve on the NDCG chart.
export function showSeedCurves(on) {
  for (const d of ndcgChart.data.datasets) {
    if (d.key.includes("/")) d.hidden = !on;
  }
  ndcgChart.update("none");
}

/// Redraws the charts at most four times a second: with every core training, a redraw per
/// epoch of every model would take the workers' time.
export let chartUpdate = null;
export function scheduleChartUpdate() {
  chartUpdate ??= setTimeout(() => {
    chartUpdate = null;
    ndcgChart.update("none");
    lossChart.update("none");
  }, 250);
}
