#!/usr/bin/env python3
"""A Python agent that refunds an order at most once, and only once an
operator approved it, with the shipped client (clients/python).

The client's ``with client.guard(...)`` block runs only with a permit and
reports when it is left: ``succeeded``, ``failed`` for the provider's own
refusals (``failure_types``), ``unknown`` for anything unexpected. Every
other answer is an exception. This is the cron shape: a pending refund
exits, and the next run retries with the same key.

    pip install ./clients/python        # or PYTHONPATH=clients/python/src
    TOLLGATE_DB=ledger.db python3 examples/python-agent/agent.py ORDER_ID AMOUNT_CENTS

Exit codes follow tollgate's: 0 done (now or before), 75 pending, 5 not
approved, 6 uncertain, 4 key conflict, 1 the provider declined.
"""

import os
import sys

from tollgate_guard import (ActionDenied, AlreadySettled, ApprovalPending, Client, KeyConflict, NotFound,
                            OutcomeUncertain, authority_key)


class Declined(Exception):
    """The payment provider refused the refund: the action ran and failed."""


def issue_refund(order: str, cents: int, idempotency_key: str) -> None:
    """The side effect, stubbed: replace with the provider's call."""
    if os.environ.get("PROVIDER_DECLINES"):
        raise Declined("card expired")
    with open(os.environ.get("REFUND_LOG", os.devnull), "a") as log:
        log.write("refund order=%s cents=%d idempotency_key=%s\n" % (order, cents, idempotency_key))


def main(order: str, cents: int) -> int:
    client = Client(agent="refund-agent")          # db= or $TOLLGATE_DB; binary= or $TOLLGATE_BIN or PATH
    dest_key = "refund:order-%s" % order           # the provider's idempotency key: stable, never random
    try:
        epoch = client.epoch()                     # None until an operator activates an epoch
    except NotFound:
        epoch = None                               # no ledger yet, so no epoch: the guard below creates it
    key = authority_key(epoch, dest_key) if epoch else dest_key
    try:
        with client.guard(key, kind="refund", target="order-%s" % order, body={"cents": cents},
                          failure_types=(Declined,)) as permit:
            permit.validate_for_execution()        # refuses a permit whose lease ran out
            issue_refund(order, cents, idempotency_key=dest_key)
    except ApprovalPending as p:
        print("refund %s: pending approval until %s; the next run retries" % (key, p.expires_at))
        return 75
    except AlreadySettled as s:
        print("refund %s: already done (%s)" % (key, s.answer.get("state")))
        return 0
    except ActionDenied as d:
        print("refund %s: not approved (%s); a new request needs a new key" % (key, d.answer.get("state")), file=sys.stderr)
        return 5
    except OutcomeUncertain:
        print("refund %s: uncertain; an operator reconciles it, never retry" % key, file=sys.stderr)
        return 6
    except KeyConflict as c:
        print("refund %s: this key was used for a different refund (%s differs)" % (key, c.differs), file=sys.stderr)
        return 4
    except Declined as e:
        print("refund %s: failed: %s (reported)" % (key, e), file=sys.stderr)
        return 1
    print("refund %s: succeeded" % key)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: agent.py ORDER_ID AMOUNT_CENTS")
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
