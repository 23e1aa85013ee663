#!/bin/sh
# Runs afdkit under valgrind's memcheck for make check-valgrind: any invalid
# access, use of an uninitialised value or definite/indirect leak makes the
# command exit 99, which the CLI tests report as a wrong exit status.
# AFDKIT_BIN is the real binary (the test environment sets it and, for a
# shared build, LD_LIBRARY_PATH); valgrind would otherwise trace the shell of
# libtool's wrapper script first.
#
# Memcheck costs about one CPU second per run just to start (the shared
# libraries' symbols and OpenBLAS's start-up), and the cases run afdkit some
# 700 times, so by default make check-valgrind runs every
# AFDKIT_VALGRIND_EVERY-th run of each .cases file under memcheck (the first
# included) and the others natively; AFDKIT_VALGRIND_EVERY=1 runs them all.
# Every case is also run in the AddressSanitizer build; what memcheck adds is
# the reads of uninitialised memory, which the sampled runs still cover on
# every command.  The count lives in the .cases file's own temporary
# directory, so which runs are checked is the same on every machine.
every=${AFDKIT_VALGRIND_EVERY:-1}
if [ "$every" -gt 1 ] && [ -n "${TMP:-}" ] && [ -d "$TMP" ]; then
    n=$(cat "$TMP/.valgrind-runs" 2>/dev/null || echo 0)
    echo $((n + 1)) > "$TMP/.valgrind-runs"
    if [ $((n % every)) -ne 0 ]; then
        exec "${AFDKIT_BIN:?AFDKIT_BIN must name the afdkit binary}" "$@"
    fi
fi
exec valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "${AFDKIT_BIN:?AFDKIT_BIN must name the afdkit binary}" "$@"
