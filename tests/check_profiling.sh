#!/bin/sh
# check_profiling.sh: the efficiencies of the a100-80g and h100-sxm presets are
# what "afdkit calibrate --profile" fits to the measurements bundled in
# data/profiling/.  The command is the one the preset's comment gives; it is
# run again (with --out) and its mfu, mbu, kernel_us, roofline_p, comm_eff
# and comm_latency_ms must equal the preset's lines.
set -u
srcdir=${srcdir:-.}
AFDKIT=${AFDKIT:-./afdkit}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-profiling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
for dev in a100-80g h100-sxm; do
    file=$srcdir/data/devices/$dev.device
    # the "#   afdkit calibrate ... \" comment and its continuation lines
    cmd=$(awk '/^#   afdkit calibrate/ { on = 1 }
               on { line = $0; sub(/^#[ ]*/, "", line); cont = sub(/ *\\$/, "", line);
                    printf "%s ", line; if (!cont) exit }' "$file")
    case $cmd in
    "afdkit calibrate --profile "*) ;;
    *) echo "$dev: no 'afdkit calibrate --profile' command in its comments"; status=1; continue ;;
    esac
    set -- ${cmd#afdkit }
    if ! (cd "$srcdir" && "$AFDKIT" "$@" --out "$tmp/$dev.device" >/dev/null); then
        echo "$dev: '$cmd' failed"; status=1; continue
    fi
    for key in mfu mbu kernel_us roofline_p comm_eff comm_latency_ms; do
        want=$(sed -n "s/^$key = //p" "$tmp/$dev.device")
        have=$(sed -n "s/^$key = //p" "$file")
        if [ -z "$want" ] || [ "$want" != "$have" ]; then
            echo "$dev: $key = '$have' in $file, but '$cmd' fits '$want'"
            status=1
        fi
    done
done
[ $status -eq 0 ] && echo "ok: a100-80g and h100-sxm efficiencies and kernel terms re-derived from data/profiling/"
exit $status
