#!/bin/sh
# Create the system user toposhim's plugins run as (toposhim-plugin(7),
# "SANDBOX"): no login, no home, a group of its own.  Run as root by
# `make install` and contrib/setup-debian.sh; safe to run again.
# Usage: plugin-user.sh [NAME]   (default toposhim-plugin)
set -eu
name=${1:-toposhim-plugin}
if getent passwd "$name" >/dev/null; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "plugin-user.sh: cannot create user '$name' without root; run: useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin $name" >&2
	exit 1
fi
useradd --system --user-group --no-create-home --home-dir /nonexistent \
	--shell /usr/sbin/nologin --comment "toposhim plugins" "$name"
