package service

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Bounds on what a request may make the server read.
const (
	// maxGuardBody is a guard's body: the three payload fields at their
	// longest, each code point escaped as a surrogate pair (12 bytes),
	// plus 64 KiB for the context and the rest.
	maxGuardBody = 64<<10 + 3*4000*12
	// maxReportBody is a report's: a stored result at its longest, each
	// byte escaped (6 bytes), plus 64 KiB.
	maxReportBody = 64<<10 + 6*ledger.MaxResultLen
	// maxHeaderBytes bounds the request line and headers.
	maxHeaderBytes = 16 << 10
)

// Config is what a Server serves and how.
type Config struct {
	// Ledger answers every call.
	Ledger Ledger
	// Credentials authenticates bearer tokens and says who may act under
	// another name; nil accepts no token (socket peers only).
	Credentials Credentials
	// Authority describes the operators file the ledger enforces, as the
	// CLI's answers name it.
	Authority string
	// Socket decides which peers on a Unix socket are admitted.
	Socket SocketPolicy
	// Rate and Burst bound each identity's requests: Rate per second on
	// average, Burst at once. Rate 0 sets no bound.
	Rate  float64
	Burst int
	// Log receives one line per refused connection or failed write of an
	// answer (keys, never bodies); nil discards.
	Log io.Writer
}

// Server serves the API over any number of listeners.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	limits  *limiter
	metrics *metrics
	routes  []string // "METHOD PATH", as the OpenAPI document lists them
}

// NewServer makes a server over cfg.Ledger.
func NewServer(cfg Config) *Server {
	s := &Server{cfg: cfg, mux: http.NewServeMux(), limits: newLimiter(cfg.Rate, cfg.Burst), metrics: newMetrics()}
	s.route("POST /v1/guard", s.handleGuard)
	s.route("POST /v1/report", s.handleReport)
	s.route("GET /v1/actions/{key}", s.handleStatus)
	s.route("GET /v1/epoch", s.handleEpoch)
	s.route("GET /v1/whoami", s.handleWhoami)
	s.route("GET /v1/openapi.json", s.handleOpenAPI)
	s.route("GET /healthz", s.handleHealth)
	s.route("GET /readyz", s.handleReady)
	s.route("GET /metrics", s.handleMetrics)
	if bo, ok := cfg.Ledger.(BatchObserver); ok {
		bo.ObserveBatches(s.metrics.batch)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		refuse(w, ProblemNotFound, exitcode.NotFound, "no such endpoint: %s %s (see /v1/openapi.json)", r.Method, safetext.Escape(r.URL.Path))
	})
	return s
}

// Routes are the routes the server serves, as "METHOD PATTERN".
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// route registers a handler for "METHOD PATH" and, for the path alone, a
// problem document naming the allowed method.
func (s *Server) route(pattern string, h http.HandlerFunc) {
	s.routes = append(s.routes, pattern)
	method, path, _ := strings.Cut(pattern, " ")
	s.mux.Handle(pattern, s.metrics.instrument(pattern, h))
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method)
		m := map[string]any{"error": fmt.Sprintf("%s takes %s, not %s", path, method, safetext.Escape(r.Method)), "exit_code": exitcode.Usage}
		writeProblemStatus(w, ProblemInvalid, http.StatusMethodNotAllowed, m)
	})
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// guardRequest is POST /v1/guard's body; the key is in the
// Idempotency-Key header.
type guardRequest struct {
	// Payload is {kind, target, body}, read strictly (ledger.DecodePayload).
	Payload json.RawMessage `json:"payload"`
	// Context is what policy may read beside the payload.
	Context json.RawMessage `json:"context,omitempty"`
	// Lease is the permit's lease as a duration ("15m"); empty is the
	// default.
	Lease string `json:"lease,omitempty"`
	// Redact keeps the payload's hashes only.
	Redact bool `json:"redact,omitempty"`
	// Agent is the name to act under; empty is the caller's own.
	Agent string `json:"agent,omitempty"`
	// Attempt is the Tollgate-Attempt header: the client's id for this
	// call, the same on each of its retries, with which the ledger gives a
	// retry whose first answer was lost the permit it was issued.
	Attempt string `json:"-"`
}

// reportRequest is POST /v1/report's body.
type reportRequest struct {
	Key     string `json:"key"`
	Permit  string `json:"permit"`
	Outcome string `json:"outcome"`
	Ref     string `json:"ref,omitempty"`
	// Latency is how long the action took, as a duration ("1.5s").
	Latency string `json:"latency,omitempty"`
	// Result is what the action returned (at most 64 KiB), kept so that
	// a caller that lost the first answer can be given it again.
	Result string `json:"result,omitempty"`
}

