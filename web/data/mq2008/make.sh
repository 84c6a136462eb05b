#!/usr/bin/env bash
# Rebuilds the page's bundled MQ2008 Fold1 (LETOR 4.0) from the original files:
#   web/data/mq2008/make.sh target/data/mq2008/Fold1   (after cargo xtask data)
# Kept: every query with a document of grade > 0 (preparation drops the others anyway), each
# line's grade, qid and non-zero features with trailing zeros trimmed; comments dropped.
set -euo pipefail
fold=${1:?usage: make.sh FOLD_DIR}
here=$(dirname "$0")
for split in train vali test; do
  awk '
    function flush() {
      if (relevant) printf "%s", block
      block = ""; relevant = 0
    }
    {
      sub(/#.*/, "")
      if ($2 != qid) { flush(); qid = $2 }
      if ($1 > 0) relevant = 1
      line = $1 " " $2
      for (i = 3; i <= NF; i++) {
        split($i, kv, ":")
        if (kv[2] + 0 == 0) continue
        v = kv[2]
        if (v ~ /\./) { sub(/0+$/, "", v); sub(/\.$/, "", v) }
        line = line " " kv[1] ":" v
      }
      block = block line "\n"
    }
    END { flush() }
  ' "$fold/$split.txt" | gzip -9n > "$here/$split.txt.gz"
done
