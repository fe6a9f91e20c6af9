#!/bin/sh
# A CI or cron job that backs the live ledger up and proves the copy:
# `tollgate backup` writes a consistent copy (never a partial file), then
# `tollgate verify` checks every fact, the hash chain and the payload
# digests of that copy. The job fails if either does. (On PostgreSQL use
# pg_dump instead; backup is for the SQLite ledger.)
#
#   TOLLGATE_DB=/srv/tollgate/ledger.db examples/ci/verify-backup.sh /var/backups/tollgate
#
# In GitHub Actions, on a runner that can read the ledger:
#   - run: examples/ci/verify-backup.sh "$RUNNER_TEMP/tollgate-backups"
#     env: { TOLLGATE_DB: /srv/tollgate/ledger.db }
set -eu
dir=${1:?usage: verify-backup.sh BACKUP_DIR}
mkdir -p "$dir"
backup="$dir/ledger-$(date -u +%Y%m%dT%H%M%SZ).db"
tollgate backup "$backup"
tollgate --db "$backup" verify
echo "backup verified: $backup"