func (s *Server) handleGuard(w http.ResponseWriter, r *http.Request) {
	id, ok := s.admit(w, r)
	if !ok {
		return
	}
	key, err := idempotencyKey(r.Header)
	if err != nil {
		refuse(w, ProblemInvalid, exitcode.Invalid, "%s", err)
		return
	}
	var req guardRequest
	if !decodeBody(w, r, maxGuardBody, &req) {
		return
	}
	if req.Attempt, err = attemptID(r.Header); err != nil {
		refuse(w, ProblemInvalid, exitcode.Invalid, "%s", err)
		return
	}
	if len(req.Payload) == 0 {
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body needs a payload {kind, target, body}")
		return
	}
	p, err := ledger.DecodePayload(req.Payload)
	if err != nil {
		writeRefusal(w, err)
		return
	}
	opt := ledger.GuardOptions{Redact: req.Redact, Attempt: req.Attempt}
	if req.Lease != "" {
		if opt.Lease, err = time.ParseDuration(req.Lease); err != nil || opt.Lease <= 0 {
			refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: lease %q: a duration between %s and %s, such as 15m", safetext.Escape(req.Lease), ledger.MinLease, ledger.MaxLease)
			return
		}
	}
	if len(req.Context) > 0 && !bytes.Equal(req.Context, []byte("null")) {
		if opt.Context, err = ledger.ParseContext(req.Context); err != nil {
			writeRefusal(w, err)
			return
		}
	}
	if opt.Agent, ok = s.actAs(w, r, id, req.Agent); !ok {
		return
	}
	// A key another agent recorded is not this caller's to guard: with
	// its payload guessed, the caller would be handed the permit an
	// operator approved for the other. The ledger asks in the reads the
	// guard makes anyway (ledger.ErrNotCallersKey), so the check costs
	// no read of its own.
	opt.Caller = func(ctx context.Context, owner string) (bool, error) { return s.mayActOn(ctx, id, owner) }
	a, err := s.cfg.Ledger.Guard(r.Context(), key, p, opt)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	code := exitcode.OfVerdict(a.Verdict)
	s.metrics.answer(string(a.Verdict))
	writeAnswer(w, code, a.State, GuardObject{Answer: a, Authority: s.cfg.Authority, ExitCode: code})
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	id, ok := s.admit(w, r)
	if !ok {
		return
	}
	var req reportRequest
	if !decodeBody(w, r, maxReportBody, &req) {
		return
	}
	if _, err := ledger.ParseKey(req.Key); err != nil {
		writeRefusal(w, err)
		return
	}
	if req.Permit == "" {
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: permit is required")
		return
	}
	o, err := ledger.ParseOutcome(req.Outcome)
	if err != nil {
		writeRefusal(w, err)
		return
	}
	opt := ledger.ReportOptions{Ref: req.Ref, Result: req.Result}
	if req.Latency != "" {
		if opt.Latency, err = time.ParseDuration(req.Latency); err != nil || opt.Latency < 0 {
			refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: latency %q: a duration such as 1.5s", safetext.Escape(req.Latency))
			return
		}
	}
	if err := ledger.CheckReportInput(req.Key, o, opt); err != nil {
		writeRefusal(w, err)
		return
	}
	// A caller reports on its own keys only: the permit id is a secret,
	// but a leaked one must not let another caller settle the key.
	d, err := s.cfg.Ledger.Status(r.Context(), req.Key)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if !s.owns(w, r, id, d) {
		return
	}
	a, err := s.cfg.Ledger.Report(r.Context(), req.Key, req.Permit, o, opt)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	code := exitcode.OfReport(a)
	s.metrics.answer("reported-" + string(a.Outcome))
	writeAnswer(w, code, "", ReportObject{ReportAnswer: a, ExitCode: code})
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := s.admit(w, r)
	if !ok {
		return
	}
	key := r.PathValue("key")
	if _, err := ledger.ParseKey(key); err != nil {
		writeRefusal(w, err)
		return
	}
	d, err := s.cfg.Ledger.Status(r.Context(), key)
	if err != nil {
		s.refused(w, r, err)
		return
	}
	if id.Scope != ScopeOperator && !s.owns(w, r, id, d) {
		return
	}
	writeJSON(w, http.StatusOK, "application/json", StatusObject{Detail: d, Authority: s.cfg.Authority})
}

func (s *Server) handleEpoch(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.admit(w, r); !ok {
		return
	}
	e, err := s.cfg.Ledger.Epoch(r.Context())
	if err != nil {
		s.refused(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, "application/json", NewEpochObject(e))
}

// handleWhoami names the identity the request authenticated as: the
// agent name a call that names none acts under, and its scope.
func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	id, ok := s.admit(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, "application/json", WhoamiObject{Name: id.Name, Scope: id.Scope})
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"status": "ok"})
}

// handleReady answers 200 once the ledger answers a read.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.cfg.Ledger.Epoch(ctx); err != nil {
		s.metrics.ledgerError(exitcode.Of(err))
		refuse(w, ProblemUnavailable, exitcode.TempFail, "the ledger does not answer: %s", err)
		return
	}
	writeJSON(w, http.StatusOK, "application/json", map[string]any{"status": "ready"})
}

