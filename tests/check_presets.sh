#!/bin/sh
# check_presets.sh: libanalytic/latency/presets.c is what scripts/gen_presets.sh makes
# of data/models and data/devices (regenerate it after editing a preset).
set -eu
src=${srcdir:-.}
tmp=${TMPDIR:-/tmp}/check_presets.$$
trap 'rm -f "$tmp"' EXIT
sh "$src/scripts/gen_presets.sh" "$src" >"$tmp"
if ! cmp -s "$tmp" "$src/libanalytic/latency/presets.c"; then
    echo "libanalytic/latency/presets.c is stale: run scripts/gen_presets.sh . > libanalytic/latency/presets.c" >&2
    diff "$src/libanalytic/latency/presets.c" "$tmp" | head -20 >&2
    exit 1
fi
