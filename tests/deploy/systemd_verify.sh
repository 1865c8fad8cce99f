#!/usr/bin/env bash
# Checks deploy/systemd/*.service with `systemd-analyze verify`: every directive parses,
# every referenced unit exists, the hardening settings are present. verify also insists
# that ExecStart's program exists, so the units are checked as copies whose
# /usr/local/bin/ points at stand-in programs in a temp directory; the template unit is
# checked as instance @0. Exit 77 (skipped) only when systemd-analyze is not installed.
set -euo pipefail
units_dir="$1"
if ! command -v systemd-analyze > /dev/null 2>&1; then
  echo "SKIP: systemd-analyze is not installed (Debian package systemd)"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
for f in "$units_dir"/*.service; do
  name="$(basename "$f")"
  for prog in $(grep -o '/usr/local/bin/[A-Za-z0-9_.-]*' "$f" | sort -u); do
    printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/$(basename "$prog")"
    chmod +x "$tmp/bin/$(basename "$prog")"
  done
  sed "s|/usr/local/bin/|$tmp/bin/|g" "$f" > "$tmp/${name/@./@0.}"
done

check() {  # units...: verify must exit 0 and print nothing
  local out rc=0
  out="$(cd "$tmp" && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$@" 2>&1)" || rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    echo "systemd-analyze verify $* (exit $rc):"
    echo "$out"
    return 1
  fi
}

units=()
for f in "$tmp"/*.service; do units+=("./$(basename "$f")"); done
[ "${#units[@]}" -ge 3 ] || { echo "expected the coordinator, watcher and runner units in $units_dir"; exit 1; }
check "${units[@]}"
echo "verified: ${units[*]}"

# The hardening every unit must keep.
for f in "$units_dir"/*.service; do
  for key in User=kport NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome= CapabilityBoundingSet=; do
    grep -q "^$key" "$f" || { echo "$(basename "$f") lacks $key"; exit 1; }
  done
done

# The check itself must catch a broken unit, or a pass above means nothing.
cp "$tmp/kport-coordinator.service" "$tmp/broken.service"
sed -i 's/^ProtectSystem=strict/ProtectSystem=sideways/' "$tmp/broken.service"
if check ./broken.service > /dev/null; then
  echo "systemd-analyze verify accepted ProtectSystem=sideways: the check is not checking"
  exit 1
fi
echo "a broken unit is reported, as it should be"
