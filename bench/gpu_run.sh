# Sourced by the bench scripts that run on a GPU machine in one device call
# (bench/{decode,fp8,grouped,rowwise,skinny,tiles}/run_h200.sh, from the repository's root):
#   gpu_run_start NAME [FILE...]
# sets OUT (the caller's, else build/NAME-out) and W=build/NAME-work and makes both; however
# the script ends (a stopped run too: TERM and INT exit 143), copies the FILEs of W that exist
# (default table.txt) into OUT and packs W into OUT/NAME-run.tar.gz; writes the GPU's name,
# UUID, driver, clocks, temperature and power into W/gpu.txt (and prints them).
#   stamp TEXT...   prints TEXT after the seconds since gpu_run_start.
#   gpu_run_build_harness DIR SECONDS ONLY [CMAKE_ARG...]   configures kernels/ into DIR for
# sm_90a (Release, Ninja) with only the variants ONLY (KPORT_ONLY_VARIANTS, ;-separated) and the
# extra arguments, builds it within SECONDS, the log in W/build.log; on failure prints the
# first errors and exits 2.
gpu_run_start() {
  gpu_run_name=$1
  shift
  gpu_run_files=("${@:-table.txt}")
  OUT=${OUT:-$PWD/build/$gpu_run_name-out}
  W=build/$gpu_run_name-work
  mkdir -p "$OUT" "$W"
  trap gpu_run_finish EXIT
  trap "exit 143" TERM INT
  gpu_run_t0=$(date +%s)
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv,noheader | tee "$W/gpu.txt"
}

gpu_run_finish() {
  local f
  for f in "${gpu_run_files[@]}"; do [[ -f $W/$f ]] && cp "$W/$f" "$OUT/"; done
  tar czf "$OUT/$gpu_run_name-run.tar.gz" -C "$W" . || true
}

stamp() { echo "[$(($(date +%s) - gpu_run_t0))s] $*"; }

gpu_run_build_harness() {
  local dir=$1 secs=$2 only=$3
  shift 3
  { cmake -S kernels -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPORT_CUDA_TARGETS=sm_90a \
      "-DKPORT_ONLY_VARIANTS=$only" "$@" && timeout "$secs" cmake --build "$dir"; } >"$W/build.log" 2>&1 ||
    { echo "harness build failed"; grep -i -B2 -A20 -m3 'error' "$W/build.log" | head -80; exit 2; }
}
