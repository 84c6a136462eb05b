//! The table of settings: each setting's name (as its flag spells it), the `setup.json` fields it
//! fills with their defaults, its range when it is a number and why, its help, and where the
//! page's form starts.
//!
//! Every door reads the same table:
//! - the CLI takes each flag's help and default from its row, and parses numbers through
//!   [`Setting::parse`], so a value out of range is refused before anything runs, naming the flag;
//! - the library's defaults are read from it: every field a setup leaves out takes its row's
//!   default ([`read_section`]), and the types' `Default` are the table's ([`defaults`]);
//! - the CLI's flags of a comparison are its rows, with no code of their own
//!   (`crate/cli/flags.rs`, [`crate::setup::Setup::with_flags`]);
//! - `setup.json` (from the CLI, the page or Python) is checked field by field with
//!   [`check_setup_fields`];
//! - the page builds its form's bounds, tooltips and starting values from [`table_json`];
//! - a setup's command line and its differences from the defaults are written from it
//!   ([`crate::setup::Setup::command_line`]).
//!
//! `tests/flags.rs` walks the CLI's own definition and every numeric field of a setup, and fails
//! on a numeric flag or field that has no row here.
//!
//! The ranges keep every run finite and every allocation sized: a size's bound is where a single
//! setting would already ask for more than any machine has (the product of several sizes is
//! checked again where it is allocated), and a weight's is where the losses would overflow.

use crate::error::{shown, Error, Result};

/// One setting: its name as the CLI spells the flag, the `setup.json` fields it fills with their
/// defaults, its range when it is a number, and its help.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The name as the CLI spells the flag, without the dashes (`batch-docs`).
    pub name: &'static str,
    /// Whether `name` is a flag of the CLI (a few settings live in `setup.json` only).
    pub flag: bool,
    /// The `setup.json` fields this setting fills, each with its default.
    pub fields: &'static [Field],
    /// The values a number may take; None for a setting that is not a number (`--loss`).
    pub range: Option<Range>,
    /// What the setting does: the flag's `--help`, the page's tooltip.
    pub help: &'static str,
    /// For a list that may be empty (the hidden widths), the word that gives the empty list
    /// ([`NO_HIDDEN_LAYER`]); the list's values are then comma-separated in one flag value.
    pub empty_list: Option<&'static str>,
}

/// The hidden widths' value for no hidden layer, a linear model (`--widths none`; `"widths": []`
/// in `setup.json`): the PFD paper's model of its section 5.
pub const NO_HIDDEN_LAYER: &str = "none";

/// A `setup.json` field a setting fills, as a path from the top (`data.logs.sessions`; the
/// global objectives' fields under [`OBJECTIVES`]), with its default as the CLI spells it
/// (`256,256,128,64`; empty: none, the library decides by the data, as the help says).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub path: &'static str,
    pub default: &'static str,
    /// Where the page's form starts, when it starts lighter than the default (fewer queries,
    /// fewer epochs: a browser's budget). A comparison the page sends says so in its note.
    pub page: Option<&'static str>,
}

/// A number's range.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    /// The range excludes `min` (`(0, 1]`), or `max` (`[0, 1)`).
    pub min_open: bool,
    pub max_open: bool,
    /// A whole number.
    pub integer: bool,
    /// Why the range is what it is, for the message.
    pub why: &'static str,
}

const fn setting(name: &'static str, range: Option<Range>) -> Setting {
    Setting {
        name,
        flag: true,
        fields: &[],
        range,
        help: "",
        empty_list: None,
    }
}

/// A whole number in `min..=max`.
const fn whole(name: &'static str, min: u64, max: u64, why: &'static str) -> Setting {
    setting(
        name,
        Some(Range {
            min: min as f64,
            max: max as f64,
            min_open: false,
            max_open: false,
            integer: true,
            why,
        }),
    )
}

/// A real number in `[min, max]`; `open` marks which ends are excluded.
const fn real(
    name: &'static str,
    (min, max): (f64, f64),
    (min_open, max_open): (bool, bool),
    why: &'static str,
) -> Setting {
    setting(
        name,
        Some(Range {
            min,
            max,
            min_open,
            max_open,
            integer: false,
            why,
        }),
    )
}

/// A setting that is not a number: a name from a list, a list, a spec (`top:30%`).
const fn text(name: &'static str) -> Setting {
    setting(name, None)
}

/// A field and its default.
const fn f(path: &'static str, default: &'static str) -> Field {
    Field {
        path,
        default,
        page: None,
    }
}

/// A field, its default, and where the page's form starts.
const fn fp(path: &'static str, default: &'static str, page: &'static str) -> Field {
    Field {
        path,
        default,
        page: Some(page),
    }
}

impl Setting {
    /// The fields it fills.
    const fn at(self, fields: &'static [Field]) -> Setting {
        Setting { fields, ..self }
    }
    const fn help(self, help: &'static str) -> Setting {
        Setting { help, ..self }
    }
    /// A list of whole numbers that may be empty, given by `word`.
    const fn or_empty(self, word: &'static str) -> Setting {
        Setting {
            empty_list: Some(word),
            ..self
        }
    }
    /// A setting of `setup.json` without a flag.
    const fn setup_only(self) -> Setting {
        Setting {
            flag: false,
            ..self
        }
    }
}

const CLOSED: (bool, bool) = (false, false);
const OPEN: (bool, bool) = (true, true);
const OPEN_BELOW: (bool, bool) = (true, false);
const OPEN_ABOVE: (bool, bool) = (false, true);

const SEED: &str = "any 64-bit seed";
const SIZE: &str = "a larger value alone would ask for more memory than any machine has";
/// The generator's columns: a data file holds at most 65,536 (`data synth` checks x and z
/// together).
const COLUMNS: &str = "features of the generated data; a data file holds at most 65,536";
const PROBABILITY: &str = "a probability";
const SPREAD: &str = "a standard deviation; the signal has unit variance";

