package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgate-dev/tollgate/exitcode"
	"github.com/tollgate-dev/tollgate/internal/jsonout"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// ProblemType names a kind of problem document (RFC 9457 "type"). Its
// name tells apart answers that share a status: a denial and a refusal
// of this identity are both 403, executing and uncertain both 409.
type ProblemType string

// The problem types, each with the status it is sent with.
const (
	ProblemInvalid         ProblemType = "urn:tollgate:problem:invalid-input"   // 400, exit 3
	ProblemUnauthenticated ProblemType = "urn:tollgate:problem:unauthenticated" // 401
	ProblemDenied          ProblemType = "urn:tollgate:problem:denied"          // 403, exit 5
	ProblemNotPermitted    ProblemType = "urn:tollgate:problem:not-permitted"   // 403, exit 77
	ProblemNotFound        ProblemType = "urn:tollgate:problem:not-found"       // 404, exit 7
	ProblemExecuting       ProblemType = "urn:tollgate:problem:executing"       // 409, exit 75
	ProblemUncertain       ProblemType = "urn:tollgate:problem:uncertain"       // 409, exit 6
	ProblemDiffers         ProblemType = "urn:tollgate:problem:differs"         // 409, exit 4 (a report or decision already made otherwise)
	ProblemKeyReused       ProblemType = "urn:tollgate:problem:key-reused"      // 422, exit 4
	ProblemRateLimited     ProblemType = "urn:tollgate:problem:rate-limited"    // 429, exit 75
	ProblemError           ProblemType = "urn:tollgate:problem:error"           // 500, exit 1
	ProblemUnavailable     ProblemType = "urn:tollgate:problem:unavailable"     // 503, exit 75
	ProblemCommitUnknown   ProblemType = "urn:tollgate:problem:commit-unknown"  // 503, exit 74
)

// problemInfo is each type's status and title.
var problemInfo = map[ProblemType]struct {
	status int
	title  string
}{
	ProblemInvalid:         {http.StatusBadRequest, "Invalid input"},
	ProblemUnauthenticated: {http.StatusUnauthorized, "Unauthenticated"},
	ProblemDenied:          {http.StatusForbidden, "Denied"},
	ProblemNotPermitted:    {http.StatusForbidden, "Not permitted"},
	ProblemNotFound:        {http.StatusNotFound, "Not found"},
	ProblemExecuting:       {http.StatusConflict, "Executing elsewhere"},
	ProblemUncertain:       {http.StatusConflict, "Outcome uncertain"},
	ProblemDiffers:         {http.StatusConflict, "Already done differently"},
	ProblemKeyReused:       {http.StatusUnprocessableEntity, "Key reused with another payload"},
	ProblemRateLimited:     {http.StatusTooManyRequests, "Too many requests"},
	ProblemError:           {http.StatusInternalServerError, "Error"},
	ProblemUnavailable:     {http.StatusServiceUnavailable, "Ledger unavailable"},
	ProblemCommitUnknown:   {http.StatusServiceUnavailable, "Commit unknown"},
}

// retryAfter is the Retry-After a pending answer, a rate refusal and an
// unavailable ledger carry, in seconds.
const retryAfter = 1

// Status is the HTTP status of a problem type.
func (t ProblemType) Status() int { return problemInfo[t].status }

// problemFor is the problem type of an exit code, for an object that is
// not a guard's answer (whose 75 depends on its state): the status table
// of SPEC 12.
func problemFor(code int, obj map[string]any) ProblemType {
	switch code {
	case exitcode.Invalid, exitcode.Usage:
		return ProblemInvalid
	case exitcode.Conflict:
		if obj["error"] == "conflict" {
			return ProblemKeyReused
		}
		return ProblemDiffers
	case exitcode.Denied:
		return ProblemDenied
	case exitcode.Uncertain:
		return ProblemUncertain
	case exitcode.NotFound:
		return ProblemNotFound
	case exitcode.NotPermitted:
		return ProblemNotPermitted
	case exitcode.TempFail:
		return ProblemUnavailable
	case exitcode.CommitUnknown:
		return ProblemCommitUnknown
	}
	return ProblemError
}

// writeAnswer sends an answer object whose exit code is code: 200 for 0
// and 10, 202 for a pending guard, and a problem document otherwise,
// with the object's fields as its extension members. state is the key's
// state for a guard's answer (pending and executing share exit 75).
func writeAnswer(w http.ResponseWriter, code int, state ledger.State, obj any) {
	switch {
	case code == exitcode.OK || code == exitcode.Settled:
		writeJSON(w, http.StatusOK, "application/json", obj)
		return
	case code == exitcode.Retry && state == ledger.StatePending:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeJSON(w, http.StatusAccepted, "application/json", obj)
		return
	}
	m := toMap(obj)
	t := problemFor(code, m)
	if code == exitcode.Retry && state != "" {
		t = ProblemExecuting
	}
	writeProblem(w, t, "", m)
}

