#!/usr/bin/env bash
# The test command of the README, for a fresh Debian machine that has only Go.
#
# The end-to-end tests use real programs: tmux (the TUI in a terminal), prometheus (a real
# scrape of --metrics-listen) and chromium (the HTML report rendered). The ones missing are
# installed with apt-get when this user may (root, or sudo without a password); otherwise
# the script says which to install and the tests that need them fail, naming them. Then:
# go vet and the race-enabled tests of every package (with the binary they run built once,
# TOKSCOPE_TEST_BIN). .ci/run calls this script.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in tmux prometheus chromium; do
  command -v "$tool" >/dev/null || need+=("$tool")
done
if [ ${#need[@]} -gt 0 ]; then
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      as_root=(cannot)
    fi
  fi
  if [ "${as_root[*]}" = cannot ] || ! command -v apt-get >/dev/null; then
    echo "scripts/test.sh: ${need[*]} missing and cannot be installed here (needs apt-get as root or sudo):" \
      "install them (apt-get install -y ${need[*]}), or the tests that use them fail" >&2
  else
    echo "scripts/test.sh: installing ${need[*]} with apt-get…" >&2
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

# vet with CGO_ENABLED=0 (no file of tokscope uses cgo): the packages it compiles are then the
# ones the tests' CGO_ENABLED=0 builds (deploy's static build, --version's builds, the
# Prometheus test's binary) need, and those builds only link.
CGO_ENABLED=0 go vet ./...

# The race-enabled tokscope that the end-to-end tests (this package's and e2e's) run, built
# once here rather than once per test package: the packages it compiles are the ones the
# tests need anyway, and its link (10-30 s on a loaded 2-core machine) is paid once.
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
go build -race -o "$bindir/tokscope" .
# -p 4: four test binaries at a time rather than GOMAXPROCS (2). Most packages spend their
# time waiting on simulated schedules, timeouts and child processes, not on the CPU: beside
# two CPU hogs on the 2-core machine, the whole script took 298 s with -p 4 and 458 s with
# the default (each run had one timing failure of its own, in a different package).
TOKSCOPE_TEST_BIN="$bindir/tokscope" go test -race -p 4 ./...
