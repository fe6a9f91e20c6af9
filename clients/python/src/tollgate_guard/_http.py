"""The service transport: an agent's calls to ``tollgate serve`` over HTTP
with the standard library's ``http.client``, no binary spawned.

One keep-alive connection per client, reused call after call (a process
per call is what this transport exists to avoid) and made again after any
failure. Each call carries a random attempt id (``Tollgate-Attempt``),
the same on every retry of that call, so that a guard whose answer was
lost in transit is given the permit its first try was issued and nobody
else is (SPEC 12). A refused or reset connection, a 503 and a 429 are
retried with backoff within ``retry_for``, a ``Retry-After`` honoured, as
the Go client (``service/client.go``) and the TypeScript client do.
"""

from __future__ import annotations

import datetime
import email.utils
import errno
import http.client
import ipaddress
import json
import os
import random
import re
import secrets
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

from .errors import CommitUnknown, InvalidInput, LedgerUnavailable, TollgateError, error_for

#: The header that carries a guard's key (IETF idempotency-key draft).
HEADER_KEY = "Idempotency-Key"
#: The header that carries the client's attempt id for one call.
HEADER_ATTEMPT = "Tollgate-Attempt"

#: The ledger's rule for an attempt id (ledger.CheckAttempt): 16 to 128
#: characters of A-Z, a-z, 0-9, '-', '_', '.', ':'.
_ATTEMPT = re.compile(r"[A-Za-z0-9._:-]{16,128}")

#: The members RFC 9457 adds to an answer object; the rest is what
#: ``--json`` prints.
_PROBLEM_MEMBERS = ("type", "title", "status", "detail")

def new_attempt_id() -> str:
    """A fresh attempt id: 128 random bits, URL-safe base64 (as the
    TypeScript client makes them)."""
    return secrets.token_urlsafe(16)


def check_attempt_id(attempt: str) -> str:
    """Refuse an attempt id the service would refuse, before sending it."""
    if not isinstance(attempt, str) or not _ATTEMPT.fullmatch(attempt):
        raise InvalidInput("invalid input: an attempt id is 16 to 128 of A-Z, a-z, 0-9, '-', '_', '.' and ':' "
                           "(generate one per call, at random, and send it on every retry of that call)", {}, 3)
    return attempt


_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h)")


def parse_duration(name: str, value: str) -> float:
    """Seconds in a Go duration (``30s``, ``1m30s``, ``500ms``, ``0``), as
    the CLI reads ``$TOLLGATE_RETRY_FOR``; at most an hour, like the CLI."""
    v = value.strip()
    total, at = 0.0, 0
    if v != "0":
        for m in _DURATION_PART.finditer(v):
            if m.start() != at:
                break
            total += float(m.group(1)) * _UNITS[m.group(2)]
            at = m.end()
        if at == 0 or at != len(v):
            raise InvalidInput("invalid input: %s=%r: a duration such as 30s or 500ms" % (name, value), {}, 3)
    if total > 3600:
        raise InvalidInput("invalid input: %s is at most 1h (got %r)" % (name, value), {}, 3)
    return total


class Endpoint(NamedTuple):
    """Where the service is: a socket path, or a scheme, host and port."""

    scheme: str  # "unix", "http" or "https"
    host: str
    port: int
    socket_path: str
    display: str


