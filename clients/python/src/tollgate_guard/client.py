"""The client: an agent's guard, report, status and epoch calls, each
answer a value or one of the exceptions of ``errors``, over one of two
transports that give the same answers and raise the same exceptions:

* the service (``url=``, or ``$TOLLGATE_URL``): HTTP to ``tollgate serve``
  with the standard library, one keep-alive connection, no binary;
* the binary (``binary=``, ``db=``): a ``tollgate`` process per call,
  as a cron-driven agent's would be.

The ledger, not this object, holds the state, so an agent that crashes
and starts again asks the same questions and gets the same answers.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import time
import warnings
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type, Union

from ._http import HTTPTransport, env_settings, parse_duration, read_token_file
from ._spawn import SpawnTransport
from .errors import BinaryNotFound, InvalidInput, LeaseLapsed, NotPermitted, TollgateError, parse_time

Body = Union[str, Mapping[str, Any], Sequence[Any]]

#: Outcomes a permit holder reports.
OUTCOMES = ("succeeded", "failed", "unknown")


def authority_key(epoch: str, logical: str) -> str:
    """Return the epoch-qualified key ``hsr1:<epoch>:<logical>``.

    ``logical`` is the destination's stable business key (for example
    ``refund:ledger-entry-42``); keep passing that one to the destination
    as its own idempotency key.
    """
    if not epoch or not logical:
        raise ValueError("authority_key needs an epoch and a logical key")
    return "hsr1:%s:%s" % (epoch, logical)


def _body_text(body: Body) -> str:
    """A body is text; a mapping or list is sent as canonical JSON (sorted
    keys, no spaces), so the same arguments always give the same digest."""
    if isinstance(body, str):
        return body
    if isinstance(body, (bytes, bytearray)):
        raise TypeError("body must be text (str) or JSON-able data, not bytes")
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _millis(seconds: Union[float, _dt.timedelta, None]) -> Optional[int]:
    """A duration in whole milliseconds, as both transports send it."""
    if seconds is None:
        return None
    if isinstance(seconds, _dt.timedelta):
        seconds = seconds.total_seconds()
    return max(0, round(seconds * 1000))


#: The CLI's defaults for a call's retry budget and each attempt's bound
#: (cli.DefaultRetryFor, cli.DefaultAttemptTimeout), in seconds.
DEFAULT_RETRY_FOR = 30.0
DEFAULT_ATTEMPT_TIMEOUT = 10.0


class Client:
    """An agent's client of tollgate, over the service or the binary.

    The service: ``url`` is ``unix:///path/to.sock``,
    ``https://host:port`` or ``http://127.0.0.1:port`` (plain HTTP on a
    loopback address only); ``token`` is a bearer token (``tollgate agents
    token create NAME``), or ``token_file`` names a file holding one;
    ``ca_file`` is a PEM file of the CAs to trust for ``https``, in place
    of the system's. When neither ``url`` nor ``binary`` nor ``db`` is given,
    ``$TOLLGATE_URL`` and ``$TOLLGATE_TOKEN`` are read as the CLI reads
    them. Calls go over one keep-alive connection (threads sharing a
    client take turns on it; give each thread its own client to call at
    once) and no binary is needed. ``close()`` or a ``with`` block closes
    the connection.

    The binary: ``binary`` is the path of the ``tollgate`` binary; when
    omitted, ``$TOLLGATE_BIN``, then ``tollgate`` on ``PATH``. ``db`` is
    the ledger (a file path or a ``postgres://`` URL); when omitted the
    binary uses ``$TOLLGATE_DB``. ``timeout`` bounds each command in
    seconds; ``env`` is the processes' environment.

    Both: ``agent`` names the calling agent in the evidence (over the
    service, a name other than the one the service authenticated needs an
    operator's ``tollgate agents allow``). ``retry_for`` (seconds) is how
    long a call rides out a transient fault (a refused or reset
    connection, a 503 or 429, a database restarting, a locked ledger)
    before it raises ``LedgerUnavailable`` or ``CommitUnknown``;
    ``attempt_timeout`` (seconds) how long one attempt may wait before it
    is abandoned and made again within ``retry_for``. ``None`` keeps the
    CLI's defaults (``$TOLLGATE_RETRY_FOR``, ``$TOLLGATE_ATTEMPT_TIMEOUT``,
    else 30 s and 10 s).
    """

    def __init__(self, binary: Optional[str] = None, *, db: Optional[str] = None, agent: Optional[str] = None,
                 timeout: float = 60.0, env: Optional[Mapping[str, str]] = None,
                 retry_for: Optional[float] = None, attempt_timeout: Optional[float] = None,
                 url: Optional[str] = None, token: Optional[str] = None, token_file: Optional[str] = None,
                 ca_file: Optional[str] = None) -> None:
        environ = env if env is not None else os.environ
        env_url, env_token = env_settings(environ)
        if url is not None and (binary is not None or db is not None):
            raise InvalidInput("invalid input: url= and binary=/db= each name where the calls go: give one", {}, 2)
        # As the CLI decides: --url, else --db (a ledger named here wins
        # over the environment's service), else $TOLLGATE_URL.
        if url is None and binary is None and db is None:
            url = env_url
        self.agent = agent
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        self.retry_for = retry_for
        self.attempt_timeout = attempt_timeout
        self.url: Optional[str] = url
        self.db = db
        self.binary: Optional[str] = None
        self._transport: Union[HTTPTransport, SpawnTransport]
        if url is not None:
            if token is not None and token_file is not None:
                raise InvalidInput("invalid input: give token= or token_file=, not both", {}, 2)
            if token_file is not None:
                token = read_token_file(token_file)
            elif token is None:
                token = env_token
            if retry_for is None:
                retry_for = _env_duration(environ, "TOLLGATE_RETRY_FOR", DEFAULT_RETRY_FOR)
            if attempt_timeout is None:
                attempt_timeout = _env_duration(environ, "TOLLGATE_ATTEMPT_TIMEOUT", DEFAULT_ATTEMPT_TIMEOUT)
            if retry_for < 0 or attempt_timeout < 0:
                raise InvalidInput("invalid input: retry_for and attempt_timeout are not negative", {}, 2)
            # An attempt_timeout of 0 bounds an attempt by timeout alone.
            self._transport = HTTPTransport(url, token=token, ca_file=ca_file, retry_for=retry_for,
                                            attempt_timeout=attempt_timeout or timeout)
            return
        if token is not None or token_file is not None or ca_file is not None:
            raise InvalidInput("invalid input: token=, token_file= and ca_file= are for the service: give url= "
                               "or set TOLLGATE_URL", {}, 2)
        # The binary is found in this process's environment, as before
        # env= existed for the service's settings.
        path = binary or os.environ.get("TOLLGATE_BIN") or shutil.which("tollgate")
        if not path:
            raise BinaryNotFound("no tollgate binary: pass binary=, set TOLLGATE_BIN, or put tollgate on PATH "
                                 "(or pass url= for tollgate serve)")
        self.binary = path
        self._transport = SpawnTransport(path, db=db, timeout=timeout, env=env, retry_for=retry_for,
                                         attempt_timeout=attempt_timeout)

    def close(self) -> None:
        """Close the service connection the client keeps (nothing for the
        binary); a later call opens another."""
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def _call(self, command: Sequence[str], args: Sequence[str], stdin: Optional[str] = None) -> Dict[str, Any]:
        """Run any tollgate command through the binary (an operator's, in
        tests); the service serves an agent's calls only."""
        if not isinstance(self._transport, SpawnTransport):
            raise NotPermitted("the service serves an agent's calls only (guard, report, status, epoch show); "
                               "run operators' commands against the ledger")
        return self._transport.call(command, args, stdin)

    def guard(self, key: str, *, kind: str, target: str, body: Body, agent: Optional[str] = None,
              lease: Union[float, _dt.timedelta, None] = None, redact: bool = False,
              failure_types: Union[Type[BaseException], Tuple[Type[BaseException], ...]] = (),
              context: Optional[Dict[str, Any]] = None, attempt_id: Optional[str] = None) -> "Guard":
        """Return a context manager that enters only with a permit.

        ``with client.guard(key, kind=..., target=..., body=...) as permit:``
        raises ``ApprovalPending``, ``ActionDenied``, ``OutcomeUncertain``,
        ``AlreadySettled`` or ``KeyConflict`` instead of entering. Leaving
        the block reports ``succeeded``; an exception of one of
        ``failure_types`` reports ``failed``; any other exception reports
        ``unknown`` (the key becomes uncertain, for an operator). The
        exception is always re-raised. ``lease`` (seconds) is how long the
        permit holder has to report. ``context`` (a dict of strings,
        numbers, booleans and lists of strings) is what policy may read
        beside the payload; it is bound to the key like the payload.
        ``attempt_id`` (service only) is the id sent on every try of this
        call; a fresh random one by default. Pass one you stored to have a
        call made again after a crash given the permit its first try was
        issued.
        """
        return Guard(self, key, kind=kind, target=target, body=body, agent=agent or self.agent, lease=lease,
                     redact=redact, failure_types=failure_types, context=context, attempt_id=attempt_id)

    def request_permit(self, key: str, *, kind: str, target: str, body: Body, agent: Optional[str] = None,
                       lease: Union[float, _dt.timedelta, None] = None, redact: bool = False,
                       context: Optional[Dict[str, Any]] = None, attempt_id: Optional[str] = None) -> "Permit":
        """Guard once and return the permit, or raise what the answer says.
        Prefer ``guard``, which also reports."""
        payload = {"kind": kind, "target": target, "body": _body_text(body)}
        answer = self._transport.guard(key, payload, agent=agent or self.agent, lease_ms=_millis(lease), redact=redact,
                                       context=context, attempt_id=attempt_id)
        return Permit(self, answer)

    def report(self, key: str, permit_id: str, outcome: str, *, ref: Optional[str] = None,
               latency: Union[float, _dt.timedelta, None] = None) -> Dict[str, Any]:
        """Report a permitted action's outcome: succeeded, failed or unknown."""
        if outcome not in OUTCOMES:
            raise ValueError("outcome must be one of %s (got %r)" % (", ".join(OUTCOMES), outcome))
        return self._transport.report(key, permit_id, outcome, ref=ref, latency_ms=_millis(latency))

    def status(self, key: str) -> Dict[str, Any]:
        """Everything the ledger knows about a key (``tollgate status``)."""
        return self._transport.status(key)

    def epoch(self) -> Optional[str]:
        """The active operator epoch, or None when none was activated
        (also before the ledger exists: an agent's first run on a new
        ledger has nothing to fence against)."""
        return self._transport.epoch()


def _env_duration(environ: Mapping[str, str], name: str, default: float) -> float:
    value = environ.get(name)
    return parse_duration(name, value) if value else default


class Permit:
    """A permit to execute one action once, before its lease runs out."""

    def __init__(self, client: Client, answer: Mapping[str, Any]) -> None:
        self._client = client
        self.answer: Dict[str, Any] = dict(answer)
        self.key: str = answer["key"]
        self.permit_id: str = answer["permit_id"]
        self.payload_sha256: str = answer.get("payload_sha256", "")
        self.lease_until: Optional[_dt.datetime] = parse_time(answer.get("lease_until"))
        self.reported: Optional[str] = None

    def validate_for_execution(self, now: Optional[_dt.datetime] = None) -> None:
        """Raise ``LeaseLapsed`` when the lease has run out: do not execute.

        Call it as the last step before the side effect.
        """
        now = now or _dt.datetime.now(_dt.timezone.utc)
        if self.lease_until is None or now >= self.lease_until:
            raise LeaseLapsed("tollgate permit for %s: the lease ran out at %s; do not execute (an operator reconciles the key)"
                              % (self.key, self.lease_until.isoformat() if self.lease_until else "?"), self.answer)

    def report(self, outcome: str, *, ref: Optional[str] = None, latency: Union[float, _dt.timedelta, None] = None) -> Dict[str, Any]:
        """Report the outcome by hand; leaving a ``guard`` block then reports nothing more.

        ``ref`` is a safe reference to the external effect (never the body).
        """
        answer = self._client.report(self.key, self.permit_id, outcome, ref=ref, latency=latency)
        self.reported = outcome
        return answer


class Guard:
    """The context manager ``Client.guard`` returns."""

    def __init__(self, client: Client, key: str, *, kind: str, target: str, body: Body, agent: Optional[str],
                 lease: Union[float, _dt.timedelta, None], redact: bool,
                 failure_types: Union[Type[BaseException], Tuple[Type[BaseException], ...]],
                 context: Optional[Dict[str, Any]] = None, attempt_id: Optional[str] = None) -> None:
        self._client = client
        self._key = key
        self._request = dict(kind=kind, target=target, body=body, agent=agent, lease=lease, redact=redact,
                             context=context, attempt_id=attempt_id)
        self._failure_types = failure_types if isinstance(failure_types, tuple) else (failure_types,)
        self._started = 0.0
        self.permit: Optional[Permit] = None

    def __enter__(self) -> Permit:
        self.permit = self._client.request_permit(self._key, **self._request)
        self._started = time.monotonic()
        return self.permit

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        permit = self.permit
        if permit is None or permit.reported is not None:
            return False
        if exc_type is not None and issubclass(exc_type, LeaseLapsed):
            return False  # not executed, and only an operator settles a lapsed permit
        if exc_type is None:
            outcome = "succeeded"
        elif self._failure_types and issubclass(exc_type, self._failure_types):
            outcome = "failed"
        else:
            outcome = "unknown"
        latency = time.monotonic() - self._started
        try:
            permit.report(outcome, latency=latency)
        except TollgateError as report_error:
            if exc_type is None:
                raise
            # The block's own exception is the one the caller must see.
            warnings.warn("tollgate: reporting %s for %s failed: %s" % (outcome, permit.key, report_error), RuntimeWarning)
        return False