/// Every setting. A new flag or `setup.json` field needs a row here: `tests/flags.rs` fails on a
/// numeric flag or field without one, and on a row whose flag `compare` lacks.
///
/// The CLI takes each flag's help and default from its row (`crate/cli/mod.rs`, `command`), in
/// the context of its command: `objectives` reads the fields under [`OBJECTIVES`], every other
/// command the others. The library's defaults ([`crate::setup::Setup::default`]) are read from
/// here too, and so are the page's form (bounds, tooltip, starting value) and a setup's command
/// line. Flags that fill no field (`bench`'s sizes, `--jobs`, `train --seed`) keep their defaults
/// beside the flag: they describe a command, not a setup.
#[rustfmt::skip]
pub const SETTINGS: &[Setting] = &[
    // Where the data come from: a setup's source, and the global objectives' examples.
    text("source").setup_only().at(&[f("data.source", "synthetic")])
        .help("Where a comparison's data come from: synthetic (the generator), mq2008 (bundled: its Fold1), mq2008_folds (bundled: its five parts, a comparison on each of LETOR 4.0's five folds) or files"),
    text("objectives source").setup_only().at(&[f("objectives.data", "synthetic")])
        .help("Where the global objectives' examples come from: synthetic (the imbalanced task), mq2008 (bundled) or files"),
    // Synthetic data (data synth, train, compare, sweep).
    text("kind").at(&[f("data.source.synthetic.options.kind", "letor")])
        .help("letor: nonlinear relevance from x and hidden factors u, z noisy functions of u; linear: the PFD paper's section 5 model"),
    whole("queries", 1, 10_000_000, SIZE).at(&[fp("data.source.synthetic.options.queries", "4000", "400")])
        .help("Query groups to generate (the training queries, when synthetic data feed train, compare or sweep)"),
    whole("valid-queries", 1, 10_000_000, SIZE).at(&[fp("data.source.synthetic.valid_queries", "500", "300")])
        .help("Validation queries generated beside the training queries"),
    whole("test-queries", 1, 10_000_000, SIZE).at(&[fp("data.source.synthetic.test_queries", "1000", "500")])
        .help("Test queries generated beside the training queries"),
    whole("min-docs", 1, 100_000, SIZE).at(&[f("data.source.synthetic.options.min_docs", "10")])
        .help("Fewest documents in a generated group"),
    whole("max-docs", 1, 100_000, SIZE).at(&[f("data.source.synthetic.options.max_docs", "40")])
        .help("Most documents in a generated group"),
    whole("regular", 1, 65_535, COLUMNS).at(&[fp("data.source.synthetic.options.regular", "100", "24")])
        .help("Regular features x of the generated data"),
    whole("privileged-count", 1, 65_535, COLUMNS).at(&[f("data.source.synthetic.options.privileged", "6")])
        .help("Privileged features z of the generated data (its last columns)"),
    real("privileged-strength", (0.0, 1.0), CLOSED, "a share of the relevance signal")
        .at(&[fp("data.source.synthetic.options.privileged_strength", "0.5", "0.6")])
        .help("Share of the relevance signal only the hidden factors behind z explain"),
    real("privileged-correlation", (0.0, 1.0), CLOSED, "a share of variance")
        .at(&[f("data.source.synthetic.options.privileged_correlation", "0")])
        .help("Share of the hidden factors' variance explained by x (0: z independent of x)"),
    real("noise", (0.0, 1000.0), CLOSED, SPREAD)
        .at(&[fp("data.source.synthetic.options.noise", "0.1", "0.5"), f("objectives.data.synthetic.noise", "0.7")])
        .help("Relevance noise of the generated data (ranking: on the relevance, whose signal has unit variance; objectives: on the latent score)"),
    real("privileged_noise", (0.0, 1000.0), CLOSED, SPREAD).setup_only()
        .at(&[f("data.source.synthetic.options.privileged_noise", "0.3")])
        .help("Noise of the generated z around the hidden factors"),
    real("query-spread", (0.0, 1000.0), CLOSED, SPREAD).at(&[fp("data.source.synthetic.options.query_spread", "1", "0")])
        .help("Standard deviation of a per-query relevance shift (0: every query alike; larger: fewer positive groups)"),
    whole("synth-seed", 0, u64::MAX, SEED)
        .at(&[f("data.source.synthetic.options.seed", "7"), f("objectives.data.synthetic.seed", "11")])
        .help("Seed of the synthetic data"),
    // Labelling and filtering.
    text("privileged").at(&[f("data.privileged", "")])
        .help("Privileged features: top:N (the N >= 1 largest |correlation| with y on the training split), top:P% (P% of the training split's informative features, rounded, leaving at least one regular, and one at least where two are informative), cols:3,7,12 (1-based columns), discriminative:TAU_PRIV (Figure 5's z) or logs (simulated interaction logs: the columns FILE.logs.json names, written by data simulate-logs; without it, logs simulated here with the --sessions ... options). Default for files: top:30%, the PFD paper's share; for synthetic data, the generator's z columns"),
    real("tau-target", (-1e6, 1e6), CLOSED, "a threshold on the grade scale").at(&[fp("data.tau_target", "", "3.5")])
        .help("Gumbel labelling threshold tau_target. Default for files: the largest training grade + 0.8 (the paper's 4.8 on grades 0..4, 2.8 on MQ2008's 0..2); 3.5 for synthetic data"),
    real("t", (0.0, 1e6), OPEN_BELOW, "a temperature").at(&[f("data.t", "")])
        .help("Gumbel labelling temperature t. Default 4 for files (the paper's) and 8 for synthetic data, whose relevance carries its own noise"),
    whole("min-group-size", 0, 1_000_000, "documents in a query").at(&[f("data.min_group_size", "10")])
        .help("Drop query groups with fewer documents"),
    whole("data-seed", 0, u64::MAX, SEED).at(&[f("data.data_seed", "0")])
        .help("Seed of the labels and the holdouts"),
    text("prepared-cache").at(&[f("data.prepared_cache", "false")])
        .help("Keep the prepared splits of files in a mapped file beside the training file (TRAIN.KEY.drprep, keyed by the data settings and the files' sizes and times), and train from it: a later run with the same key starts without preparing, and resident memory stays bounded whatever the file's size"),
    text("allow-missing-features").at(&[f("data.allow_missing_features", "false")])
        .help("true: a validation or test file whose highest feature index is below the training file's reads its missing last columns as 0 (SVMlight leaves zeros out); false (default): it is refused as another dataset, as a saved model's scoring refuses it"),
    text("transform").at(&[f("data.transform", "signed-log1p")])
        .help("How every input is transformed: signed-log1p (the PFD paper's sign(x) ln(1 + |x|)), standardize (the signed log1p, then each column less its mean over its standard deviation) or rank-gauss (each column through its quantiles to a standard normal); fitted on the training split, applied to every split, and carried by a saved model and its ONNX graph"),
    text("teacher-model").at(&[f("data.teacher.model", "")])
        .help("A teacher trained elsewhere, for PFD (and GenD or self-distillation where the columns it splits on fit): a LightGBM model (save_model's text, or dump_model()'s JSON) or an XGBoost JSON model (save_model(\"m.json\")), trained on the data files' columns; its scores of the files are the students' soft labels"),
    text("teacher-scores").at(&[f("data.teacher.scores", "")])
        .help("A teacher's scores from files, for PFD: TRAIN[,VALID[,TEST]], one score a line for each document of the training, validation and test files, in their order, or a TREC run (qid Q0 docno rank score tag; docno the line's docid comment, or docN, the document's 0-based place in its query, as predict --run writes): any model computed elsewhere"),
    text("teacher-columns").at(&[f("data.teacher.columns", "auto")])
        .help("How the teacher model's input columns map to the files' features: from-1 (column 0 is feature 1: a model trained on arrays), from-0 (column j is feature j: LightGBM's or XGBoost's own LETOR reader), or auto (by the model's width against the data's, else by the columns its trees split on)"),
    text("folds").at(&[f("data.folds", "")])
        .help("A directory of LETOR folds, for the LETOR protocol: LETOR 4.0's five parts S1.txt..S5.txt (rotated: Fold1 trains on S1+S2+S3, validates on S4, tests on S5, and so on) or Fold1..Fold5 each with train.txt, vali.txt and test.txt (MSLR-WEB), each file LETOR text, gzipped text (.txt.gz) or Parquet (.parquet); the comparison runs on every fold, reports the mean over the folds and tests on the per-query results pooled over the five test folds; {fold} in --teacher-model, --teacher-scores, --reference-model or --reference-scores is the fold's number"),
    text("teacher-absent").at(&[f("data.teacher.absent", "auto")])
        .help("What an entry the files leave out (a LETOR file's zeros) is to the teacher model: zero (a model trained on dense arrays, whose zeros were values), missing (one trained on sparse rows or with NaN there), or auto (what its library's own LETOR reader makes of it: missing for XGBoost, 0 for LightGBM); where the choice changes a split, auto says so"),
    text("reference-model").at(&[f("data.reference.model", "")])
        .help("A model trained elsewhere to measure the students against, as a row of the comparison with a paired test of every method against it (the LightGBM model served today, trained on x alone): a LightGBM or XGBoost model file, as --teacher-model reads them; its scores of the validation and test files are its figures"),
    text("reference-scores").at(&[f("data.reference.scores", "")])
        .help("A reference's scores from files, as --teacher-scores reads them: TRAIN,VALID,TEST in the data files' order (the training file's are not read unless the validation split is held out of it; leave it empty: ,VALID,TEST)"),
    text("reference-columns").at(&[f("data.reference.columns", "auto")])
        .help("How the reference model's input columns map to the files' features: from-1, from-0 or auto, as --teacher-columns"),
    text("reference-absent").at(&[f("data.reference.absent", "auto")])
        .help("What an entry the files leave out is to the reference model: zero, missing or auto, as --teacher-absent"),
    text("training-labels").at(&[f("data.labels", "gumbel")])
        .help("The training label of graded data: gumbel (the PFD paper's protocol: y = 1[grade + Gumbel noise > tau_target]) or grades (y = the grade, as LightGBM, allRank and TF-Ranking train: RankNet on pairs of different grades, LambdaRank and softmax with gains 2^y - 1, NDCG on the grades; tau_target and t are not used)"),
    text("log-labels").at(&[f("data.log_labels", "conversion")])
        .help("With --privileged logs: y is the conversion (conversion), the Gumbel labelling of the grade (gumbel), or the click (click: y = 1[clicked at least once], and z the impressions and mean displayed position, which do not follow from the clicks)"),
    real("tau-priv", (-1e6, 1e6), CLOSED, "a threshold on the grade scale").setup_only()
        .help("The threshold of the discriminative z (--privileged discriminative:TAU_PRIV)"),
    whole("label-threshold", 1, 31, "a LETOR grade")
        .at(&[fp("objectives.data.files.threshold", "1", "2"), f("objectives.data.mq2008.threshold", "1")])
        .help("Objectives on LETOR files: a document is positive when its grade is at least this"),
    // Simulated logs.
    whole("sessions", 1, 1_000_000, "impressions of each query").at(&[f("data.logs.sessions", "100")])
        .help("Impressions of every query: more sessions, more clicks and conversions (a denser y)"),
    whole("shown", 1, 100_000, "documents shown per impression").at(&[f("data.logs.shown", "10")])
        .help("Documents shown per impression"),
    text("click-model").at(&[f("data.logs.click_model", "pbm")])
        .help("pbm: examination (1/rank)^eta times attractiveness; cascade: click the first attractive document and stop; dcm: as cascade, going on after a click with --continue-after-click"),
    real("position-bias", (0.0, 100.0), CLOSED, "an exponent on 1 / rank").at(&[f("data.logs.position_bias", "1")])
        .help("PBM's eta, the position bias (0: none)"),
    real("continue-after-click", (0.0, 1.0), CLOSED, PROBABILITY).at(&[f("data.logs.continue_after_click", "0.5")])
        .help("DCM's lambda: probability of scanning on after a click"),
    real("click-noise", (0.0, 1.0), CLOSED, PROBABILITY).at(&[f("data.logs.click_noise", "0.1")])
        .help("Attractiveness of a grade-0 document (eps in eps + (1 - eps)(2^r - 1)/(2^r_max - 1))"),
    real("shuffle", (0.0, 1000.0), CLOSED, "a scale on standardised scores").at(&[f("data.logs.shuffle", "0.5")])
        .help("Scale of the Gumbel noise on the standardised logging scores at each impression"),
    text("logging-ranker").at(&[f("data.logs.logging_ranker", "linear")])
        .help("The ranker whose orderings are logged: linear[:FRACTION] (least squares on the grades of FRACTION of the training queries, default 0.1), feature:N or random"),
    real("logging-ranker fraction", (0.0, 1.0), OPEN_BELOW, "a share of the training queries").setup_only()
        .at(&[f("data.logs.logging_ranker.fraction", "0.1")])
        .help("The share of the training queries the linear logging ranker is fitted on (--logging-ranker linear:FRACTION)"),
    real("conversion-rate", (0.0, 1.0), OPEN_BELOW, "a probability; at 0 no click converts").at(&[f("data.logs.conversion_rate", "0.03")])
        .help("Share of the training file's clicks that convert (conversions are likelier for higher grades)"),
    real("dwell-seconds", (0.0, 86_400.0), OPEN_BELOW, "seconds, a day at most").at(&[f("data.logs.dwell_seconds", "30")])
        .help("Median dwell time of a click on a grade-0 document, seconds (x1.65 per grade)"),
    whole("log-seed", 0, u64::MAX, SEED).at(&[f("data.logs.seed", "0")])
        .help("Seed of the simulated sessions"),
    // Training.
    text("methods").at(&[f("methods", "no-distillation,self-distillation,gend,pfd")])
        .help("Methods to compare, comma-separated"),
    text("objectives").at(&[f("objectives.objectives", "logloss,auc-pr,recall-at-precision:0.8,precision-at-recall:0.9,tpr-at-fpr:0.05,roc-auc,f-beta:1")])
        .help("Objectives, comma-separated: logloss, auc-pr (auc-pr:K for K anchors, default 20), recall-at-precision:ALPHA, precision-at-recall:BETA, tpr-at-fpr:R, roc-auc, f-beta:BETA"),
    whole("seeds", 1, 10_000, "each seed trains every method once more").at(&[f("seeds", "5"), fp("objectives.seeds", "5", "3")])
        .help("Seeds (initial weights and batch order) per method or objective"),
    whole("first-seed", 0, u64::MAX, SEED).at(&[f("first_seed", "0"), f("objectives.first_seed", "0")])
        .help("The first of the seeds; the others follow it"),
    whole("seed", 0, u64::MAX, SEED),
    text("loss").at(&[f("loss", "ranknet")])
        .help("The loss of students and teachers"),
    text("surrogate").at(&[f("objectives.surrogate", "log")])
        .help("The surrogate of the 0-1 loss in the bounds: log (log-loss / ln 2) or hinge"),
    real("alpha", (0.0, 1.0), OPEN, "it weighs the data loss against the teacher loss").at(&[f("alpha", "0.5")])
        .help("Weight of the data loss in PFD Eq. 1, in (0, 1)"),
    whole("epochs", 1, 100_000, "passes over the training data").at(&[fp("epochs", "20", "12"), f("objectives.epochs", "30")])
        .help("Most passes over the training data per model; the epoch with the best validation figure is kept"),
    whole("patience", 1, 100_000, "epochs without a better validation figure").at(&[f("patience", "3"), f("objectives.patience", "5")])
        .help("Early stopping: stop after this many epochs without a better validation NDCG@8 (AUC-PR for the objectives)"),
    real("lr", (0.0, 10.0), OPEN_BELOW, "Adam's step size").at(&[f("lr", "0.001"), f("objectives.lr", "0.001")])
        .help("Adam's learning rate"),
    real("weight-decay", (0.0, 1000.0), CLOSED, "an L2 penalty's weight; larger holds every weight at 0").at(&[f("weight_decay", "0")])
        .help("L2 weight decay: this times each weight is added to its gradient before Adam's step (0: none)"),
    text("lr-schedule").at(&[f("lr_schedule", "constant")])
        .help("How the learning rate moves over the epochs: constant, or cosine (from --lr at the first epoch towards 0 after the last)"),
    real("input-noise", (0.0, 100.0), CLOSED, "a standard deviation; the inputs after --transform standardize or rank-gauss have unit spread").at(&[f("input_noise", "0")])
        .help("Standard deviation of Gaussian noise added to every training input at every step (data augmentation; 0: none); drawn from the model's seed, the same on both engines"),
    real("dropout", (0.0, 1.0), OPEN_ABOVE, "a probability below 1; at 1 every hidden unit is zeroed").at(&[f("dropout", "0")])
        .help("Dropout on the hidden layers in training: each hidden unit of each document is zeroed with this probability and the others scaled by 1 / (1 - p) (0: none); its masks come from the model's seed and are the same on both engines; scoring uses every unit"),
    text("norm").at(&[f("norm", "none")])
        .help("Normalisation of the hidden layers: none, or layer (layer normalisation of each hidden layer's pre-activations before its ReLU, Ba et al. 2016: each document's units centred and scaled to unit variance, then a gain and a shift per unit, learnt); for students and teachers alike, kept in the saved model and its ONNX graph"),
    whole("attention-heads", 0, 64, "heads, each a softmax over every pair of a query's documents").at(&[f("attention_heads", "0")])
        .help("The model family: 0 for the MLP, which scores each document alone; H for the listwise family (DASALC, Qin et al. 2021), whose last hidden layer attends with H heads over the documents of the same query and is crossed with what it gathers (h * (1 + a)) before the output layer. H must divide the last hidden width. A listwise model trains, scores and serves by whole queries (its ONNX graph takes one query's documents); for students and teachers alike"),
    whole("teacher-attention-heads", 0, 64, "heads, each a softmax over every pair of a query's documents").at(&[f("teacher_attention_heads", "")])
        .help("The teachers' model family, as --attention-heads (default: the student's): 0 for the MLP, H for the listwise family; H must divide the teachers' last hidden width (--teacher-widths, else --widths). The Ranking Distillation teacher's last width is rounded up to a multiple of H"),
    whole("ensemble", 1, 64, "members, each a whole training and a whole forward pass").at(&[f("ensemble", "1")])
        .help("Members of each student: k models of the same widths, the first from the run's seed and the others from seeds drawn from it, each kept at its own best validation epoch; the student's score is their mean (Qin et al. 2021's ensembles); training, scoring and the ONNX graph cost k times one model's; teachers stay one model"),
    text("objective").at(&[f("objective", "")])
        .help("The students' data loss: the --loss (default), or a global objective on the documents of positive query groups labelled by y: logloss, auc-pr, recall-at-precision:0.8, precision-at-recall:0.9, tpr-at-fpr:0.05, roc-auc, f-beta:1"),
    real("dual-rate-factor", (0.0, 1e9), CLOSED, "a factor on the learning rate")
        .at(&[f("dual_rate_factor", "1000"), f("objectives.dual_rate_factor", "1000")])
        .help("The objectives' multipliers ascend at this factor times the learning rate (the reference's 0.1 barely moves them under Adam)"),
    real("initial-lambda", (0.0, 1e6), CLOSED, "a Lagrange multiplier").at(&[f("objectives.initial_lambda", "1")])
        .help("Every multiplier's starting value"),
    whole("widths", 1, 1_000_000, SIZE).at(&[fp("widths", "256,256,128,64", "64,32"), f("objectives.widths", "64,32")]).or_empty(NO_HIDDEN_LAYER)
        .help("Hidden layer widths, comma-separated, or none for no hidden layer: a linear model, as in the PFD paper's section 5 (a comparison's teachers too, unless --teacher-widths)"),
    whole("teacher-widths", 1, 1_000_000, SIZE).at(&[f("teacher_widths", "")]).or_empty(NO_HIDDEN_LAYER)
        .help("Hidden widths of the teachers, or none for linear teachers (default: the student's --widths)"),
    whole("batch-docs", 1, 10_000_000, SIZE).at(&[f("batch_docs", "512")])
        .help("Documents per mini-batch (whole query groups)"),
    whole("batch-size", 1, 10_000_000, SIZE).at(&[f("objectives.batch_size", "128")])
        .help("Examples per mini-batch"),
    real("teacher-temperature", (1e-6, 1e6), CLOSED, "a temperature; the teachers' logits are divided by it, and below 1e-6 a logit of the teachers' scale leaves f32").at(&[f("teacher_temperature", "1")])
        .help("The teachers' logits are divided by this before they become soft labels (above 1: softer targets, below 1: sharper); a teacher trained elsewhere (LightGBM's raw scores) may need it"),
    whole("teachers", 2, 1024, "multi-teacher PFD needs two teachers or more; one teacher on x and z is the method pfd").at(&[f("teachers", "2")])
        .help("Multi-teacher PFD: number of teachers, each seeing x and one share of z"),
    text("idcg-zero").at(&[f("idcg_zero", "exclude")])
        .help("NDCG of groups with IDCG = 0: exclude them from the mean (default), count 0 (zero), or count 1 (one)"),
    text("backend").at(&[f("backend", "auto"), f("objectives.backend", "auto")])
        .help("Where to train or score: auto (a hardware GPU if any, else the CPU engine), gpu or cpu; every method, loss and objective runs on either engine"),
    whole("jobs", 1, 1024, "jobs side by side").at(&[f("jobs", "")])
        .help("Jobs (a method at a seed, or the methods of a seed that share a teacher) trained side by side on the CPU engine: the CLI's threads, the page's workers (default: one per core); the results are the same for any number"),
    // Ranking Distillation.
    whole("rd-k", 1, 100_000, "documents per group").at(&[f("rd.k", "10")])
        .help("Ranking Distillation: top-K unlabeled documents per group"),
    real("rd-lambda", (0.0, 1e6), OPEN_BELOW, "a temperature; larger overflows the weights").at(&[f("rd.lambda", "1")])
        .help("Ranking Distillation: position-importance temperature lambda"),
    real("rd-mu", (0.0, 1e6), CLOSED, "a sharpness; larger overflows the weights").at(&[f("rd.mu", "0.1")])
        .help("Ranking Distillation: ranking-discrepancy sharpness mu"),
    real("rd-alpha", (0.0, 1000.0), OPEN_BELOW, "a loss weight; larger diverges").at(&[f("rd.alpha_rd", "1")])
        .help("Ranking Distillation: weight alpha_RD of L_D"),
    text("rd-weighting").at(&[f("rd.weighting", "hybrid")])
        .help("Ranking Distillation weights: equal, position, discrepancy or hybrid"),
    whole("rd hybrid_epochs", 0, 100_000, "epochs").setup_only().at(&[f("rd.hybrid_epochs", "2")])
        .help("Ranking Distillation: epochs of position weights alone before the hybrid weighting"),
    real("rd-teacher-factor", (1.0, 1000.0), CLOSED, "the teacher's size over the student's").at(&[f("rd_teacher_factor", "2")])
        .help("Ranking Distillation: the teacher has about this many times the student's parameters"),
    // The global objectives' synthetic task.
    whole("features", 1, 100_000, SIZE).at(&[f("objectives.data.synthetic.features", "20")])
        .help("Synthetic task: features"),
    whole("train-examples", 1, 100_000_000, SIZE).at(&[f("objectives.data.synthetic.train", "20000")])
        .help("Synthetic task: training examples"),
    whole("valid-examples", 1, 100_000_000, SIZE).at(&[f("objectives.data.synthetic.valid", "10000")])
        .help("Synthetic task: validation examples"),
    whole("test-examples", 1, 100_000_000, SIZE).at(&[f("objectives.data.synthetic.test", "20000")])
        .help("Synthetic task: test examples"),
    real("positive-rate", (0.0, 1.0), OPEN, "a share of the examples").at(&[f("objectives.data.synthetic.positive_rate", "0.03")])
        .help("Synthetic task: share of positives"),
    real("at-precision", (0.0, 1.0), OPEN, "a precision").at(&[f("objectives.at_precision", "")])
        .help("The precision of the reported recall-at-precision metric (default: the first recall-at-precision objective's target, else 0.8)"),
    real("at-recall", (0.0, 1.0), OPEN, "a recall").at(&[f("objectives.at_recall", "")])
        .help("The recall of the reported precision-at-recall metric (default: the first precision-at-recall objective's target, else 0.9)"),
    // Sweeps: each value is checked again as the swept setting.
    real("values", (-1e9, 1e9), CLOSED, "each value is then checked as the setting it sweeps"),
    // Benchmarks.
    whole("docs-per-group", 1, 100_000, SIZE),
    whole("groups-per-batch", 1, 100_000, SIZE),
    whole("steps", 1, 1_000_000, "timed steps"),
    whole("warmup", 0, 1_000_000, "untimed steps"),
    whole("repeat", 1, 1_000_000, "timed repetitions"),
];

