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

export let ndcgChart, lossChart, sweepChart;

/// Draws the empty charts.
export function initCharts() {
  ndcgChart = lineChart($("ndcg-chart"), "test NDCG@8");
  lossChart = lineChart($("loss-chart"), "loss");
  sweepChart = lineChart($("sweep-chart"), "test NDCG@8", "alpha");
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
