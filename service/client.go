package service

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Token is the bearer token sent with every request; empty sends none
	// (a socket peer is known by its login user).
	Token string
	// RetryFor bounds how long a call rides out a refused or reset
	// connection, a 503 or a 429 before it gives up; zero tries once.
	RetryFor time.Duration
	// AttemptTimeout bounds each attempt; zero leaves it to RetryFor.
	AttemptTimeout time.Duration
}

// Client is the service's client: it implements the ledger interface of
// the handlers (and so mcpgate.Ledger and the agent's part of cli.Ledger)
// over HTTP, so that code written against the ledger runs against a
// server unchanged. It never opens a ledger itself.
type Client struct {
	base    string // scheme://host, without a trailing slash
	display string // the URL as given, for Path
	hc      *http.Client
	opt     ClientOptions

	mu        sync.Mutex
	authority string
	self      string // the name Identify learnt
}

var _ Ledger = (*Client)(nil)

// NewClient makes a client for a URL: unix:///path/to.sock,
// https://host:port, or http://host:port on a loopback address only (a
// token must not cross a network in the clear).
func NewClient(rawURL string, opt ClientOptions) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: --url %s: %v", ledger.ErrInvalidInput, safetext.Escape(rawURL), err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := &Client{display: rawURL, opt: opt, hc: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if u.Host != "" || path == "" {
			return nil, fmt.Errorf("%w: --url %s: a socket is unix:///absolute/path.sock", ledger.ErrInvalidInput, safetext.Escape(rawURL))
		}
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		c.base = "http://tollgate.sock"
	case "https":
		c.base = "https://" + u.Host
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%w: --url %s: plain http only to a loopback address (127.0.0.1, ::1); use https", ledger.ErrInvalidInput, safetext.Escape(rawURL))
		}
		c.base = "http://" + u.Host
	default:
		return nil, fmt.Errorf("%w: --url %s: unix:///path.sock, https://host:port or http://127.0.0.1:port", ledger.ErrInvalidInput, safetext.Escape(rawURL))
	}
	if u.Scheme != "unix" && (u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil) {
		return nil, fmt.Errorf("%w: --url %s: give the server's scheme, host and port only", ledger.ErrInvalidInput, safetext.Escape(rawURL))
	}
	return c, nil
}

// Path names the service, for messages.
func (c *Client) Path() string { return c.display }

// Now is this machine's clock: the server's answers carry the ledger's
// times, and a caller reads them against its own.
func (c *Client) Now() time.Time { return time.Now() }

// Close drops the client's idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Authority is the authority the server named in its last answer (the
// operators file its ledger enforces).
func (c *Client) Authority() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authority
}

func (c *Client) setAuthority(a string) {
	if a == "" {
		return
	}
	c.mu.Lock()
	c.authority = a
	c.mu.Unlock()
}

// Identify asks the server who it takes this client for; DefaultAgent
// then answers that name.
func (c *Client) Identify(ctx context.Context) (WhoamiObject, error) {
	var obj WhoamiObject
	err := c.do(ctx, "GET", "/v1/whoami", nil, nil, &obj)
	if err == nil {
		c.mu.Lock()
		c.self = obj.Name
		c.mu.Unlock()
	}
	return obj, err
}

// DefaultAgent is the name a call that names none acts under: the one
// the server authenticated (after Identify), so that the MCP gate does
// not put a name of its own choosing in a request the server would
// refuse.
func (c *Client) DefaultAgent() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self
}

// Guard guards the action through the service.
func (c *Client) Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error) {
	// The ledger's own bounds, before anything is sent: a string that is
	// not UTF-8 would be sent as U+FFFD and guarded as another payload.
	if _, err := ledger.CheckGuardInput(key, p, opt); err != nil {
		return ledger.Answer{}, err
	}
	pj, err := json.Marshal(p)
	if err != nil {
		return ledger.Answer{}, err
	}
	req := guardRequest{Payload: pj, Redact: opt.Redact, Agent: opt.Agent}
	if len(opt.Context) > 0 {
		req.Context = opt.Context.Canonical()
	}
	if opt.Lease != 0 {
		req.Lease = opt.Lease.String()
	}
	var obj GuardObject
	err = c.do(ctx, "POST", "/v1/guard", map[string]string{HeaderIdempotencyKey: key}, req, &obj)
	c.setAuthority(obj.Authority)
	return obj.Answer, err
}

// Report reports the outcome through the service.
func (c *Client) Report(ctx context.Context, key, permitID string, outcome ledger.Outcome, opt ledger.ReportOptions) (ledger.ReportAnswer, error) {
	if err := ledger.CheckReportInput(key, outcome, opt); err != nil {
		return ledger.ReportAnswer{}, err
	}
	req := reportRequest{Key: key, Permit: permitID, Outcome: string(outcome), Ref: opt.Ref, Result: opt.Result}
	if opt.Latency != 0 {
		req.Latency = opt.Latency.String()
	}
	var obj ReportObject
	err := c.do(ctx, "POST", "/v1/report", nil, req, &obj)
	return obj.ReportAnswer, err
}

// Status reads a key through the service.
func (c *Client) Status(ctx context.Context, key string) (ledger.Detail, error) {
	if _, err := ledger.ParseKey(key); err != nil {
		return ledger.Detail{}, err
	}
	var obj StatusObject
	err := c.do(ctx, "GET", "/v1/actions/"+url.PathEscape(key), nil, nil, &obj)
	c.setAuthority(obj.Authority)
	return obj.Detail, err
}