/// The prefix of the fields of the global objectives' setup ([`crate::setup::ObjectivesSetup`])
/// in the table: `objectives.batch_size` is its `batch_size`.
pub const OBJECTIVES: &str = "objectives.";

/// Every flag that fills a field of a comparison's `setup.json`, with the field, in the table's
/// order (the objectives' setup's fields aside).
pub fn flag_fields() -> impl Iterator<Item = (&'static str, &'static str)> {
    SETTINGS
        .iter()
        .filter(|s| s.flag)
        .flat_map(|s| s.fields.iter().map(move |field| (s.name, field.path)))
        .filter(|(_, field)| !field.starts_with(OBJECTIVES))
}

/// The field of the global objectives' section that a flag fills, as the section spells it
/// (`--at-precision` -> `at_precision`, `--train-examples` -> `data.synthetic.train`): a
/// message in the words of a door that takes the section alone (Python's `objectives`).
pub fn objectives_field(flag: &str) -> Option<String> {
    SETTINGS
        .iter()
        .filter(|s| s.flag && s.name == flag)
        .flat_map(|s| s.fields.iter())
        .find_map(|field| field.path.strip_prefix(OBJECTIVES).map(str::to_string))
}

/// The row of a flag that fills a field of a comparison's setup, and the field.
pub fn comparison_field(flag: &str) -> Option<(&'static Setting, &'static str)> {
    let (_, path) = flag_fields().find(|(name, _)| *name == flag)?;
    Some((setting_of_field(path)?, path))
}

