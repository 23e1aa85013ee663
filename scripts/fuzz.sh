#!/bin/sh
# Build the libFuzzer targets with clang in build-fuzz/ and run each for
# SECONDS (default 60), FUZZ_JOBS targets at once (default: one on each
# processor).  scripts/fuzz.sh 600 is the ten-minute run;
# scripts/fuzz.sh 0 only builds (the build is also AddressSanitizer and
# UBSan's, whose make check scripts/test.sh runs).
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
[ "$seconds" = 0 ] && exit 0
make -C "$build" fuzz FUZZ_SECONDS="$seconds"