// writeRefusal sends an error from the ledger as the problem document
// whose members are the object the CLI prints for it (exitcode.Refusal).
func writeRefusal(w http.ResponseWriter, err error) {
	code, obj := exitcode.Refusal(err)
	writeProblem(w, problemFor(code, obj), err.Error(), obj)
}

// writeProblem sends an RFC 9457 problem document: type, title, status,
// detail, and members (exit_code among them). A rate refusal and an
// unavailable ledger say when to come back.
func writeProblem(w http.ResponseWriter, t ProblemType, detail string, members map[string]any) {
	writeProblemDetail(w, t, problemInfo[t].status, detail, members)
}

// writeProblemStatus is writeProblem with a status of its own (405).
func writeProblemStatus(w http.ResponseWriter, t ProblemType, status int, members map[string]any) {
	writeProblemDetail(w, t, status, "", members)
}

func writeProblemDetail(w http.ResponseWriter, t ProblemType, status int, detail string, members map[string]any) {
	info := problemInfo[t]
	doc := make(map[string]any, len(members)+4)
	maps.Copy(doc, members)
	doc["type"], doc["title"], doc["status"] = string(t), info.title, status
	if detail != "" {
		doc["detail"] = detail
	}
	switch t {
	case ProblemUnavailable, ProblemRateLimited, ProblemCommitUnknown:
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		}
	case ProblemUnauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="tollgate"`)
	}
	writeJSON(w, status, "application/problem+json", doc)
}

// refuse sends a refusal the server makes itself (bad input, a caller
// that may not): a problem whose members are {"error", "exit_code"} as
// the CLI's would be.
func refuse(w http.ResponseWriter, t ProblemType, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	m := map[string]any{"error": msg, "exit_code": code}
	if t == ProblemRateLimited {
		m["safe_to_repeat"] = true
	}
	writeProblem(w, t, msg, m)
}

// writeJSON writes v as one JSON document, escaped as the CLI escapes
// its --json output (C0, DEL, C1 and format characters as \uXXXX).
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := jsonout.Marshal(v) // as --json prints it: < > & unescaped
	if err != nil {
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		b, _ = json.Marshal(map[string]any{"type": ProblemError, "title": "Error", "status": status, "error": "encoding the answer failed", "exit_code": exitcode.Error})
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(safetext.EscapeJSON(b), '\n'))
}

// toMap is an answer as a JSON object's members.
func toMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// Problem is a refusal the service sent, as its client hands it back: an
// error carrying the exit code and the object the server's CLI would
// have printed, so the command prints them unchanged (exitcode.Answered),
// and matching the ledger's sentinel errors of its type with errors.Is,
// so that code written against the ledger reads it as it would the
// ledger's own error.
type Problem struct {
	Type   ProblemType
	Status int
	Detail string
	// Members are the extension members: the CLI's object, exit_code
	// among them.
	Members map[string]any
	// RetryAfter is the Retry-After the server sent, if any.
	RetryAfter time.Duration
}

// Error is the refusal's message as the server worded it.
func (p *Problem) Error() string {
	if s, ok := p.Members["error"].(string); ok && s != "" {
		return s
	}
	if p.Detail != "" {
		return p.Detail
	}
	return fmt.Sprintf("the service answered %d %s", p.Status, p.Type)
}

// ExitCode is the exit code the server gave.
func (p *Problem) ExitCode() int {
	if f, ok := p.Members["exit_code"].(float64); ok {
		return int(f)
	}
	return exitcode.Error
}

// Object is the CLI's object for the refusal.
func (p *Problem) Object() map[string]any {
	m := maps.Clone(p.Members)
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["error"]; !ok {
		m["error"] = p.Error()
	}
	m["exit_code"] = p.ExitCode()
	return m
}

// Is matches the sentinel the problem's type stands for.
func (p *Problem) Is(target error) bool {
	switch p.Type {
	case ProblemInvalid:
		return target == ledger.ErrInvalidInput
	case ProblemNotFound:
		return target == ledger.ErrNotFound
	case ProblemNotPermitted:
		return target == ledger.ErrNotPermitted || target == ErrForbidden
	case ProblemUnauthenticated:
		return target == ErrUnauthenticated
	case ProblemUnavailable, ProblemRateLimited:
		return target == ledger.ErrUnavailable
	case ProblemCommitUnknown:
		return target == ledger.ErrCommitUnknown
	}
	return false
}

var _ exitcode.Answered = (*Problem)(nil)

// errorsAs is errors.As for the problem's caller, kept here so that the
// client's decoding and the tests read one helper.
func asProblem(err error) (*Problem, bool) {
	var p *Problem
	ok := errors.As(err, &p)
	return p, ok
}