/// A library message in the words of a door without flags (Python, the page): a flag beside the
/// field it fills (`setup field epochs (--epochs) = 0`, `tau_target 2.7 (--tau-target 2.7)`) is
/// left out, since the field says it; a flag alone becomes its setting's field (`--tau-target` ->
/// `tau_target`, `--sessions` -> `logs.sessions`), or what `other` calls it (the data's files);
/// a flag neither knows stays as it is.
pub fn flags_in_words(message: &str, other: &dyn Fn(&str) -> Option<String>) -> String {
    in_words(message, &|flag: &str| {
        flag_fields()
            .find(|(name, _)| *name == flag)
            .map(|(_, path)| path.strip_prefix("data.").unwrap_or(path).to_string())
            .or_else(|| other(flag))
    })
}

/// [`flags_in_words`] for a setup document the CLI runs (`compare --setup FILE`): a flag is its
/// field's whole path in the document (`--tau-target` -> `data.tau_target`, `--teacher-scores`
/// -> `data.teacher.scores`), or what `other` calls it (the data's files).
pub fn flags_in_document_words(message: &str, other: &dyn Fn(&str) -> Option<String>) -> String {
    in_words(message, &|flag: &str| {
        flag_fields()
            .find(|(name, _)| *name == flag)
            .map(|(_, path)| path.to_string())
            .or_else(|| other(flag))
    })
}

