#!/usr/bin/env bash
# Selection regret on the H200: one pipeline of the whole library (bench/pipeline), then
# against the same stack bench/selection/answers.py (verdict, SASS audit, a target never
# built, a GPU never seen, one result's reproduce command run as printed) and
# bench/selection/regret.py (best-kernel answers for seeded shapes outside the harness
# grids, each checked by timing every instance on that shape).
#   bash bench/selection/run_h200.sh        (OUT defaults to build/selection-out)
# KPORT_PIPELINES=2 times two pipelines back to back (repeatability); KPORT_SELECTION_ANSWERS=0
# leaves out answers.py, to fit one device call.
set -u
cd "$(dirname "$0")/../.."
export OUT=${OUT:-$PWD/build/selection-out}
export KPORT_PIPELINES=${KPORT_PIPELINES:-1}
answers="python3 $PWD/bench/selection/answers.py --server \"\$KPORT_URL\" --token \"\$KPORT_ADMIN_TOKEN\" --out \"$OUT/selection\";"
[[ ${KPORT_SELECTION_ANSWERS:-1} == 0 ]] && answers=
export KPORT_AFTER_PIPELINES="$answers python3 $PWD/bench/selection/regret.py --server \"\$KPORT_URL\" --token \"\$KPORT_ADMIN_TOKEN\" --out \"$OUT/selection\" ${KPORT_SELECTION_ARGS:-}"
exec bash bench/pipeline/run_h200.sh
