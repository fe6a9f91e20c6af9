#!/bin/sh
# A `tollgate watch --exec` hook that posts each event (a new pending
# request, an approval about to expire, an uncertain action, a conflict, a
# fenced call) to a webhook: Slack, Teams, a pager. tollgate runs it once
# per event with the event's JSON on stdin and TOLLGATE_EVENT set; nothing
# from the ledger is ever put on its command line.
#
#   WEBHOOK_URL=https://hooks.example.com/T000/B000 \
#     tollgate watch --exec examples/watch-webhook/post.sh
set -eu
: "${WEBHOOK_URL:?set WEBHOOK_URL to the webhook to post to}"
event=$(cat)
# "text" is what chat webhooks show; "event" is tollgate's JSON as is
# (already escaped: no control or format characters).
printf '{"text":"tollgate: %s (tollgate list --state pending)","event":%s}\n' "${TOLLGATE_EVENT:-event}" "$event" |
  curl --fail --silent --show-error --max-time 10 -H 'Content-Type: application/json' --data-binary @- "$WEBHOOK_URL" >/dev/null