/// [`flags_in_words`] for a door of the global objectives' section: a flag is the section's
/// field (`--noise` -> `data.synthetic.noise`) where it fills one, or what `files` calls it
/// (`--test-query` -> `data.files.test_query`), each under `section` (`objectives.` in a whole
/// setup document, as `objectives` writes it; empty for the section alone), else as
/// [`flags_in_words`] says it.
pub fn flags_in_objectives_words(
    message: &str,
    section: &str,
    files: &dyn Fn(&str) -> Option<String>,
) -> String {
    in_words(message, &|flag: &str| {
        objectives_field(flag)
            .or_else(|| files(flag))
            .map(|field| format!("{section}{field}"))
            .or_else(|| {
                flag_fields()
                    .find(|(name, _)| *name == flag)
                    .map(|(_, path)| path.strip_prefix("data.").unwrap_or(path).to_string())
            })
    })
}

/// A message with each flag as `word` says it ([`flags_in_words`]).
fn in_words(message: &str, word: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        let end = rest[at + 2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(rest.len(), |n| at + 2 + n);
        let (before, flag, after) = (&rest[..at], &rest[at + 2..end], &rest[end..]);
        // The last few words before the flag, cut on a character boundary.
        let recent = before
            .char_indices()
            .rev()
            .nth(40)
            .map_or(before, |(i, _)| &before[i..]);
        match (word(flag), after.find(')')) {
            // `(--flag)` or `(--flag VALUE)` right after what it names (the word for it, or any
            // field it fills: a whole setup's `epochs` beside its objectives' section's): that
            // says it already.
            (Some(w), Some(close))
                if before.ends_with(" (")
                    && (recent.contains(&w) || names_a_field(flag, before)) =>
            {
                out.push_str(&before[..before.len() - 2]);
                rest = &after[close + 1..];
            }
            (Some(w), _) => {
                out.push_str(before);
                out.push_str(&w);
                rest = after;
            }
            (None, _) => {
                out.push_str(&rest[..end]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the word right before ` (` at the end of `before` (`epochs` in `setup field epochs
/// (`), or the word before that and its value (`allow_missing_features` in
/// `allow_missing_features true (`), is a field the flag `flag` fills, as a setup document
/// (`data.logs.sessions`, `objectives.epochs`) or a message (`logs.sessions`) names it.
fn names_a_field(flag: &str, before: &str) -> bool {
    let Some(said) = before.strip_suffix(" (") else {
        return false;
    };
    let mut words = said.rsplit(' ').take(2);
    let named = |word: &str| {
        SETTINGS
            .iter()
            .filter(|s| s.flag && s.name == flag)
            .flat_map(|s| s.fields.iter())
            .any(|f| word == f.path || Some(word) == f.path.strip_prefix("data."))
    };
    words.any(named)
}

/// The row of a numeric setting, by its flag's name.
pub fn bound(name: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.name == name && s.range.is_some())
}

/// The row of a numeric setting that fills a `setup.json` field (`data.logs.sessions`; an
/// array's elements share the array's path).
pub fn bound_of_field(path: &str) -> Option<&'static Setting> {
    setting_of_field(path).filter(|s| s.range.is_some())
}

/// The row that fills a `setup.json` field, and the field.
pub fn field(path: &str) -> Option<(&'static Setting, &'static Field)> {
    SETTINGS.iter().find_map(|s| {
        s.fields
            .iter()
            .find(|f| f.path == path)
            .map(|field| (s, field))
    })
}

/// The row that fills a `setup.json` field.
pub fn setting_of_field(path: &str) -> Option<&'static Setting> {
    field(path).map(|(s, _)| s)
}

/// The default of a `setup.json` field as the CLI spells it (`256,256,128,64`; empty when the
/// library decides by the data). A path without a row is a programming error: every caller names
/// a field of the table, and every test that builds a default setup would fail.
pub fn default_text(path: &str) -> &'static str {
    match field(path) {
        Some((_, field)) => field.default,
        None => panic!("no row of the table of settings fills {path}"),
    }
}

/// The default of a `setup.json` field as the field's type: a number, `true` or `false`, a name
/// (`ranknet`), a list (`256,256,128,64`, `gend,pfd`) or nothing (None, for an empty default).
pub fn default_of<T: serde::de::DeserializeOwned>(path: &str) -> T {
    let value = default_json(path)
        .unwrap_or_else(|| panic!("no row of the table of settings fills {path}"));
    read_section(value, path).unwrap_or_else(|e| {
        panic!(
            "the table of settings' default for {path}, '{}': {e}",
            default_text(path)
        )
    })
}

/// The table as JSON, for the page's form: every row with its fields (their defaults and the
/// page's starting values), its range and its help.
pub fn table_json() -> serde_json::Value {
    let rows = SETTINGS
        .iter()
        .map(|s| {
            let fields: Vec<serde_json::Value> = s
                .fields
                .iter()
                .map(|f| serde_json::json!({"path": f.path, "default": f.default, "page": f.page}))
                .collect();
            let range = s.range.map(|r| {
                serde_json::json!({
                    "min": r.min, "max": r.max, "min_open": r.min_open, "max_open": r.max_open,
                    "integer": r.integer, "why": r.why, "text": r.text(),
                })
            });
            serde_json::json!({
                "name": s.name, "flag": s.flag, "fields": fields, "range": range,
                "help": s.help, "empty_list": s.empty_list,
            })
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// Thousands separated: 10,000,000.
fn grouped(v: f64) -> String {
    if v.abs() >= 1e12 || v.fract() != 0.0 {
        return shown(v);
    }
    let digits = format!("{}", v.abs() as u64);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

impl Range {
    pub fn contains(&self, v: f64) -> bool {
        let above = if self.min_open {
            v > self.min
        } else {
            v >= self.min
        };
        let below = if self.max_open {
            v < self.max
        } else {
            v <= self.max
        };
        above && below && (!self.integer || v.fract() == 0.0) && !self.below_f32(v)
    }

    /// Whether `v` is above a range's open 0 and yet 0 to the f32 arithmetic training runs in
    /// (or subnormal there): `--lr 1e-46` would train nothing.
    fn below_f32(&self, v: f64) -> bool {
        !self.integer && self.min_open && self.min == 0.0 && v > 0.0 && v < f32::MIN_POSITIVE as f64
    }

    /// Why `v` is refused: what was expected, and for a value f32 cannot hold, that first.
    pub fn refusal(&self, v: f64) -> String {
        if self.below_f32(v) {
            format!(
                "below f32's smallest normal number ({:e}), the precision training computes in: expected {}",
                f32::MIN_POSITIVE,
                self.expected()
            )
        } else {
            format!("expected {}", self.expected())
        }
    }

    /// `1..=10,000` or `(0, 1]`.
    pub fn text(&self) -> String {
        if self.integer {
            if self.max == u64::MAX as f64 {
                return format!("{}..={}", grouped(self.min), u64::MAX);
            }
            return format!("{}..={}", grouped(self.min), grouped(self.max));
        }
        format!(
            "{}{}, {}{}",
            if self.min_open { '(' } else { '[' },
            grouped(self.min),
            grouped(self.max),
            if self.max_open { ')' } else { ']' }
        )
    }

    /// What a value must be: "a whole number in 1..=10,000 (each seed trains ...)".
    pub fn expected(&self) -> String {
        let kind = if self.integer {
            "a whole number"
        } else {
            "a finite number"
        };
        format!("{kind} in {} ({})", self.text(), self.why)
    }
}

impl Setting {
    /// The range of a numeric setting. Only numeric rows reach the callers ([`bound`],
    /// [`bound_of_field`]); a row without one accepts nothing.
    fn numbers(&self) -> Range {
        self.range.unwrap_or(Range {
            min: f64::NAN,
            max: f64::NAN,
            min_open: false,
            max_open: false,
            integer: false,
            why: "not a number",
        })
    }

    pub fn contains(&self, v: f64) -> bool {
        self.numbers().contains(v)
    }

    /// Why `v` is refused ([`Range::refusal`]).
    pub fn refusal(&self, v: f64) -> String {
        self.numbers().refusal(v)
    }

    /// What a value must be: "a whole number in 1..=10,000 (each seed trains ...)".
    pub fn expected(&self) -> String {
        self.numbers().expected()
    }

    /// A value as a flag gives it (`0.3`, `pfd`, `top:30%`), as its field's JSON: a number
    /// checked against the range, `true` or `false` for a switch (a row whose default is one of
    /// them), or the text (`--teacher-model true` names a file `true`).
    pub fn json_value(&self, text: &str) -> std::result::Result<serde_json::Value, String> {
        let text = text.trim();
        if let Some(word) = self.empty_list {
            // A list in one value: `64,32`, or the word for none.
            if text == word {
                return Ok(serde_json::Value::Array(Vec::new()));
            }
            let item = Setting {
                empty_list: None,
                ..*self
            };
            return text
                .split(',')
                .map(|t| item.json_value(t))
                .collect::<std::result::Result<Vec<_>, String>>()
                .map(serde_json::Value::Array)
                .map_err(|e| format!("{e}, or {word} for no hidden layer"));
        }
        match self.range {
            Some(range) if range.integer => {
                let whole: u64 = self.parse(text)?;
                Ok(serde_json::Value::from(whole))
            }
            Some(_) => {
                let real: f64 = self.parse(text)?;
                Ok(serde_json::Value::from(real))
            }
            None => {
                let switch = self
                    .fields
                    .iter()
                    .any(|f| matches!(f.default, "true" | "false"));
                Ok(match text {
                    "true" if switch => serde_json::Value::Bool(true),
                    "false" if switch => serde_json::Value::Bool(false),
                    _ => serde_json::Value::String(text.to_string()),
                })
            }
        }
    }

    /// How a message names the setting: `--seeds` for a flag, the field otherwise.
    pub fn spelled(&self) -> String {
        if self.flag {
            format!("--{}", self.name)
        } else {
            self.name.to_string()
        }
    }

    /// Checks a value, with a message naming the setting.
    pub fn check(&self, v: f64) -> Result<()> {
        if self.contains(v) {
            return Ok(());
        }
        Err(Error::Config(format!(
            "{} = {}: {}",
            self.spelled(),
            shown(v),
            self.numbers().refusal(v)
        )))
    }

    /// Parses a command-line value as `T` and checks it, for the CLI's value parsers: the
    /// message says what was expected (clap names the flag beside it).
    ///
    /// A whole number reads in any notation a number has (`1e3`, `1000.0`); a number that is
    /// not whole is called so.
    pub fn parse<T: Number>(&self, text: &str) -> std::result::Result<T, String> {
        let text = text.trim();
        let expected = || format!("expected {}", self.expected());
        let value = match text.parse::<T>() {
            Ok(value) => value,
            Err(_) => {
                let Some(number) = text.parse::<f64>().ok().filter(|x| x.is_finite()) else {
                    return Err(expected());
                };
                if self.numbers().integer && number.fract() != 0.0 {
                    return Err(format!("not a whole number: {}", expected()));
                }
                match T::from_whole(number).filter(|v| self.contains(v.as_f64())) {
                    Some(value) => value,
                    None => return Err(expected()),
                }
            }
        };
        if self.contains(value.as_f64()) {
            Ok(value)
        } else {
            Err(self.numbers().refusal(value.as_f64()))
        }
    }
}

/// The numeric types of settings.
pub trait Number: std::str::FromStr + Copy + Send + Sync + 'static {
    fn as_f64(self) -> f64;
    /// A finite number written in another notation (`1e3` for a count) as `Self`, where
    /// `Self` holds it exactly.
    fn from_whole(x: f64) -> Option<Self>;
}

macro_rules! whole_numbers {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn from_whole(x: f64) -> Option<Self> {
                // `<$t>::MAX as f64` rounds up for the wide types: the bound is exclusive.
                (x.fract() == 0.0 && x >= 0.0 && x < <$t>::MAX as f64 + 1.0).then(|| x as $t)
            }
        }
    )*};
}
whole_numbers!(usize, u64, u32, u8);

macro_rules! real_numbers {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn from_whole(x: f64) -> Option<Self> {
                Some(x as $t)
            }
        }
    )*};
}
real_numbers!(f64, f32);