def _is_loopback(host: str) -> bool:
    """An IP literal on the loopback network, as the Go client says (a name
    such as ``localhost`` may resolve anywhere)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_url(url: str) -> Endpoint:
    """Parse ``unix:///path/to.sock``, ``https://host:port``, or
    ``http://`` to a loopback address (a token never crosses a network in
    the clear); anything else is ``InvalidInput`` naming the rule."""
    forms = "unix:///path/to.sock, https://host:port or http://127.0.0.1:port"
    if not isinstance(url, str) or not url:
        raise InvalidInput("invalid input: no service URL: pass url= or set TOLLGATE_URL (%s)" % forms, {}, 2)
    if url.startswith("unix:"):
        path = url[len("unix:"):]
        if path.startswith("//"):
            path = path[2:]
        if not path.startswith("/") or "?" in path or "#" in path:
            raise InvalidInput("invalid input: url %r: a socket is unix:///absolute/path.sock" % url, {}, 2)
        return Endpoint("unix", "tollgate", 0, urllib.parse.unquote(path), url)
    try:
        u = urllib.parse.urlsplit(url)
        port = u.port
    except ValueError as exc:
        raise InvalidInput("invalid input: url %r: %s (%s)" % (url, exc, forms), {}, 2) from None
    if u.scheme not in ("http", "https") or not u.hostname:
        raise InvalidInput("invalid input: url %r: %s" % (url, forms), {}, 2)
    if u.username is not None or u.password is not None or u.query or u.fragment or u.path not in ("", "/"):
        raise InvalidInput("invalid input: url %r: give the server's scheme, host and port only "
                           "(the token goes in token=, token_file= or TOLLGATE_TOKEN)" % url, {}, 2)
    if u.scheme == "http" and not _is_loopback(u.hostname):
        raise InvalidInput("invalid input: url %r: plain http only to a loopback address (127.0.0.1, ::1); use https"
                           % url, {}, 2)
    return Endpoint(u.scheme, u.hostname, port or (443 if u.scheme == "https" else 80), "", url)


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection over a Unix socket (``tollgate serve --listen
    unix:PATH``), where the kernel tells the server who the peer is."""

    def __init__(self, path: str, timeout: Optional[float] = None) -> None:
        super().__init__("tollgate", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class _NotSent(Exception):
    """A try that cannot have reached the server (refused, no socket, no
    such host): nothing was recorded."""


class _Sent(Exception):
    """A try whose answer never came after the request may have reached the
    server (reset, timeout, closed): it may have been recorded."""


class _Fatal(Exception):
    """A failure no retry cures: a certificate this machine does not trust,
    a socket this user may not open."""


def _classify_connect(exc: BaseException) -> Exception:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return _Fatal("the service is not trusted: %s (its certificate must chain to a CA this machine trusts: "
                      "ca_file= or SSL_CERT_FILE names one)" % exc)
    if isinstance(exc, (PermissionError, NotADirectoryError)) or getattr(exc, "errno", None) in (errno.ENOTSOCK,):
        return _Fatal("%s; a retry will not help" % exc)
    if isinstance(exc, ssl.SSLError) and not isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
        return _Fatal("TLS with the service failed: %s" % exc)
    if isinstance(exc, OSError):
        # Refused, no socket, no such host, no route, a timeout: the
        # connection was never made, so the request was not sent.
        return _NotSent(str(exc) or type(exc).__name__)
    raise exc


class Response(NamedTuple):
    """An answer as received."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class HTTPTransport:
    """The agent's calls over HTTP: the Client's transport for ``url=``."""

    def __init__(self, url: str, *, token: Optional[str], ca_file: Optional[str], retry_for: float,
                 attempt_timeout: float) -> None:
        self.endpoint = parse_url(url)
        if token is not None and (not token or not all("\x21" <= ch <= "\x7e" for ch in token)):
            raise InvalidInput("invalid input: the token is printable ASCII without spaces or line breaks "
                               "(as tollgate agents token create prints it)", {}, 2)
        self._token = token
        self._context: Optional[ssl.SSLContext] = None
        if self.endpoint.scheme == "https":
            self._context = ssl.create_default_context(cafile=ca_file)
        elif ca_file:
            raise InvalidInput("invalid input: ca_file is for an https:// url", {}, 2)
        self.retry_for = retry_for
        self.attempt_timeout = attempt_timeout
        self._lock = threading.Lock()
        self._conn: Optional[http.client.HTTPConnection] = None
        self._pid = os.getpid()

    def close(self) -> None:
        """Close the kept-alive connection; the next call opens another."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _new_connection(self, timeout: float) -> http.client.HTTPConnection:
        ep = self.endpoint
        if ep.scheme == "unix":
            return UnixHTTPConnection(ep.socket_path, timeout=timeout)
        if ep.scheme == "https":
            return http.client.HTTPSConnection(ep.host, ep.port, timeout=timeout, context=self._context)
        return http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)

    def _once(self, method: str, path: str, headers: Dict[str, str], body: Optional[bytes]) -> Response:
        """One try on the kept-alive connection. A kept connection the
        server closed while idle fails the first write or read: the try is
        then made once more on a new connection at once (it carries the
        same attempt id, so a try that did arrive is answered as the
        first)."""
        timeout = self.attempt_timeout
        with self._lock:
            if self._pid != os.getpid():
                # A forked child must not talk on its parent's connection
                # (their answers would interleave): it opens its own, and
                # leaves the parent's for the parent.
                self._conn, self._pid = None, os.getpid()
            for fresh in (False, True):
                if self._conn is not None and self._conn.sock is None:
                    self._drop()  # http.client closed it (the answer said so)
                reused = self._conn is not None
                if not reused:
                    conn = self._new_connection(timeout)
                    try:
                        conn.connect()
                    except BaseException as exc:
                        conn.close()
                        raise _classify_connect(exc) from None
                    self._conn = conn
                conn = self._conn
                if conn is None or conn.sock is None:
                    raise _NotSent("the connection closed as it was made")
                conn.sock.settimeout(timeout)
                try:
                    conn.request(method, path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                except (OSError, http.client.HTTPException) as exc:
                    self._drop()
                    stale = isinstance(exc, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
                                             ConnectionAbortedError))
                    if reused and stale and not fresh:
                        continue
                    raise _Sent(str(exc) or type(exc).__name__) from None
                if resp.will_close:
                    self._drop()
                return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        raise AssertionError("unreachable")

    def guard(self, key: str, payload: Mapping[str, str], *, agent: Optional[str], lease_ms: Optional[int],
              redact: bool, context: Optional[Mapping[str, Any]], attempt_id: Optional[str]) -> Dict[str, Any]:
        """POST /v1/guard: the key in Idempotency-Key, the attempt id in
        Tollgate-Attempt (the same on every retry of this call)."""
        body: Dict[str, Any] = {"payload": dict(payload)}
        if context:
            body["context"] = dict(context)
        if lease_ms is not None:
            body["lease"] = "%dms" % lease_ms
        if redact:
            body["redact"] = True
        if agent:
            body["agent"] = agent
        attempt = check_attempt_id(attempt_id) if attempt_id is not None else new_attempt_id()
        if key != key.strip() or not all(" " <= ch <= "~" for ch in key):
            # Not a key (SPEC 1), and not a header value as sent either
            # (the server trims one): refused here, as the CLI refuses it.
            msg = "invalid input: key %r is not a logical key or hsr1:<epoch>:<logical>" % key
            raise InvalidInput("tollgate guard: %s (exit 3)" % msg, {"error": msg, "exit_code": 3}, 3)
        return self.call("guard", "POST", "/v1/guard", key=key, body=body, write=True,
                         headers={HEADER_KEY: key, HEADER_ATTEMPT: attempt})

    def report(self, key: str, permit_id: str, outcome: str, *, ref: Optional[str],
               latency_ms: Optional[int]) -> Dict[str, Any]:
        """POST /v1/report."""
        body: Dict[str, Any] = {"key": key, "permit": permit_id, "outcome": outcome}
        if ref:
            body["ref"] = ref
        if latency_ms is not None:
            body["latency"] = "%dms" % latency_ms
        return self.call("report", "POST", "/v1/report", key=key, body=body, write=True)

    def status(self, key: str) -> Dict[str, Any]:
        """GET /v1/actions/{key}."""
        return self.call("status", "GET", "/v1/actions/" + urllib.parse.quote(key, safe=":"), key=key)

    def epoch(self) -> Optional[str]:
        """GET /v1/epoch: the active epoch, or None."""
        answer = self.call("epoch show", "GET", "/v1/epoch")
        return answer.get("epoch") or None

    def call(self, what: str, method: str, path: str, *, key: Optional[str] = None, body: Any = None,
             headers: Optional[Mapping[str, str]] = None, write: bool = False) -> Dict[str, Any]:
        """Make one call, retrying what is safe to retry within retry_for,
        and return its answer object or raise what the answer says.

        ``write`` says whether a lost answer can hide a commit: when an
        earlier try of a write may have reached the server, running out of
        retries is ``CommitUnknown``, never "nothing was recorded",
        whatever the last try met.
        """
        hdrs = {"Accept": "application/json, application/problem+json"}
        if self._token:
            hdrs["Authorization"] = "Bearer " + self._token
        hdrs.update(headers or {})
        data: Optional[bytes] = None
        if body is not None:
            try:
                data = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInput("tollgate %s%s: invalid input: the payload or context is not valid UTF-8 (a lone surrogate)"
                                   % (what, " " + key if key else ""), {"key": key} if key else {}, 3) from None
            hdrs["Content-Type"] = "application/json"
        where = self.endpoint.display + (" for " + key if key else "")
        deadline = time.monotonic() + self.retry_for
        maybe_committed = False
        tries = 0
        while True:
            wait, server_wait = _backoff(tries), False
            failure: TollgateError
            try:
                resp = self._once(method, path, hdrs, data)
            except _Fatal as exc:
                raise TollgateError("tollgate %s: cannot reach the service at %s: %s" % (what, where, exc)) from None
            except (_NotSent, _Sent) as exc:
                sent = isinstance(exc, _Sent)
                maybe_committed = maybe_committed or (sent and write)
                failure = _transport_failure(what, where, key, str(exc), sent and write)
            else:
                obj = _answer_object(resp)
                retry_after = _retry_after(resp.headers.get("retry-after"))
                if resp.status in (429, 503) or (resp.status in (502, 504) and obj is None):
                    if obj is None:
                        obj = {"error": "the service answered %d" % resp.status, "exit_code": 75, "safe_to_repeat": True}
                    failure = error_for(_exit_code(obj, 75), _strip_problem(obj), what)
                    if retry_after is not None:
                        wait, server_wait = retry_after, True
                else:
                    if obj is None:
                        raise TollgateError("tollgate %s: the service at %s answered %d without a JSON object (is it tollgate serve?)"
                                            % (what, self.endpoint.display, resp.status))
                    code = _exit_code(obj, None)
                    if 200 <= resp.status < 300 and code in (None, 0):
                        return obj
                    raise error_for(code, _strip_problem(obj), what, unauthenticated=resp.status == 401)
            # The last try is made at the deadline, unless the server asked
            # for a wait (Retry-After) longer than the budget has left.
            left = deadline - time.monotonic()
            if left <= 0 or (server_wait and wait > left):
                if maybe_committed and isinstance(failure, LedgerUnavailable):
                    raise CommitUnknown("tollgate %s: an earlier try's answer was lost and the service at %s then stayed "
                                        "unavailable (%s); ask status before acting, or repeat the same call (it is idempotent)"
                                        % (what, where, failure), _committed_unknown(key, str(failure)), 74)
                raise failure
            time.sleep(min(wait, left))
            tries += 1


