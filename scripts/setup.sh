#!/bin/sh
# The README's first command: install what is missing (Debian), bootstrap,
# configure and build in build/, then run the main job on a bundled trace.
# Idempotent: a second run only rebuilds what changed and reruns the job.
#   scripts/setup.sh             everything above
#   scripts/setup.sh --build     stop after the build (used by scripts/test.sh)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${AFDKIT_BUILD_DIR:-$top/build}

scripts/deps.sh build test extra

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    echo "setup: autoreconf -fi" >&2
    autoreconf -fi
fi
mkdir -p "$build"
if [ ! -f "$build/Makefile" ] || [ configure -nt "$build/config.status" ]; then
    echo "setup: configure in $build" >&2
    (cd "$build" && "$top/configure" --enable-werror)
fi
make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "setup: built $build/afdkit" >&2

[ "${1:-}" = "--build" ] && exit 0

cat >&2 <<MSG
setup: main job: A/F ratio for the Azure conversation trace (2023) on the paper's
setup: Ascend 910C coefficients (Table 3), micro-batch B = 256:
setup:   $build/afdkit ratio --trace notebooks-data/AzureLLMInferenceTrace_conv.csv --hw paper-910c -B 256
MSG
"$build/afdkit" ratio --trace notebooks-data/AzureLLMInferenceTrace_conv.csv --hw paper-910c -B 256
