#!/bin/sh
# --json on every table command parses and equals the table (check_json.py).
: "${AFDKIT:?AFDKIT must point to the afdkit program}"
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no Python 3 (install python3)"; exit 77; }
exec "$py" "${srcdir:-.}/tests/check_json.py" "$AFDKIT" "${NBDATA:?}"
