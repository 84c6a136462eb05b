#!/usr/bin/env bash
# Regenerates every result under docs/results/ (quoted in the README) with the release build.
# About an hour on 2 cores (the last seven runs of the student against LightGBM, about 23 minutes of it). MQ2008 and the LightGBM rank example are read from target/data (cargo xtask data).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin distillrank
cargo xtask data >/dev/null
B=target/release/distillrank
R=docs/results
F=target/data/mq2008/Fold1

$B compare --out $R/synthetic --quiet
$B compare --privileged-strength 0.1 --out $R/synthetic-weak-z --quiet
$B compare --privileged-strength 0.8 --out $R/synthetic-strong-z --quiet
$B compare --methods no-distillation,ranking-distillation --out $R/synthetic-rd --quiet
$B compare --train $F/train.txt --valid $F/vali.txt --test $F/test.txt --tau-target 2.8 --privileged top:10 \
  --methods no-distillation,self-distillation,gend,pfd,multi-teacher-pfd,ranking-distillation --out $R/mq2008 --quiet
$B sweep --param alpha --values 0.1,0.3,0.5,0.7,0.9 --out $R/sweep-alpha --quiet
$B sweep --param tau-target --values 3.0,3.5,4.0,4.5 --out $R/sweep-tau-target --quiet
$B sweep --param tau-priv --methods no-distillation,pfd --values 2.0,2.5,3.0,3.5 --out $R/sweep-tau-priv --quiet
$B sweep --param query-spread --values 0,0.5,1.0,1.5 --out $R/sweep-query-spread --quiet
$B objectives --backend cpu --out $R/objectives --quiet
$B objectives --backend cpu --dual-rate-factor 0.1 --out $R/objectives-dual-0.1 --quiet
$B objectives --backend cpu --train $F/train.txt --valid $F/vali.txt --test $F/test.txt --label-threshold 2 \
  --out $R/objectives-mq2008 --quiet

# PFD against self-distillation: the default with 20 seeds, then each ingredient of the default
# data taken back in turn (10 seeds each), then the generator's earlier default.
P="--methods no-distillation,self-distillation,pfd"
$B compare $P --seeds 20 --out $R/pfd-vs-self/default --quiet
$B compare $P --seeds 10 --synth-seed 1 --out $R/pfd-vs-self/draw-1 --quiet
$B compare $P --seeds 10 --t 4 --out $R/pfd-vs-self/noisy-labels --quiet
$B compare $P --seeds 10 --regular 24 --out $R/pfd-vs-self/24-regular-features --quiet
$B compare $P --seeds 10 --query-spread 0 --out $R/pfd-vs-self/no-query-shift --quiet
$B compare $P --seeds 10 --regular 24 --noise 0.5 --t 4 --queries 1000 --query-spread 0 \
  --out $R/pfd-vs-self/earlier-default --quiet

# Ranking Distillation with a compact student (10 seeds).
SMALL="--widths 64,32 --epochs 12"
$B compare $SMALL --seeds 10 --methods no-distillation,ranking-distillation --out $R/synthetic-rd-compact --quiet
$B compare $SMALL --seeds 10 --methods no-distillation,ranking-distillation --rd-alpha 0.3 \
  --out $R/synthetic-rd-compact-alpha-0.3 --quiet

# Simulated interaction logs on real LETOR data: z = impressions, clicks, CTR, mean position,
# dwell; y = conversion. Compares on MQ2008 Fold1 and LightGBM's Yahoo sample (10 seeds), the
# three click models on MQ2008, and sweeps over sessions, position bias and conversion rate.
L=out/logs
Y=target/data/lightgbm_rank
$B data simulate-logs $F/train.txt $F/vali.txt $F/test.txt -o $L/mq2008 --quiet
$B compare --train $L/mq2008/train.txt --valid $L/mq2008/vali.txt --test $L/mq2008/test.txt \
  --privileged logs --seeds 10 --out $R/logs-mq2008 --quiet
$B data simulate-logs $Y/rank.train $Y/rank.test -o $L/yahoo --quiet
$B compare --train $L/yahoo/rank.train --test $L/yahoo/rank.test --privileged logs --seeds 10 \
  --out $R/logs-yahoo --quiet
MQ="--train $F/train.txt --valid $F/vali.txt --test $F/test.txt --privileged logs"
for model in cascade dcm; do
  $B compare $MQ --click-model $model --seeds 10 --out $R/logs-mq2008-$model --quiet
done
$B sweep $MQ --param sessions --values 10,30,100,300,1000 --out $R/sweep-logs-sessions --quiet
$B sweep $MQ --param position-bias --values 0,0.5,1,1.5,2 --out $R/sweep-logs-position-bias --quiet
$B sweep $MQ --param conversion-rate --values 0.01,0.03,0.1,0.3 --out $R/sweep-logs-conversion-rate --quiet
$B sweep --train $Y/rank.train --test $Y/rank.test --privileged logs --param sessions \
  --values 10,30,100,300,1000 --out $R/sweep-logs-sessions-yahoo --quiet
# The same comparison under each loss.
for loss in rankbce softmax lambdarank; do
  $B compare --loss $loss --backend cpu --out $R/synthetic-loss-$loss --quiet
