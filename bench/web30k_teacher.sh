#!/usr/bin/env bash
# The README's Web30K-sized table of a GBDT teacher: a `distillrank data synth` file of 22,900
# queries (2,748,565 documents, 136 features; about 5 GB of text), split by query into 18,900
# training, 2,000 validation and 2,000 test queries, then bench/gbdt_teacher.py on it.
#
#     bench/web30k_teacher.sh DIR [gbdt_teacher.py's options, e.g. --seeds 3 --no-xgboost --backends cpu,gpu]
#
# The files are written once into DIR and kept; the script's JSON goes to stdout, its outputs
# to DIR/out. DISTILLRANK_BIN names the binary (target/release/distillrank by default).
set -euo pipefail
dir=${1:?usage: bench/web30k_teacher.sh DIR [options of bench/gbdt_teacher.py]}
shift
bin=${DISTILLRANK_BIN:-target/release/distillrank}
mkdir -p "$dir"
if [ ! -s "$dir/test.txt" ]; then
  "$bin" data synth --queries 22900 --regular 130 --privileged-count 6 --min-docs 10 \
    --max-docs 230 --out "$dir/all.txt" --quiet >&2
  awk -v dir="$dir" '{
    q = substr($2, 5) + 0
    split_name = q <= 18900 ? "train" : (q <= 20900 ? "vali" : "test")
    print > (dir "/" split_name ".txt")
  }' "$dir/all.txt"
  rm "$dir/all.txt"
fi
exec python bench/gbdt_teacher.py --train "$dir/train.txt" --valid "$dir/vali.txt" \
  --test "$dir/test.txt" --bin "$bin" --out "$dir/out" "$@"