/// A JSON number that a count or seed field reads: an integer, or a float that is whole and
/// below 2^64 (`1e3`, `1000.0`), as [`Setting::parse`] reads a flag's value.
pub(crate) fn whole_json(value: &serde_json::Value) -> Option<u64> {
    let serde_json::Value::Number(n) = value else {
        return None;
    };
    n.as_u64().or_else(|| n.as_f64().and_then(u64::from_whole))
}

/// Checks a setting by name, with a message naming it; a name without a row is a programming
/// error reported as such.
pub fn check(name: &str, v: f64) -> Result<()> {
    match bound(name) {
        Some(b) => b.check(v),
        None => Err(Error::Config(format!("no bounds are known for '{name}'"))),
    }
}

/// The numeric fields of a setup (given as its JSON), each checked against its row: the first
/// out of range is refused, naming the field, its flag and the range. Fields without a row are
/// left alone here (`tests/flags.rs` makes sure there are none).
pub fn check_setup_fields(setup: &serde_json::Value) -> Result<()> {
    check_fields(setup, "")
}

/// [`check_setup_fields`] for the global objectives' setup: its fields' rows are under
/// [`OBJECTIVES`]; a refusal names the field as its JSON spells it.
pub fn check_objectives_fields(setup: &serde_json::Value) -> Result<()> {
    check_fields(setup, OBJECTIVES)
}

