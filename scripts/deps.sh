#!/bin/sh
# Install the Debian packages listed in scripts/debian-packages.txt that are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# Usage: scripts/deps.sh [GROUP...]   (default: build test extra)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
list="$here/debian-packages.txt"
groups=${*:-build test extra}

missing=""
for pkg in $(awk -v groups=" $groups " '
        /^[[:space:]]*(#|$)/ { next }
        index(groups, " " $2 " ") { print $1 }' "$list"); do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $pkg" ;;
    esac
done

if [ -z "$missing" ]; then
    echo "deps: all packages present ($groups)" >&2
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: apt-get not found; install these packages with your package manager:$missing" >&2
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing packages:$missing" >&2
    echo "deps: run this, then the same command again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi

echo "deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done" >&2