def _backoff(tries: int) -> float:
    """Exponential backoff from 100 ms to 2 s, with jitter (seconds)."""
    base = min(2.0, 0.1 * 2 ** min(tries, 5))
    return base / 2 + random.random() * base / 2


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delta-seconds (as tollgate serve sends it)
    or an HTTP date (as a proxy in front of it may), at most an hour."""
    if value is None:
        return None
    v = value.strip()
    if v.isdigit():
        return min(float(v), 3600.0)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, min((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds(), 3600.0))


def _answer_object(resp: Response) -> Optional[Dict[str, Any]]:
    """The answer's JSON object, or None when it is not one."""
    ctype = resp.headers.get("content-type", "").lower()
    if not (ctype.startswith("application/json") or ctype.startswith("application/problem+json")):
        return None
    try:
        obj = json.loads(resp.body.decode("utf-8"))
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _exit_code(obj: Mapping[str, Any], default: Optional[int]) -> Optional[int]:
    code = obj.get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else default


def _strip_problem(obj: Mapping[str, Any]) -> Dict[str, Any]:
    """A problem document's extension members: the object the CLI prints
    for the same answer."""
    out = dict(obj)
    if isinstance(out.get("type"), str) and isinstance(out.get("status"), int):
        detail = out.get("detail")
        for name in _PROBLEM_MEMBERS:
            out.pop(name, None)
        if "error" not in out and isinstance(detail, str):
            out["error"] = detail
    return out


