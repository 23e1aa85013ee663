#!/bin/sh
# Build the libFuzzer targets with clang in build-fuzz/ and run each for
# SECONDS (default 60).  scripts/fuzz.sh 600 is the ten-minute run.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
seconds=${1:-60}
build=$top/build-fuzz
scripts/deps.sh build extra
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
if [ ! -f "$build/Makefile" ] || [ configure -nt "$build/config.status" ]; then
    (cd "$build" && "$top/configure" CC=clang --enable-fuzzing --disable-shared >/dev/null)
fi
make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
make -C "$build" fuzz FUZZ_SECONDS="$seconds"
