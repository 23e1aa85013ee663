#!/bin/sh
# The Python package: install it offline with pip (as a user would, into a
# scratch directory), import it the documented way, and run its pytest suite,
# which compares every function with the command line's numbers.
set -u
srcdir=${srcdir:-.}
py=${PYTHON:-python3}
build=${ABS_BUILDDIR:-$(pwd)}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no Python 3"; exit 77; }
"$py" -c 'import numpy, cffi, pytest' 2>/dev/null ||
    { echo "SKIP: $py lacks numpy, cffi or pytest (python3-numpy python3-cffi python3-pytest)"; exit 77; }
so=$build/libanalytic/.libs/libanalytic.so.0
[ -f "$so" ] && [ -f "$build/montecarlo/.libs/libafdmontecarlo.so" ] ||
    { echo "SKIP: no shared libraries in $build (static-only build)"; exit 77; }
# A sanitizer build cannot be loaded into an uninstrumented interpreter.
if nm -D "$so" 2>/dev/null | grep -q ' U __[a-z]*san_'; then
    echo "SKIP: libanalytic is built with sanitizers"; exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-python.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# pip builds in the source tree it is given: give it a copy (the sources may
# be read-only, as under make distcheck).
cp -R "$srcdir/python" "$tmp/src"
chmod -R u+w "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
if "$py" -m pip --version >/dev/null 2>&1; then
    "$py" -m pip install --quiet --no-build-isolation --no-deps --no-index \
        --disable-pip-version-check --target "$tmp/site" "$tmp/src" >"$tmp/pip.log" 2>&1 ||
        { cat "$tmp/pip.log"; echo "FAIL: pip install --no-build-isolation ./python"; exit 1; }
    site=$tmp/site
else
    echo "note: no pip for $py; testing the package from the sources"
    site=$tmp/src
fi
export AFDKIT_BUILD_DIR="$build" AFDKIT_SRCDIR=$(cd "$srcdir" && pwd) PYTHONDONTWRITEBYTECODE=1
# The documented check: import it and print kappa_2 = 1/sqrt(pi), kappa_24.
out=$(cd "$tmp" && PYTHONPATH=$site "$py" -c 'import afdkit; print(afdkit.kappa([2, 24]))') ||
    { echo "FAIL: import afdkit"; exit 1; }
[ "$out" = "[0.56418958 1.94767407]" ] || { echo "FAIL: afdkit.kappa([2, 24]) printed $out"; exit 1; }
cd "$tmp" && PYTHONPATH=$site "$py" -m pytest -q -p no:cacheprovider -c /dev/null \
    --rootdir "$tmp" "$tmp/src/tests"