/// Checks every number of `setup` against the row of its path, the rows' paths starting with
/// `prefix`.
fn check_fields(setup: &serde_json::Value, prefix: &str) -> Result<()> {
    let mut numbers = Vec::new();
    numeric_fields(setup, String::new(), &mut numbers);
    for (path, v) in numbers {
        if let Some(b) = bound_of_field(&format!("{prefix}{path}")) {
            if !b.contains(v) {
                let flag = if b.flag {
                    format!(" ({})", b.spelled())
                } else {
                    String::new()
                };
                return Err(Error::Config(format!(
                    "setup field {path}{flag} = {}: {}",
                    shown(v),
                    b.numbers().refusal(v)
                )));
            }
        }
    }
    Ok(())
}

/// Every number in a JSON value, with its path (`rd.k`; array elements take the array's path).
pub fn numeric_fields(value: &serde_json::Value, path: String, out: &mut Vec<(String, f64)>) {
    match value {
        serde_json::Value::Number(n) => out.push((path, n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::Array(items) => {
            for item in items {
                numeric_fields(item, path.clone(), out);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, v) in fields {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                numeric_fields(v, inner, out);
            }
        }
        _ => {}
    }
}

/// The table's default of a field as JSON ([`default_of`]'s reading of its text), or None when
/// no row fills it.
pub(crate) fn default_json(path: &str) -> Option<serde_json::Value> {
    let (_, field) = field(path)?;
    let item = |t: &str| {
        serde_json::from_str::<serde_json::Value>(t)
            .ok()
            .filter(|v| v.is_number() || v.is_boolean())
            .unwrap_or_else(|| serde_json::Value::String(t.to_string()))
    };
    Some(match field.default {
        "" => serde_json::Value::Null,
        text if text.contains(',') => serde_json::Value::Array(text.split(',').map(item).collect()),
        text => item(text),
    })
}

/// Whether rows fill fields below `path` (`data.logs` has `data.logs.sessions`, ...): the field
/// at `path` is then a section, whose own fields the table fills.
fn is_section(path: &str) -> bool {
    let below = format!("{path}.");
    SETTINGS
        .iter()
        .any(|s| s.fields.iter().any(|f| f.path.starts_with(&below)))
}

/// Reads `T` from `value`, the section at `path` of a setup (`""` for a whole one, `data.logs`,
/// `objectives`): every field the value leaves out takes its row's default, and every section it
/// leaves out is read as an empty one, so that its own fields take theirs. The table is the
/// one place a default is written: the types' `Default` read it through here ([`defaults`]).
pub fn read_section<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    path: &str,
) -> std::result::Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(Filled {
        value,
        path: path.to_string(),
    })
}

/// Reads `T`'s fields by their names from a whole setup's JSON (or one of its sections), none
/// filled in: a field `T` reads that the setup lacks is an error, so that a setup field renamed
/// cannot leave an engine's setting at its default without a word. Fields the setup has and `T`
/// does not are left alone.
pub fn read_fields<T: serde::de::DeserializeOwned>(setup: &serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(setup.clone())
        .map_err(|e| Error::Config(format!("the setup's {}: {}", e.path(), e.inner())))
}

/// The table's defaults of the section at `path`, as `T` ([`read_section`] of an empty one).
pub fn defaults<T: serde::de::DeserializeOwned>(path: &str) -> T {
    read_section(serde_json::Value::Object(Default::default()), path)
        .unwrap_or_else(|e| panic!("the table of settings' defaults of '{path}': {e}"))
}

/// A JSON value read as the section at `path`, each field it leaves out filled from the table
/// ([`read_section`]). Everything but structs and enums reads as the value itself; a single
/// value where a list is expected reads as a list of one (`--widths 64`).
struct Filled {
    value: serde_json::Value,
    path: String,
}

/// The path of field `key` of the section at `path`.
fn below(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The fields of a section, each read as the section below it.
struct FilledFields {
    fields: serde_json::map::IntoIter,
    next: Option<Filled>,
    path: String,
}

impl<'de> serde::de::MapAccess<'de> for FilledFields {
    type Error = serde_json::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> std::result::Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.fields.next() else {
            return Ok(None);
        };
        let path = below(&self.path, &key);
        self.next = Some(Filled { value, path });
        seed.deserialize(serde_json::Value::String(key)).map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        match self.next.take() {
            Some(value) => seed.deserialize(value),
            None => Err(serde::de::Error::custom("a value without its key")),
        }
    }
}

/// The items of a list, each read at the list's path.
struct FilledItems {
    items: std::vec::IntoIter<serde_json::Value>,
    path: String,
}

