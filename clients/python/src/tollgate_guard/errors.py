"""Exceptions raised by the tollgate client, one per answer an agent acts on.

Each carries the command's JSON answer (``answer``), its exit code
(``exit_code``) and the action key (``key``), so an agent can log the key
and decide what to do without parsing messages. Messages name keys, never
payload bodies. Both transports raise the same classes with the same
answers: over HTTP the answer is the problem document's members (the
object ``--json`` prints), the exit code among them.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Mapping, Optional


class TollgateError(Exception):
    """Base class of every error the client raises."""

    #: The exit code of the ``tollgate`` command that this class stands for.
    code: Optional[int] = None

    def __init__(self, message: str, answer: Optional[Mapping[str, Any]] = None, exit_code: Optional[int] = None) -> None:
        super().__init__(message)
        self.answer: Dict[str, Any] = dict(answer or {})
        self.exit_code: Optional[int] = exit_code if exit_code is not None else self.code
        self.key: Optional[str] = self.answer.get("key")


class BinaryNotFound(TollgateError):
    """The ``tollgate`` binary is missing, not executable, or not tollgate."""


class InvalidInput(TollgateError):
    """The input broke a rule (exit 3, or 2 for a usage mistake); nothing was stored."""

    code = 3


class KeyConflict(TollgateError):
    """The key is bound to a different payload (exit 4): never an overwrite.

    ``differs`` names the payload fields that differ (kind, target, body),
    ``stored_sha256`` and ``attempted_sha256`` the two digests.
    """

    code = 4

    def __init__(self, message: str, answer: Optional[Mapping[str, Any]] = None, exit_code: Optional[int] = None) -> None:
        super().__init__(message, answer, exit_code)
        self.differs: List[str] = list(self.answer.get("differs") or [])
        self.stored_sha256: Optional[str] = self.answer.get("stored_sha256")
        self.attempted_sha256: Optional[str] = self.answer.get("attempted_sha256")


class ActionDenied(TollgateError):
    """Policy denied the action, an operator rejected it, its approval
    expired, or the key was fenced by a newer epoch (exit 5).

    ``safe_new_key`` is true when a new, reviewed operation under a new key
    is the way on; ``reason`` says why.
    """

    code = 5

    def __init__(self, message: str, answer: Optional[Mapping[str, Any]] = None, exit_code: Optional[int] = None) -> None:
        super().__init__(message, answer, exit_code)
        self.safe_new_key: bool = bool(self.answer.get("safe_new_key"))
        self.reason: Optional[str] = self.answer.get("reason")
        self.state: Optional[str] = self.answer.get("state")


class OutcomeUncertain(TollgateError):
    """A permit was issued and no outcome is confirmed (exit 6).

    Nothing re-executes it: an operator reconciles the key. Do not retry
    the action under a new key.
    """

    code = 6


class NotFound(TollgateError):
    """No such key, permit or ledger (exit 7)."""

    code = 7


class AlreadySettled(TollgateError):
    """The action already ran to a final outcome (exit 10): do not run it again."""

    code = 10


class ApprovalPending(TollgateError):
    """The action waits for an operator (exit 75). Exit and retry the same
    call later, with the same key and payload.

    ``expires_at`` is the approval deadline (UTC), ``approvers`` the quorum.
    """

    code = 75

    def __init__(self, message: str, answer: Optional[Mapping[str, Any]] = None, exit_code: Optional[int] = None) -> None:
        super().__init__(message, answer, exit_code)
        self.expires_at: Optional[_dt.datetime] = parse_time(self.answer.get("approval_expires_at"))
        self.approvers: int = int(self.answer.get("approvers") or 1)


class NotPermitted(TollgateError):
    """The caller may not do this (exit 77): an operator's act without the
    operator's key, or a role the database refuses."""

    code = 77


class Unauthenticated(NotPermitted):
    """The service refused the credential (HTTP 401, exit 77): no token,
    or one that is unknown or revoked. A subclass of ``NotPermitted``, the
    class the spawning client raises for the same answer, which reaches it
    only as exit 77."""


class LeaseLapsed(TollgateError):
    """The permit's lease ran out before the action started.

    Raised by ``Permit.validate_for_execution``: do not execute. The key is
    left for an operator to reconcile (nothing is reported for it), since
    only an operator may settle a permit whose lease lapsed.
    """


class LedgerUnavailable(TollgateError):
    """The ledger could not be reached, or stayed locked, for as long as
    the call retried (exit 75 with ``safe_to_repeat``). Nothing was
    recorded: repeat the same call later."""

    code = 75


class CommitUnknown(TollgateError):
    """The ledger did not confirm the last attempt's commit (exit 74). Ask
    ``status`` before acting; repeating the same call is also safe, since
    every write is idempotent."""

    code = 74


_BY_CODE = {c.code: c for c in (InvalidInput, KeyConflict, ActionDenied, OutcomeUncertain, NotFound, AlreadySettled, ApprovalPending, NotPermitted,
                                CommitUnknown)}


def error_for(exit_code: Optional[int], answer: Mapping[str, Any], command: str, *,
              unauthenticated: bool = False) -> TollgateError:
    """Return the exception for a command's exit code and JSON answer.

    ``unauthenticated`` is the service's 401, which the exit code (77)
    alone does not tell apart from a refusal of a known caller.
    """
    cls = _BY_CODE.get(exit_code) if exit_code is not None else None
    if exit_code == 2:
        cls = InvalidInput
    if exit_code == 75 and answer.get("safe_to_repeat"):
        cls = LedgerUnavailable
    if unauthenticated:
        cls = Unauthenticated
    key = answer.get("key")
    what = answer.get("error") or answer.get("reason") or answer.get("state") or "refused"
    message = "tollgate %s%s: %s%s" % (command, " " + key if key else "", what,
                                       " (exit %d)" % exit_code if exit_code is not None else "")
    if cls is None:
        return TollgateError(message, answer, exit_code)
    return cls(message, answer, exit_code)


def parse_time(value: Any) -> Optional[_dt.datetime]:
    """Parse the CLI's RFC 3339 UTC times (``2026-12-02T21:29:15.048Z``).

    Python 3.9's ``fromisoformat`` takes neither ``Z`` nor a fraction of
    other than 3 or 6 digits, so both are normalised first.
    """
    if not isinstance(value, str) or not value or value.startswith("0001-01-01"):
        return None
    s = value.replace("Z", "+00:00")
    if "." in s:
        head, rest = s.split(".", 1)
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        s = head + "." + (digits + "000000")[:6] + rest
    return _dt.datetime.fromisoformat(s)