// Epoch reads the active epoch through the service.
func (c *Client) Epoch(ctx context.Context) (ledger.EpochInfo, error) {
	var obj EpochObject
	err := c.do(ctx, "GET", "/v1/epoch", nil, nil, &obj)
	return obj.Info(), err
}

// newAttempt is a random attempt id.
func newAttempt() string {
	var b [16]byte
	crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// do makes one call: it sends the request, retrying within RetryFor
// what is safe to retry (every call here is idempotent under its key),
// and decodes an answer into out or returns the refusal as an error. An
// answer that is not a refusal (pending, executing, denied, uncertain, a
// late report) decodes into out with a nil error, as the ledger returns
// it.
func (c *Client) do(ctx context.Context, method, path string, headers map[string]string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	attempt := newAttempt()
	deadline := time.Now().Add(c.opt.RetryFor)
	backoff := 100 * time.Millisecond
	for {
		status, hdr, b, err := c.once(ctx, method, path, headers, attempt, body)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err = transportError(c.display, err); !errors.Is(err, ledger.ErrUnavailable) && !errors.Is(err, ledger.ErrCommitUnknown) {
				return err
			}
		case status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests:
			err = decodeAnswer(status, hdr, b, out)
			if p, ok := asProblem(err); ok {
				wait = p.RetryAfter
			}
		default:
			return decodeAnswer(status, hdr, b, out)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		wait = max(wait, backoff/2+time.Duration(rand.Int64N(int64(backoff/2)+1)))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(min(left, wait)):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// once is one attempt.
func (c *Client) once(ctx context.Context, method, path string, headers map[string]string, attempt string, body []byte) (int, http.Header, []byte, error) {
	if c.opt.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opt.AttemptTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set(HeaderAttempt, attempt)
	if c.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// transportError is a call that got no answer: unavailable when the
// request cannot have reached the server (refused, no socket), commit
// unknown when it may have been received and the answer was lost.
func transportError(where string, err error) error {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	if errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) {
		// Not a fault a retry cures: the server is not the one trusted.
		return fmt.Errorf("the service at %s is not trusted: %v (its certificate must chain to a CA this machine trusts; SSL_CERT_FILE names one)", safetext.Escape(where), err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("%w: the service at %s is not answering: %v", ledger.ErrUnavailable, safetext.Escape(where), err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("%w: the service at %s: %v", ledger.ErrUnavailable, safetext.Escape(where), err)
	}
	return fmt.Errorf("%w: the service at %s did not answer: %v", ledger.ErrCommitUnknown, safetext.Escape(where), err)
}

// decodeAnswer reads a response: a 2xx body into out; a problem whose
// members are an answer (no "error" member) into out too; any other
// problem as the error the ledger would have returned (a conflict and a
// fence typed as the ledger types them, the rest as *Problem).
func decodeAnswer(status int, hdr http.Header, b []byte, out any) error {
	ct := hdr.Get("Content-Type")
	if status/100 == 2 && strings.HasPrefix(ct, "application/json") {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("the service's answer does not read: %v", err)
		}
		return nil
	}
	if !strings.HasPrefix(ct, "application/problem+json") {
		return &Problem{Type: ProblemError, Status: status, Members: map[string]any{
			"error": fmt.Sprintf("the service answered %d %s without a problem document", status, safetext.Escape(http.StatusText(status)))}}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("the service's problem document does not read: %v", err)
	}
	p := &Problem{Status: status, Members: m}
	if s, ok := m["type"].(string); ok {
		p.Type = ProblemType(s)
	}
	if s, ok := m["detail"].(string); ok {
		p.Detail = s
	}
	for _, k := range []string{"type", "title", "status", "detail"} {
		delete(m, k)
	}
	if ra, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && ra >= 0 {
		p.RetryAfter = time.Duration(ra) * time.Second
	}
	if _, refusal := m["error"]; !refusal {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("the service's answer does not read: %v", err)
		}
		return nil
	}
	switch {
	case p.Type == ProblemKeyReused:
		var ce struct {
			Key          string       `json:"key"`
			Stored       string       `json:"stored_sha256"`
			Attempted    string       `json:"attempted_sha256"`
			State        ledger.State `json:"state"`
			Differs      []string     `json:"differs"`
			DiffersKnown bool         `json:"differs_known"`
			ID           int64        `json:"conflict_id"`
		}
		if json.Unmarshal(b, &ce) == nil {
			if !ce.DiffersKnown {
				ce.Differs = nil
			}
			return &ledger.ConflictError{Key: ce.Key, StoredSHA256: ce.Stored, AttemptSHA: ce.Attempted, State: ce.State, Differs: ce.Differs, ConflictID: ce.ID}
		}
	case p.Type == ProblemDenied && m["error"] == "fenced":
		var fe struct {
			Key         string `json:"key"`
			KeyEpoch    string `json:"key_epoch"`
			ActiveEpoch string `json:"active_epoch"`
			Reason      string `json:"reason"`
			ID          int64  `json:"fenced_id"`
		}
		if json.Unmarshal(b, &fe) == nil {
			return &ledger.FencedError{Key: fe.Key, KeyEpoch: fe.KeyEpoch, ActiveEpoch: fe.ActiveEpoch, Reason: fe.Reason, FencedID: fe.ID}
		}
	}
	return p
}
