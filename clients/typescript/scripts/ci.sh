#!/bin/sh
# CI for the TypeScript client: install exactly the locked packages, build
# the package with its own tsc, type-check the examples against the
# package's declarations, and run the tests against a real tollgate serve.
#
# TOLLGATE_BIN names a built tollgate binary (required: the tests start
# `tollgate serve` with it). TOLLGATE_TEST_PG, when set, adds the PostgreSQL
# runs; TOLLGATE_REQUIRE_PG=1 fails them instead of skipping when it is not.
set -eu
cd "$(dirname "$0")/.."
: "${TOLLGATE_BIN:?set TOLLGATE_BIN to a built tollgate binary}"
case "$TOLLGATE_BIN" in /*) ;; *) TOLLGATE_BIN="$OLDPWD/$TOLLGATE_BIN" ;; esac
export TOLLGATE_BIN
[ -x "$TOLLGATE_BIN" ] || { echo "ci.sh: TOLLGATE_BIN=$TOLLGATE_BIN is not executable" >&2; exit 1; }
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npm run --silent check-examples
npm test
