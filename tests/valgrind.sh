#!/bin/sh
# Runs afdkit under valgrind's memcheck for make check-valgrind: any invalid
# access, use of an uninitialised value or definite/indirect leak makes the
# command exit 99, which the CLI tests report as a wrong exit status.
# AFDKIT_BIN is the real binary (the test environment sets it and, for a
# shared build, LD_LIBRARY_PATH); valgrind would otherwise trace the shell of
# libtool's wrapper script first.
exec valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "${AFDKIT_BIN:?AFDKIT_BIN must name the afdkit binary}" "$@"
