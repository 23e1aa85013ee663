#!/bin/sh
# Runs afdkit under valgrind's memcheck for make check-valgrind: any invalid
# access or definite/indirect leak makes the command exit 99, which the CLI
# tests report as a wrong exit status.
# The libtool script by absolute path: a case may run from another directory.
exec /bin/sh "$ABS_BUILDDIR/libtool" --mode=execute valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "$ABS_BUILDDIR/afdkit" "$@"