done
# The student against LightGBM on the serving columns: MQ2008's five folds and the rank example,
# with the default settings and those the validation search chose (docs/results/student-vs-lightgbm;
# needs Python with numpy, scikit-learn and lightgbm).
S=$R/student-vs-lightgbm
CHOSEN="--transform rank-gauss --weight-decay 0.03 --teacher-temperature 0.1"
RANK="--train target/data/lightgbm_rank/rank.train --test target/data/lightgbm_rank/rank.test"
if python3 -c "import lightgbm, sklearn" 2>/dev/null; then
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds > $S/mq2008-default.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$CHOSEN" > $S/mq2008-chosen.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank > $S/rank-example-default.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank --student "$CHOSEN" > $S/rank-example-chosen.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$CHOSEN --ensemble 5" > $S/mq2008-chosen-ensemble.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$CHOSEN --norm layer" > $S/mq2008-chosen-norm.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$CHOSEN --ensemble 5 --norm layer" > $S/mq2008-chosen-ensemble-norm.json
  # The student on every column against LightGBM on every column, each dataset's validation winner.
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --every-column \
    --student "--transform rank-gauss --weight-decay 0.03 --ensemble 10 --norm layer --attention-heads 1" > $S/mq2008-every-column-c.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank --every-column \
    --student "--transform rank-gauss --weight-decay 0.03 --ensemble 5" > $S/rank-example-every-column-b.json
  # The README's rows on x: MQ2008's search winners, rows 23 and 34 (ten and twenty students), on
  # both datasets and on every MQ2008 query with a relevant document; and rank-gauss alone on the
  # rank example (the defaults' choice).
  ROW23="$CHOSEN --norm layer --attention-heads 1 --ensemble 10"
  ROW34="$CHOSEN --norm layer --attention-heads 1 --ensemble 20"
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$ROW23" > $S/mq2008-search23-ensemble10.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds --student "$ROW34" > $S/mq2008-search34-ensemble20.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds \
    --student "$ROW23 --min-group-size 1" > $S/mq2008-every-query-row23.json
  python3 bench/letor_folds.py --bin $B --data target/data/mq2008 --out target/folds \
    --student "$ROW34 --min-group-size 1" > $S/mq2008-every-query-row34.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank --student "$ROW23" > $S/rank-example-search23-ensemble10.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank --student "$ROW34" > $S/rank-example-search34-ensemble20.json
  python3 bench/letor_folds.py --bin $B $RANK --out target/rank --student "--transform rank-gauss" > $S/rank-example-rank-gauss.json
fi
# Folders this script does not regenerate, each with what made it (the exact command is in the
# folder's results.json, sweep.json or README.md):
#   clicks-mq2008, clicks-rank-example: `distillrank compare --setup docs/results/NAME/setup.json --out docs/results/NAME`
#   clicks-mq2008-y-click: `distillrank compare --bundled mq2008 --privileged logs --log-labels click --loss softmax ...` (results.json)
#   sweep-clicks-sessions, sweep-clicks-position-bias: `distillrank sweep --bundled mq2008 --privileged logs --param ...` (sweep.json)
#   clicks-mq2008-gbdt, clicks-rank-example-gbdt, clicks-web30k-gbdt: `python3 bench/unbiased_gbdt.py` (LightGBM and XGBoost from PyPI; unbiased_gbdt.json)
#   clicks-web30k, clicks-web30k-seeds, clicks-web30k-towers, clicks-web30k-cpu1, clicks-web30k-wgsl:
#     `distillrank compare --train web30k.txt --privileged logs ...` on `distillrank data synth`'s Web30K-sized file (1.4 GB; hours on 2 cores)
#   teacher-web30k-cpu, teacher-web30k-wgsl, teacher-web30k-x-alone-cpu, teacher-web30k-2-epochs-cpu, teacher-web30k-2-epochs-wgsl:
#     `distillrank compare --train train.txt --valid vali.txt --test test.txt --methods no-distillation,pfd ...` with a LightGBM teacher on the same file
#   gpu-report-h200: `cargo xtask gpu-report` on a machine with an NVIDIA H200 (README.md there)
# The loops above write logs-mq2008-cascade, logs-mq2008-dcm, synthetic-loss-rankbce,
# synthetic-loss-softmax and synthetic-loss-lambdarank.

# Every method, and an objective as the data loss, on the GPU engine against the CPU engine
# (on lavapipe the GPU runs take about 22 minutes; the tables are the commands' stdout).
# DISTILLRANK_SKIP_GPU=1 leaves them out.
if [ "${DISTILLRANK_SKIP_GPU:-0}" = 1 ]; then exit 0; fi
G=$R/gpu-vs-cpu
SMALL_GPU="--seeds 1 --queries 800 --epochs 6 --quiet"
ALL=no-distillation,self-distillation,gend,pfd,multi-teacher-pfd,ranking-distillation
for backend in cpu gpu; do
  $B compare --backend $backend --methods $ALL $SMALL_GPU --out target/gpu-vs-cpu > $G/$backend.txt
  $B compare --backend $backend --objective auc-pr --methods no-distillation,pfd $SMALL_GPU \
    --out target/gpu-vs-cpu > $G/${backend}_obj.txt
done
