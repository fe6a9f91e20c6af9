#!/bin/sh
# A shell agent that refunds an order at most once, and only once an
# operator approved it: the exit-and-retry loop around `tollgate guard`.
#
#   guard -> 0   act, then report the outcome (succeeded or failed)
#         -> 75  pending approval (or another run is acting): sleep, retry
#         -> 10  already done: do nothing
#         -> 5   rejected, expired or denied: stop (a new request needs a new key)
#         -> 6   uncertain (a permit was used, no outcome): stop, an operator reconciles
#         -> 4   this key was used for a different refund: stop
#
# Usage: agent.sh ORDER_ID AMOUNT_CENTS
# Environment: TOLLGATE_DB (the ledger), RETRY_EVERY (seconds between
# tries, default 30), RETRY_FOR (seconds to keep trying, default 600; a
# cron job would rather exit at once and let the next run retry).
set -u
order=${1:?usage: agent.sh ORDER_ID AMOUNT_CENTS}
cents=${2:?usage: agent.sh ORDER_ID AMOUNT_CENTS}
every=${RETRY_EVERY:-30}
tries=$(( ${RETRY_FOR:-600} / every + 1 ))

# The payment provider's own idempotency key: the same business action
# always gets the same key, never a random one.
dest_key="refund:order-$order"
# Once an operator has activated an epoch, tollgate wants the
# epoch-qualified key; the provider keeps seeing dest_key. No ledger yet
# (exit 7) means no epoch: the first guard below creates the ledger.
epoch_answer=$(tollgate epoch show --json 2>/dev/null)
case $? in
  0|7) ;;
  *) echo "refund: the epoch could not be read; the next run retries: $epoch_answer" >&2; exit 75 ;;
esac
epoch=$(printf '%s' "$epoch_answer" | sed -n 's/.*"epoch":"\([^"]*\)".*/\1/p')
key=${epoch:+hsr1:$epoch:}$dest_key

# The side effect, stubbed: replace with the real call, passing dest_key
# as the provider's idempotency key.
issue_refund() {
  echo "refund order=$order cents=$cents idempotency_key=$dest_key" >> "${REFUND_LOG:-/dev/stderr}"
}

field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

while :; do
  answer=$(tollgate guard "$key" --kind refund --target "order-$order" \
           --body "{\"cents\":$cents}" --agent refund-agent --json)
  code=$?
  case $code in
    0)
      permit=$(printf '%s' "$answer" | field permit_id)
      if issue_refund; then outcome=succeeded; else outcome=failed; fi
      tollgate report "$key" --permit "$permit" --outcome "$outcome" --json >/dev/null
      echo "refund $key: $outcome"
      [ "$outcome" = succeeded ]; exit ;;
    75)
      tries=$((tries - 1))
      if [ "$tries" -le 0 ]; then
        echo "refund $key: still pending; the next run retries"
        exit 75
      fi
      echo "refund $key: $(printf '%s' "$answer" | field state), retrying in ${every}s"
      sleep "$every" ;;
    10) echo "refund $key: already done ($(printf '%s' "$answer" | field state))"; exit 0 ;;
    5)  echo "refund $key: not approved ($(printf '%s' "$answer" | field state)); a new request needs a new key" >&2; exit 5 ;;
    6)  echo "refund $key: uncertain; an operator reconciles it, never retry" >&2; exit 6 ;;
    4)  echo "refund $key: this key was used for a different refund" >&2; exit 4 ;;
    *)  echo "refund $key: tollgate answered $code: $answer" >&2; exit "$code" ;;
  esac
done
