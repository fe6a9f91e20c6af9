"""tollgate_guard: the Python client for tollgate.

tollgate makes an agent's consequential actions idempotent and
human-approved. This client speaks HTTP to ``tollgate serve`` (``url=``,
or ``$TOLLGATE_URL``), or runs the ``tollgate`` binary, and gives the
exit-and-retry shape::

    from tollgate_guard import Client, ApprovalPending

    client = Client(url="unix:///run/tollgate/tollgate.sock")
    try:
        with client.guard("refund:entry-42", kind="refund", target="acct-7", body={"eur": 40}) as permit:
            permit.validate_for_execution()
            issue_refund(idempotency_key="refund:entry-42")
    except ApprovalPending as pending:
        print("waiting for an operator until", pending.expires_at)  # exit; the next run retries

Standard library only; Python 3.9 or newer.
"""

from .client import OUTCOMES, Client, Guard, Permit, authority_key
from .errors import (
    ActionDenied,
    AlreadySettled,
    ApprovalPending,
    BinaryNotFound,
    CommitUnknown,
    InvalidInput,
    KeyConflict,
    LeaseLapsed,
    LedgerUnavailable,
    NotFound,
    NotPermitted,
    OutcomeUncertain,
    TollgateError,
    Unauthenticated,
)

__all__ = [
    "OUTCOMES",
    "ActionDenied",
    "AlreadySettled",
    "ApprovalPending",
    "BinaryNotFound",
    "Client",
    "CommitUnknown",
    "Guard",
    "InvalidInput",
    "KeyConflict",
    "LeaseLapsed",
    "LedgerUnavailable",
    "NotFound",
    "NotPermitted",
    "OutcomeUncertain",
    "Permit",
    "TollgateError",
    "Unauthenticated",
    "authority_key",
]
