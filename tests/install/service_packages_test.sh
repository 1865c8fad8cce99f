#!/usr/bin/env bash
# The services as users install them: `cmake --install` into a temp prefix (layout,
# units naming that prefix, defaults found beside the binaries, the dashboard at "/"
# with no --web, and a clear answer at "/" without one), then `cpack -G DEB` (one
# package per service, runtime libraries in Depends, units included) and a package
# extracted with dpkg-deb and run from there. Nothing is installed into the system.
#   service_packages_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
for tool in curl cpack dpkg-deb dpkg-shlibdeps; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (deploy/install-deps.sh installs it)"
    exit 77
  fi
done
# Outside the build tree: a binary there would count as not installed.
work=$(mktemp -d /tmp/kport-packages.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { [ -e "$1" ] || fail "missing $1"; }

# start_coordinator BINARY NAME: starts it on a free port with no --web; sets $port.
start_coordinator() {
  local dir=$work/$2
  mkdir -p "$dir"
  "$1" --listen 127.0.0.1:0 --db "$dir/kport.db" --port-file "$dir/port" >"$dir/log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$dir/port" ] && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$dir/log"; fail "$1 exited"; }
    sleep 0.05
  done
  [ -s "$dir/port" ] || { cat "$dir/log"; fail "$1 did not start"; }
  port=$(cat "$dir/port")
}
stop_last() { kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'; }
# expect_dashboard WHAT MARKER: "/" is the installed index.html (which the test marked,
# so the checkout's copy would not pass).
expect_dashboard() {
  local body
  body=$(curl -sS -f "http://127.0.0.1:$port/") || fail "GET / on $1"
  [[ $body == *"bring-up dashboard"* ]] || fail "GET / on $1 is not the dashboard: ${body:0:200}"
  [[ $body == *"$2"* ]] || fail "GET / on $1 is not the installed index.html"
  curl -sS -f -o /dev/null "http://127.0.0.1:$port/static/dist/app.js" || fail "GET /static/dist/app.js on $1"
}

# ---- cmake --install -----------------------------------------------------------------
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/kport-coordinator bin/kport-runner bin/kport-watcher bin/kport \
         share/kport/catalog/targets.json share/kport/web/index.html share/kport/web/app.css \
         share/kport/web/dist/app.js share/kport/web/dist/boot.js share/kport/kernels/kport.json \
         lib/systemd/system/kport-coordinator.service lib/systemd/system/kport-runner@.service \
         lib/systemd/system/kport-watcher.service; do
  need "$prefix/$f"
done
if [ -f "$src/web/vendor/uplot.esm.js" ]; then need "$prefix/share/kport/web/vendor/uplot.esm.js"; fi
for f in share/kport/web/node_modules share/kport/web/package.json share/kport/web/scripts; do
  [ ! -e "$prefix/$f" ] || fail "installed $f, which only builds the dashboard"
done
for unit in kport-coordinator.service kport-runner@.service kport-watcher.service; do
  grep -q "^ExecStart=$prefix/bin/kport-" "$prefix/lib/systemd/system/$unit" \
    || fail "$unit does not start $prefix/bin: $(grep ExecStart "$prefix/lib/systemd/system/$unit")"
done
# Defaults found beside the binaries, not in the checkout.
# (Output is captured before grep -q: with pipefail, a writer cut off early fails.)
for bin in kport-runner kport-watcher; do
  help=$("$prefix/bin/$bin" --help)
  grep -q -- "--catalog.*(default $prefix/share/kport/catalog/targets.json)" <<<"$help" \
    || fail "$bin's default --catalog is not the installed one: $(grep -- --catalog <<<"$help")"
done
"$prefix/bin/kport" --help >/dev/null

echo "<!-- installed copy -->" >>"$prefix/share/kport/web/index.html"
start_coordinator "$prefix/bin/kport-coordinator" installed
expect_dashboard "the installed coordinator" "installed copy"
# kport's own op families come from the installed manifest.
families=$(curl -sS -f "http://127.0.0.1:$port/api/v1/families") || fail "GET /api/v1/families on the installed coordinator"
[[ $families == *'"name":"softmax"'*'"library":"kport-kernels"'* ]] || fail "the installed coordinator knows no families: ${families:0:200}"
stop_last

# Without the dashboard's files: "/" says where it looked (JSON, and a page for browsers).
mv "$prefix/share/kport/web" "$work/web.away"
start_coordinator "$prefix/bin/kport-coordinator" no-web
code=$(curl -sS -o "$work/no-web.json" -w '%{http_code}' "http://127.0.0.1:$port/")
[ "$code" = 404 ] || fail "GET / without a dashboard answered $code"
grep -q "$prefix/share/kport/web" "$work/no-web.json" || fail "GET / does not say where it looked: $(cat "$work/no-web.json")"
grep -q -- "--web" "$work/no-web.json" || fail "GET / does not say how to serve a dashboard"
page=$(curl -sS -H 'Accept: text/html' "http://127.0.0.1:$port/")
grep -q "<code>$prefix/share/kport/web</code>" <<<"$page" || fail "the page for browsers does not say where it looked"
stop_last
mv "$work/web.away" "$prefix/share/kport/web"

# ---- Debian packages -----------------------------------------------------------------
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/packages" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
declare -A contents=(
  [kport-common]="./usr/share/kport/catalog/targets.json"
  [kport-coordinator]="./usr/bin/kport-coordinator ./usr/share/kport/web/index.html ./usr/share/kport/web/dist/app.js ./usr/share/kport/kernels/kport.json ./usr/lib/systemd/system/kport-coordinator.service"
  [kport-runner]="./usr/bin/kport-runner ./usr/lib/systemd/system/kport-runner@.service"
  [kport-watcher]="./usr/bin/kport-watcher ./usr/lib/systemd/system/kport-watcher.service"
  [kport-cli]="./usr/bin/kport"
)
declare -A depends=(
  [kport-coordinator]="kport-common libsqlite3-0 libboost-json1.81.0 libgit2-1.5 libssl3"
  [kport-runner]="kport-common libgit2-1.5 libboost-json1.81.0 libssl3"
  [kport-watcher]="kport-common libgit2-1.5 libssl3"
  [kport-cli]="libboost-json1.81.0 libssl3"
  [kport-common]="adduser"
)
for pkg in "${!contents[@]}"; do
  deb=$(ls "$work/packages/${pkg}_"*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "cpack made no $pkg package: $(ls "$work/packages")"
  [ "$(dpkg-deb --field "$deb" Package)" = "$pkg" ] || fail "$deb is not $pkg"
  listing=$(dpkg-deb --contents "$deb" | awk '{print $6}')
  for f in ${contents[$pkg]}; do
    grep -qxF "$f" <<<"$listing" || fail "$pkg lacks $f"
  done
  deps=$(dpkg-deb --field "$deb" Depends)
  for d in ${depends[$pkg]}; do
    [[ ", $deps" == *", $d"* ]] || fail "$pkg does not depend on $d: $deps"
  done
done
for pkg in kport-common kport-coordinator kport-runner kport-watcher; do
  dpkg-deb --control "$work/packages/${pkg}_"*.deb "$work/control-$pkg"
  need "$work/control-$pkg/postinst"
  sh -n "$work/control-$pkg/postinst" || fail "$pkg's postinst is not valid sh"
done

# A package's tree, extracted anywhere, runs as installed: units name /usr/bin, the
# coordinator serves its packaged dashboard with no --web.
root=$work/root
for pkg in kport-common kport-coordinator kport-runner; do dpkg-deb -x "$work/packages/${pkg}_"*.deb "$root"; done
grep -q '^ExecStart=/usr/bin/kport-coordinator ' "$root/usr/lib/systemd/system/kport-coordinator.service" \
  || fail "the packaged unit does not start /usr/bin/kport-coordinator"
help=$("$root/usr/bin/kport-runner" --help)
grep -q -- "(default $root/usr/share/kport/catalog/targets.json)" <<<"$help" || fail "the packaged runner does not find the packaged catalog"
echo "<!-- packaged copy -->" >>"$root/usr/share/kport/web/index.html"
start_coordinator "$root/usr/bin/kport-coordinator" packaged
expect_dashboard "the packaged coordinator" "packaged copy"
stop_last
echo "install, packages and defaults: ok"
