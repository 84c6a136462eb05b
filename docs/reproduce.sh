#!/usr/bin/env bash
# Regenerates every result under docs/results/ (quoted in the README) with the release build.
# About 10 minutes on 2 cores. MQ2008 is read from ../shared/data (see the README for where to get it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin distillrank
B=target/release/distillrank
R=docs/results
F=../shared/data/mq2008/Fold1

$B compare --out $R/synthetic --quiet
$B compare --privileged-strength 0.1 --out $R/synthetic-weak-z --quiet
$B compare --privileged-strength 0.8 --out $R/synthetic-strong-z --quiet
$B compare --methods no-distillation,ranking-distillation --out $R/synthetic-rd --quiet
$B compare --train $F/train.txt --valid $F/vali.txt --test $F/test.txt --tau-target 2.8 --privileged top:10 \
  --methods no-distillation,self-distillation,gend,pfd,multi-teacher-pfd,ranking-distillation --out $R/mq2008 --quiet
$B sweep --param alpha --values 0.1,0.3,0.5,0.7,0.9 --out $R/sweep-alpha --quiet
$B sweep --param tau-target --values 3.0,3.5,4.0,4.5 --out $R/sweep-tau-target --quiet
$B sweep --param tau-priv --methods no-distillation,pfd --values 2.0,2.5,3.0,3.5 --out $R/sweep-tau-priv --quiet
$B objectives --backend cpu --out $R/objectives --quiet
$B objectives --backend cpu --dual-rate-factor 0.1 --out $R/objectives-dual-0.1 --quiet
$B objectives --backend cpu --train $F/train.txt --valid $F/vali.txt --test $F/test.txt --label-threshold 2 \
  --out $R/objectives-mq2008 --quiet

# PFD against self-distillation with 20 seeds: the compact student of the web page's default on four
# draws of the data, two of them with z correlated with x, and the default model.
SMALL="--queries 400 --valid-queries 300 --test-queries 500 --privileged-strength 0.6 --widths 64,32 --epochs 12"
for s in 7 1 2 3; do
  $B compare $SMALL --seeds 20 --synth-seed $s --out $R/pfd-vs-self/compact-draw-$s --quiet
done
for s in 7 1; do
  $B compare $SMALL --seeds 20 --synth-seed $s --privileged-correlation 0.5 --out $R/pfd-vs-self/compact-correlated-draw-$s --quiet
done
$B compare --seeds 20 --out $R/pfd-vs-self/default --quiet
# The conditions under which the PFD paper's section 5 credits z with lowering the student's
# variance: labels nearly a deterministic function of relevance (little noise, t = 8), most of the
# relevance in the hidden factors, and (second run) sparser positives, so more unlabeled groups.
SHARP="--queries 400 --valid-queries 300 --test-queries 500 --widths 64,32 --methods no-distillation,self-distillation,pfd"
SHARP="$SHARP --privileged-strength 0.7 --noise 0.1 --t 8"
$B compare $SHARP --seeds 20 --out $R/pfd-vs-self/sharp-labels --quiet
$B compare ${SHARP/--queries 400/--queries 1000} --tau-target 4.0 --loss rankbce --seeds 20 \
  --out $R/pfd-vs-self/sharp-labels-sparse-rankbce --quiet

# Ranking Distillation with the compact student (10 seeds), where the larger teacher ranks better.
$B compare $SMALL --seeds 10 --methods no-distillation,ranking-distillation --out $R/synthetic-rd-compact --quiet
$B compare $SMALL --seeds 10 --methods no-distillation,ranking-distillation --rd-alpha 0.3 \
  --out $R/synthetic-rd-compact-alpha-0.3 --quiet