def _committed_unknown(key: Optional[str], message: str) -> Dict[str, Any]:
    answer: Dict[str, Any] = {"error": message, "exit_code": 74, "committed": "unknown"}
    if key:
        answer["key"] = key
    return answer


def _transport_failure(what: str, where: str, key: Optional[str], reason: str, may_have_committed: bool) -> TollgateError:
    """The error for a try that got no answer, as the CLI words it: commit
    unknown (74) when a write may have arrived, else unavailable (75, safe
    to repeat)."""
    if may_have_committed:
        msg = ("tollgate %s: the answer from %s was lost (%s); ask status before acting, or repeat the same call "
               "(it is idempotent)" % (what, where, reason))
        return CommitUnknown(msg, _committed_unknown(key, msg), 74)
    msg = "tollgate %s: the service at %s is not answering (%s); nothing was recorded, repeat the same call later" % (
        what, where, reason)
    answer: Dict[str, Any] = {"error": msg, "exit_code": 75, "safe_to_repeat": True}
    if key:
        answer["key"] = key
    return LedgerUnavailable(msg, answer, 75)


def env_settings(environ: Mapping[str, str]) -> Tuple[Optional[str], Optional[str]]:
    """TOLLGATE_URL and TOLLGATE_TOKEN, as the CLI reads them ("" is unset)."""
    return environ.get("TOLLGATE_URL") or None, environ.get("TOLLGATE_TOKEN") or None


def read_token_file(path: str) -> str:
    """A token file's token, trimmed as the CLI trims ``--token-file``."""
    try:
        with open(os.fspath(path), encoding="utf-8") as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("invalid input: token_file: %s" % exc, {}, 3) from None