//go:embed openapi.json
var openAPI []byte

// OpenAPI is the API's OpenAPI 3.1 document, as served.
func OpenAPI() []byte { return bytes.Clone(openAPI) }

func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

// refused sends a refusal from the ledger, counting the ledger's own
// failures.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, err error) {
	code := exitcode.Of(err)
	switch code {
	case exitcode.Error, exitcode.TempFail, exitcode.CommitUnknown:
		s.metrics.ledgerError(code)
		s.logf("%s %s: %s", r.Method, r.URL.Path, safetext.Escape(err.Error()))
	}
	s.metrics.answer(string(problemFor(exitcode.Refusal(err))))
	writeRefusal(w, err)
}

// actAs is the agent name a call acts under: the caller's own, or one it
// names that it may use.
func (s *Server) actAs(w http.ResponseWriter, r *http.Request, id Identity, name string) (string, bool) {
	if name == "" || approvals.SameName(name, id.Name) {
		return id.Name, true
	}
	if ok, err := s.mayActAs(r.Context(), id.Name, name); err != nil {
		s.refused(w, r, err)
		return "", false
	} else if !ok {
		refuse(w, ProblemNotPermitted, exitcode.NotPermitted, "not permitted: %s may not act as agent %s (an operator allows it: tollgate agents allow)",
			safetext.Escape(id.Name), safetext.Escape(name))
		return "", false
	}
	return name, true
}

// mayActOn reports whether a key recorded under the agent name owner is
// the caller's: its own name or one it may act as. An intent recorded
// outside tollgate (no owner) is no agent's.
func (s *Server) mayActOn(ctx context.Context, id Identity, owner string) (bool, error) {
	if owner == "" {
		return false, nil
	}
	if approvals.SameName(owner, id.Name) {
		return true, nil
	}
	return s.mayActAs(ctx, id.Name, owner)
}

// owns answers 403 unless the key is the caller's: recorded under its
// name or one it may act as, or held by a permit issued to one.
func (s *Server) owns(w http.ResponseWriter, r *http.Request, id Identity, d ledger.Detail) bool {
	for _, name := range []string{d.Agent, d.Holder} {
		if ok, err := s.mayActOn(r.Context(), id, name); err != nil {
			s.refused(w, r, err)
			return false
		} else if ok {
			return true
		}
	}
	refuse(w, ProblemNotPermitted, exitcode.NotPermitted, "not permitted: key %s is not %s's (an agent's credential reads and reports its own keys only)",
		d.Key, safetext.Escape(id.Name))
	return false
}

func (s *Server) mayActAs(ctx context.Context, who, name string) (bool, error) {
	if s.cfg.Credentials == nil {
		return false, nil
	}
	return s.cfg.Credentials.MayActAs(ctx, who, name)
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "tollgate serve: "+format+"\n", args...)
	}
}

// idempotencyKey is the Idempotency-Key header's key, bare or as the
// draft's quoted string (an RFC 8941 sf-string; a key has no character
// that needs an escape in one).
func idempotencyKey(h http.Header) (string, error) {
	vs := h.Values(HeaderIdempotencyKey)
	switch {
	case len(vs) == 0 || vs[0] == "":
		return "", fmt.Errorf("invalid input: the %s header is required: it carries the action's key", HeaderIdempotencyKey)
	case len(vs) > 1:
		return "", fmt.Errorf("invalid input: give one %s header", HeaderIdempotencyKey)
	}
	k := strings.TrimSpace(vs[0])
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if _, err := ledger.ParseKey(k); err != nil {
		return "", err
	}
	return k, nil
}

// attemptID is the Tollgate-Attempt header: absent, or an attempt id as
// the ledger's one rule for them says (ledger.CheckAttempt).
func attemptID(h http.Header) (string, error) {
	a := h.Get(HeaderAttempt)
	if a == "" {
		return "", nil
	}
	if err := ledger.CheckAttempt(a); err != nil {
		return "", fmt.Errorf("the %s header: %w", HeaderAttempt, err)
	}
	return a, nil
}

// decodeBody reads one JSON object of at most limit bytes into v,
// refusing unknown fields, anything after the object and text that is
// not UTF-8; it answers 400 and returns false when the body breaks a rule.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body is application/json (got Content-Type %q)", safetext.Escape(ct))
		return false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body is larger than %d bytes", limit)
		return false
	case err != nil:
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: reading the body: %s", err)
		return false
	case !utf8.Valid(b):
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body is not valid UTF-8")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body is not the JSON object this endpoint takes: %s", safetext.Escape(err.Error()))
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		refuse(w, ProblemInvalid, exitcode.Invalid, "invalid input: the body holds something after its JSON object")
		return false
	}
	return true
}