impl<'de> serde::de::SeqAccess<'de> for FilledItems {
    type Error = serde_json::Error;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> std::result::Result<Option<T::Value>, Self::Error> {
        self.items
            .next()
            .map(|value| {
                seed.deserialize(Filled {
                    value,
                    path: self.path.clone(),
                })
            })
            .transpose()
    }
}

/// A variant of an enum: `"mq2008"`, or `{"synthetic": {...}}` with its contents, which a
/// variant with fields reads as a section (`"synthetic"` alone takes every default).
struct FilledVariant {
    name: String,
    contents: Filled,
    /// Given by its name alone.
    named_alone: bool,
}

impl<'de> serde::de::EnumAccess<'de> for FilledVariant {
    type Error = serde_json::Error;
    type Variant = FilledVariant;

    fn variant_seed<V: serde::de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> std::result::Result<(V::Value, Self::Variant), Self::Error> {
        let name = seed.deserialize(serde_json::Value::String(self.name.clone()))?;
        Ok((name, self))
    }
}

impl<'de> serde::de::VariantAccess<'de> for FilledVariant {
    type Error = serde_json::Error;

    fn unit_variant(self) -> std::result::Result<(), Self::Error> {
        match self.contents.value {
            _ if self.named_alone => Ok(()),
            serde_json::Value::Null => Ok(()),
            // `{"gumbel": 1}`: serde would say `expected unit`.
            other => Err(serde::de::Error::custom(format!(
                "{}: {} takes no settings; give it by its name alone, \"{}\"",
                crate::error::json_kind(&other),
                crate::error::printable(&self.name),
                crate::error::printable(&self.name)
            ))),
        }
    }

    fn newtype_variant_seed<T: serde::de::DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> std::result::Result<T::Value, Self::Error> {
        seed.deserialize(self.contents)
    }

    fn tuple_variant<V: serde::de::Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        serde::Deserializer::deserialize_seq(self.contents, visitor)
    }

    fn struct_variant<V: serde::de::Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        serde::Deserializer::deserialize_struct(self.contents, "", fields, visitor)
    }
}

impl<'de> serde::Deserializer<'de> for Filled {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        match self.value {
            serde_json::Value::Object(fields) => visitor.visit_map(FilledFields {
                fields: fields.into_iter(),
                next: None,
                path: self.path,
            }),
            serde_json::Value::Array(items) => visitor.visit_seq(FilledItems {
                items: items.into_iter(),
                path: self.path,
            }),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        match self.value {
            serde_json::Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        let items = match self.value {
            serde_json::Value::Array(items) => items,
            serde_json::Value::Object(_) | serde_json::Value::Null => {
                return self.value.deserialize_seq(visitor)
            }
            one => vec![one],
        };
        visitor.visit_seq(FilledItems {
            items: items.into_iter(),
            path: self.path,
        })
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        // A section is an object: serde would also read a list of its fields by position, or
        // refuse another value in the words of its Rust type (`expected struct LogOptions`).
        let serde_json::Value::Object(mut given) = self.value else {
            return Err(serde::de::Error::custom(format!(
                "{}, expected a section of settings in braces ({{}} for every default)",
                crate::error::json_kind(&self.value)
            )));
        };
        for field in fields {
            if given.contains_key(*field) {
                continue;
            }
            let path = below(&self.path, field);
            if let Some(default) = default_json(&path) {
                given.insert(field.to_string(), default);
            } else if is_section(&path) {
                given.insert(
                    field.to_string(),
                    serde_json::Value::Object(Default::default()),
                );
            }
        }
        visitor.visit_map(FilledFields {
            fields: given.into_iter(),
            next: None,
            path: self.path,
        })
    }

    fn deserialize_enum<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        let (variant, contents) = match self.value {
            serde_json::Value::String(variant) => (variant, None),
            serde_json::Value::Object(one) if one.len() == 1 => {
                let (variant, contents) = one.into_iter().next().expect("one field");
                (variant, Some(contents))
            }
            // Several keys, or none: the first names the variant, as when read from the text.
            serde_json::Value::Object(many) => {
                use serde::de::Error;
                return match many.keys().next() {
                    Some(first) if !variants.contains(&first.as_str()) => {
                        Err(serde_json::Error::unknown_variant(first, variants))
                    }
                    _ => Err(serde_json::Error::custom(format!(
                        "a section of {} keys{}, expected one of `{}` in quotes, or a section of one of them alone holding its settings",
                        many.len(),
                        match many.len() {
                            0 => String::new(),
                            _ => format!(
                                " ({})",
                                many.keys().map(|k| crate::error::printable(k)).collect::<Vec<_>>().join(", ")
                            ),
                        },
                        variants.join("`, `")
                    ))),
                };
            }
            // Another value: the names it may take, and a section only where some choice has
            // settings of its own (a source's, not a transform's).
            other => {
                let with_settings = variants
                    .iter()
                    .any(|variant| is_section(&below(&self.path, variant)));
                return Err(serde::de::Error::custom(format!(
                    "{}, expected one of `{}` in quotes{}",
                    crate::error::json_kind(&other),
                    variants.join("`, `"),
                    if with_settings {
                        ", or a section of one of them alone holding its settings"
                    } else {
                        ""
                    }
                )));
            }
        };
        // A variant with fields given by its name alone is an empty section.
        let named_alone = contents.is_none();
        let contents = Filled {
            value: contents.unwrap_or(serde_json::Value::Object(Default::default())),
            path: below(&self.path, &variant),
        };
        visitor.visit_enum(FilledVariant {
            name: variant,
            contents,
            named_alone,
        })
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    // A whole number written as a float (`1e3`, `1000.0`) reads as the count it is.
    fn deserialize_u8<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_u16<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_u32<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_u64<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        match whole_json(&self.value) {
            Some(n) => visitor.visit_u64(n),
            None => self.value.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct map identifier ignored_any
    }
}

/// The settings reference of the docs book (`docs/book/src/reference/settings.md`), generated
/// from [`SETTINGS`]: each setting's CLI flag, its `setup.json` fields with their defaults (and
/// the page's starting value where it starts lighter), its range and its help. Python's keywords
/// are the fields' last names (`data.tau_target` is `tau_target=`).
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Settings reference\n\n\
         Generated from the library's table of settings (`crate/settings.rs`) by `cargo xtask docs`;\n\
         a test fails when this page and the table disagree. Every setting is one row: the CLI's flag\n\
         (`compare`, `sweep` and, for one model's training settings, `train`; `objectives` takes the\n\
         `objectives.` fields), the `setup.json` fields it fills with their defaults, and the Python\n\
         keyword, which is the field's last name (`data.tau_target` is `tau_target=`). An empty\n\
         default means the library decides from the data, as the help says.\n\n\
         | flag | setup.json fields (default) | range | what it does |\n\
         |---|---|---|---|\n",
    );
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    for setting in SETTINGS {
        let flag = if setting.flag {
            format!("`--{}`", setting.name)
        } else {
            "(setup.json only)".to_string()
        };
        let fields: Vec<String> = setting
            .fields
            .iter()
            .map(|f| {
                let default = if f.default.is_empty() {
                    "none"
                } else {
                    f.default
                };
                match f.page {
                    Some(page) => format!("`{}` ({default}; the page starts at {page})", f.path),
                    None => format!("`{}` ({default})", f.path),
                }
            })
            .collect();
        let range = setting.range.map(|r| r.text()).unwrap_or_default();
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            flag,
            cell(&fields.join("<br>")),
            cell(&range),
            cell(setting.help)
        ));
    }
    out
}
