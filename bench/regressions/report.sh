#!/usr/bin/env bash
# The verdict's rule over the A/A figures that bench/regressions/run_h200.sh brought back
# from several machine starts: false regressions with no change, the share of trials that
# find an effect applied to the change's figures, and (when the starts timed one) a real
# kernel change against the unchanged harness (see aa_judge.cpp).
#   bash bench/regressions/report.sh DIR [build-dir]    (build-dir default build/ci)
# DIR holds the unpacked start<S>.tar.gz of every machine start, or only the figures.tsv that
# extract.py made of them (bench/regressions/data/ keeps those of past starts, gzipped:
# `zcat bench/regressions/data/start-*.tsv.gz > DIR/figures.tsv`, and the real changes' pairs
# `zcat bench/regressions/data/change-*.tsv.gz > DIR/change.tsv`).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$1
build=${2:-build/ci}
cmake --build "$build" --target kport-bench-aa >/dev/null
if ls "$dir"/start*-pass*.json.gz >/dev/null 2>&1; then
  python3 bench/regressions/extract.py "$dir" >"$dir/figures.tsv"
  python3 bench/regressions/extract.py "$dir" --change >"$dir/change.tsv"
fi
echo "figures: $(wc -l <"$dir/figures.tsv") of $(cut -f1 "$dir/figures.tsv" | sort -u | wc -l) cases," \
  "$(cut -f2,3 "$dir/figures.tsv" | sort -u | wc -l) processes on $(cut -f2 "$dir/figures.tsv" | sort -u | wc -l) machine starts"
# Pairs of four rounds a side, as the GPU runner times a re-measure (--bench-paired-rounds).
change=()
[[ -s $dir/change.tsv ]] && change=(--change "$dir/change.tsv")
"$build/bin/kport-bench-aa" "$dir/figures.tsv" --side-rounds 4 --effect 0.01 --effect 0.02 --effect 0.03 \
  --effect 0.05 --effect 0.10 "${change[@]}"
echo
echo "with two rounds a side:"
"$build/bin/kport-bench-aa" "$dir/figures.tsv" --side-rounds 2 --effect 0.02
echo
echo "every split of a start's first eight processes into two sides of four (70 per start, not independent):"
"$build/bin/kport-bench-aa" "$dir/figures.tsv" --side-rounds 4 --splits 1 --effect 0.02
