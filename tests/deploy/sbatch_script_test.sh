#!/usr/bin/env bash
# deploy/slurm/kport-runner.sbatch run directly, as Slurm's batch step would run it,
# with stand-ins for nvidia-smi and the runner: the token comes from the file and
# reaches the runner only through its environment, a GPU job names the allocated GPU
# by UUID, and missing settings stop the script with a reason.
set -euo pipefail
script="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat > "$tmp/bin/nvidia-smi" <<'SMI'
#!/bin/sh
# Answers like nvidia-smi --query-gpu=uuid --format=csv,noheader --id=LIST on a 4-GPU node.
for a in "$@"; do case $a in --id=*) ids=${a#--id=};; esac; done
for i in $(echo "$ids" | tr ',' ' '); do echo "GPU-0000000$i-aaaa"; done
SMI
cat > "$tmp/runner" <<'RUN'
#!/bin/sh
echo "role=$KPORT_RUNNER_ROLE only=$KPORT_ONLY_GPUS token=$KPORT_REGISTRATION_TOKEN name=$KPORT_RUNNER_NAME args=$*"
RUN
chmod +x "$tmp/bin/nvidia-smi" "$tmp/runner"
echo "kpreg_secret" > "$tmp/token"
fail() { echo "FAIL: $*"; exit 1; }

out="$(env PATH="$tmp/bin:$PATH" HOME="$tmp" SLURM_JOB_ID=77 CUDA_VISIBLE_DEVICES=2 KPORT_SERVER=http://c:8080 \
  KPORT_REGISTRATION_TOKEN_FILE="$tmp/token" KPORT_RUNNER_BIN="$tmp/runner" bash "$script")"
echo "$out"
grep -q "role=gpu only=GPU-00000002-aaaa token=kpreg_secret name=slurm-77-" <<< "$out" || fail "gpu runner environment"
grep -q "args=$" <<< "$out" || fail "the token must not be passed as an argument"
[ -d "$tmp/.cache/kport-runner/job-77" ] || fail "per-job work directory"

out="$(env PATH="$tmp/bin:$PATH" HOME="$tmp" SLURM_JOB_ID=78 KPORT_RUNNER_ROLE=build KPORT_SERVER=http://c:8080 \
  KPORT_REGISTRATION_TOKEN_FILE="$tmp/token" KPORT_RUNNER_BIN="$tmp/runner" bash "$script")"
grep -q "role=build only= token=kpreg_secret" <<< "$out" || fail "build runner environment: $out"

rc=0
out="$(env HOME="$tmp" KPORT_SERVER=http://c:8080 KPORT_REGISTRATION_TOKEN_FILE="$tmp/none" \
  KPORT_RUNNER_BIN="$tmp/runner" bash "$script" 2>&1)" || rc=$?
[ "$rc" -ne 0 ] && grep -q "cannot read the registration token file" <<< "$out" || fail "unreadable token file: $rc $out"
rc=0
out="$(env -u KPORT_SERVER HOME="$tmp" KPORT_REGISTRATION_TOKEN_FILE="$tmp/token" bash "$script" 2>&1)" || rc=$?
[ "$rc" -ne 0 ] && grep -q "KPORT_SERVER" <<< "$out" || fail "missing server: $rc $out"
echo "sbatch script checks passed"
