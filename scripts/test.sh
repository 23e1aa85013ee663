#!/bin/sh
# The README's second command: run every test.
#   1. the unit and command-line tests (make check) of the build in build/
#   2. make distcheck: the release tarball builds and passes its tests
# Idempotent; builds first if needed (scripts/setup.sh --build).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${AFDKIT_BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)

scripts/setup.sh --build

step() { printf '\n=== %s\n' "$*" >&2; }

step "make check"
make -C "$build" -j"$jobs" check || { cat "$build"/test-suite.log >&2; exit 1; }

step "make distcheck"
make -C "$build" -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >/dev/null

step "all tests passed"
