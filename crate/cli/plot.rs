//! SVG plots of experiments (plotters, SVG backend).

use std::path::Path;

use plotters::prelude::*;

use distillrank::error::{Error, Result};
use distillrank::ranking::experiment::Comparison;

/// One line of a plot.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// An optional band (low, high) at each point: a confidence interval, or mean ± std, drawn
    /// as a shaded area with error bars.
    pub band: Option<Vec<(f64, f64)>>,
}

/// Draws `series` as lines against x, with a legend.
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    legend: SeriesLabelPosition,
) -> Result<()> {
    let fail = |e: String| Error::Data(format!("{}: cannot draw the plot: {e}", path.display()));
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    if all.is_empty() {
        // Nothing measurable (an n/a figure): the plot says so instead of drawing zeros.
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (860, 520)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
            let root = root
                .titled(title, ("sans-serif", 22))
                .map_err(|e| fail(e.to_string()))?;
            root.draw(&Text::new(
                format!("{y_desc}: n/a (nothing could be measured)"),
                (40, 200),
                ("sans-serif", 18),
            ))
            .map_err(|e| fail(e.to_string()))?;
            root.present().map_err(|e| fail(e.to_string()))?;
        }
        return distillrank::output::write_atomic(path, svg.as_bytes());
    }
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let (mut y0, mut y1) = series
        .iter()
        .flat_map(|s| {
            s.points.iter().enumerate().map(move |(i, p)| {
                let (lo, hi) = s.band.as_ref().map_or((p.1, p.1), |b| b[i]);
                (lo.min(p.1), hi.max(p.1))
            })
        })
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (lo, hi)| {
            (a.min(lo), b.max(hi))
        });
    if x1 <= x0 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = ((y1 - y0) * 0.08).max(1e-3);
    y0 -= pad;
    y1 += pad;
    // Drawn into memory, then written atomically.
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (860, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| fail(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| fail(e.to_string()))?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| fail(e.to_string()))?;
            if let Some(band) = &s.band {
                let outline: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .zip(band)
                    .map(|(p, b)| (p.0, b.0))
                    .chain(s.points.iter().zip(band).rev().map(|(p, b)| (p.0, b.1)))
                    .collect();
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        outline,
                        color.mix(0.15).filled(),
                    )))
                    .map_err(|e| fail(e.to_string()))?;
                for (p, &(lo, hi)) in s.points.iter().zip(band) {
                    chart
                        .draw_series(LineSeries::new(
                            vec![(p.0, lo), (p.0, hi)],
                            color.stroke_width(1),
                        ))
                        .map_err(|e| fail(e.to_string()))?;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(legend)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    distillrank::output::write_atomic(path, svg.as_bytes())
}

/// Mean over seeds of a per-epoch value, at each epoch that at least one seed reached.
pub fn per_epoch_mean(runs: &[Vec<f64>]) -> Vec<(f64, f64)> {
    let longest = runs.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|e| {
            let v: Vec<f64> = runs.iter().filter_map(|r| r.get(e).copied()).collect();
            ((e + 1) as f64, v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect()
}

/// The PFD paper's Figure 2: test NDCG@8 of each method's student per epoch (mean over seeds).
pub fn ndcg_per_epoch(path: &Path, c: &Comparison) -> Result<()> {
    let series: Vec<Series> = c
        .methods
        .iter()
        .map(|r| Series {
            name: r.method.to_string(),
            points: per_epoch_mean(
                &r.runs
                    .iter()
                    .map(|run| {
                        run.student
                            .history
                            .iter()
                            .filter_map(|h| h.test_ndcg)
                            .collect()
                    })
                    .collect::<Vec<_>>(),
            ),
            band: None,
        })
        .collect();
    lines(
        path,
        "Student test NDCG@8 per epoch (mean over the seeds still training)",
        "epoch",
        "test NDCG@8",
        &series,
        SeriesLabelPosition::LowerRight,
    )
}

/// The data loss and the teacher (or Ranking Distillation) loss of each distilled student per epoch.
pub fn loss_terms(path: &Path, c: &Comparison) -> Result<()> {
    let mut series = Vec::new();
    for r in &c.methods {
        let mean = |f: &dyn Fn(&distillrank::ranking::train::EpochLog) -> f64| {
            per_epoch_mean(
                &r.runs
                    .iter()
                    .map(|run| run.student.history.iter().map(f).collect())
                    .collect::<Vec<_>>(),
            )
        };
        series.push(Series {
            name: format!("{} data", r.method),
            points: mean(&|h| h.data_loss),
            band: None,
        });
        let teacher = mean(&|h| h.teacher_loss + h.rd_loss);
        if teacher.iter().any(|p| p.1 > 0.0) {
            series.push(Series {
                name: format!("{} teacher", r.method),
                points: teacher,
                band: None,
            });
        }
    }
    lines(
        path,
        "Loss terms per epoch (mean over the seeds still training; unweighted by alpha)",
        "epoch",
        "loss",
        &series,
        SeriesLabelPosition::UpperRight,
    )
}

/// The examination probability of each displayed rank relative to rank 1: the simulator's true
/// one (where its click model has one) against the estimate from the clicks and those learned with
/// a ranker, from `results.json`'s
/// `clicks` ([`distillrank::ranking::clicks::ClickLabels::report_json`]).
pub fn propensities(path: &Path, clicks: &serde_json::Value) -> Result<()> {
    let read = |values: &serde_json::Value| -> Option<Vec<(f64, f64)>> {
        let values = values.as_array()?;
        Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(k, v)| Some(((k + 1) as f64, v.as_f64()?)))
                .collect(),
        )
    };
    let mut series: Vec<Series> = [
        ("true (the simulator's)", "true_propensities"),
        ("estimated by EM from the clicks", "estimated_propensities"),
        (
            "harvested from the logging policy's shuffles",
            "harvested_propensities",
        ),
    ]
    .into_iter()
    .filter_map(|(name, key)| {
        Some(Series {
            name: name.into(),
            points: read(clicks.get(key)?)?,
            band: None,
        })
    })
    .collect();
    // Those learned with a ranker (DLA, two-tower).
    if let Some(learned) = clicks
        .get("learned_propensities")
        .and_then(|l| l.as_object())
    {
        for (method, values) in learned {
            if let Some(points) = read(values) {
                series.push(Series {
                    name: format!("learned by {method}"),
                    points,
                    band: None,
                });
            }
        }
    }
    lines(
        path,
        "Examination probability by displayed rank, relative to rank 1",
        "displayed rank",
        "propensity",
        &series,
        SeriesLabelPosition::UpperRight,
    )
}
