#!/bin/sh
# Every symbol the shared libanalytic exports carries the afd_ prefix, and
# every function declared AFD_API in the installed headers is exported.
set -eu
so=$(ls "${ABS_BUILDDIR:-.}"/libanalytic/.libs/libanalytic.so 2>/dev/null || true)
if [ -z "$so" ]; then
    echo "libanalytic.so not built (static-only build): skipped"
    exit 77
fi
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
# AddressSanitizer adds an __odr_asan.NAME indicator beside each exported global.
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRW]$/ && $3 !~ /^__odr_asan\./ { print $3 }' | sort)
bad=$(printf '%s\n' "$exported" | grep -v '^afd_' || true)
if [ -n "$bad" ]; then
    echo "exported symbols without the afd_ prefix:"; printf '%s\n' "$bad"; exit 1
fi
srcdir=${srcdir:-.}
declared=$(cat "$srcdir"/libanalytic/afd*.h "$srcdir"/libanalytic/*/afd_*.h | tr '\n' ' ' | sed 's/AFD_API/\n&/g' |
           sed -n 's/^AFD_API[^(]*[ *]\(afd_[a-z0-9_]*\) *(.*/\1/p' | sort -u)
missing=$(printf '%s\n' "$declared" | while read -r f; do
              printf '%s\n' "$exported" | grep -qx "$f" || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "declared AFD_API but not exported:"; printf '%s\n' "$missing"; exit 1
fi
n=$(printf '%s\n' "$declared" | wc -l)
echo "ok: $n public functions, all exported with the afd_ prefix"
