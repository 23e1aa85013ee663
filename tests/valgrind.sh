#!/bin/sh
# Runs afdkit under valgrind's memcheck for make check-valgrind: any invalid
# access, use of an uninitialised value or definite/indirect leak makes the
# command exit 99, which the CLI tests report as a wrong exit status.
# AFDKIT_BIN is the real binary (the test environment sets it and, for a
# shared build, LD_LIBRARY_PATH); valgrind would otherwise trace the shell of
# libtool's wrapper script first.  --read-inline-info=no: error reports name
# the function a fault is in without its inlined callees, and each run starts
# in about 15% less CPU (a run of memcheck costs about a second just to start).
exec valgrind -q --error-exitcode=99 --leak-check=full --read-inline-info=no \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "${AFDKIT_BIN:?AFDKIT_BIN must name the afdkit binary}" "$@"
