// Package notify tells operators that something waits for them: it posts
// approval requests, uncertain outcomes, conflicts and fenced calls to
// webhooks, signed, retried until accepted, in commit order.
//
// It is its own package because delivery is a responsibility apart from
// serving agents: it reads what the ledger committed through a Source,
// keeps its place through a Cursor shared by every server over one ledger
// (so a receiver hears each event once per delivery, whichever server
// sends it, and at least once across restarts), and never decides or
// writes anything else. The server wires a ledger-backed Source and Cursor
// in; the tests use in-memory ones.
package notify

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/tollgate-dev/tollgate/safetext"
)

// EventKind names what happened; the names are watch's, so a hook written
// for `tollgate watch --exec` reads a notification the same way.
type EventKind string

// The events an operator is told about.
const (
	// Pending: an action waits for an operator's approval.
	Pending EventKind = "pending"
	// Uncertain: a permit's outcome is unknown; an operator reconciles it.
	Uncertain EventKind = "uncertain"
	// Conflict: a key was reused with another payload.
	Conflict EventKind = "conflict"
	// Fenced: a call was refused by the epoch fence.
	Fenced EventKind = "fenced"
)

// Valid reports whether k is one of the kinds above.
func (k EventKind) Valid() bool {
	switch k {
	case Pending, Uncertain, Conflict, Fenced:
		return true
	}
	return false
}

// Event is one thing to tell. Seq orders events (the ledger's commit
// order) and is the cursor's unit; every field but Target is safe to send
// anywhere. A body is never part of an event.
type Event struct {
	// Seq is the event's position in the ledger's commit order.
	Seq int64
	// Kind is what happened.
	Kind EventKind
	// Key is the action's key.
	Key string
	// ActionKind is the payload's kind (refund.card), when known.
	ActionKind string
	// Agent is the agent the action was recorded for.
	Agent string
	// Digest is the payload's SHA-256, hex.
	Digest string
	// Deadline is when a pending approval expires, if it does.
	Deadline time.Time
	// Target is the payload's target. It is sent only where the operator
	// opted in (Destination.Target): targets may be personal data.
	Target string
	// ID is the conflict's or fenced call's id, when the event is one.
	ID int64
	// At is when it happened (the commit, or the lease's end).
	At time.Time
}

// Format is a destination's wire format.
type Format string

// The formats a destination can take.
const (
	// JSON posts the event as a JSON object (see Encode).
	JSON Format = "json"
	// Slack posts a Slack incoming-webhook message.
	Slack Format = "slack"
)

// ParseFormat returns the Format named s, or an error naming the rule.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case JSON, Slack:
		return f, nil
	}
	return "", fmt.Errorf("invalid notification format %q: use json or slack", safetext.Escape(s))
}

// Destination is where events go and how.
type Destination struct {
	// URL receives a POST per event.
	URL string
	// Format is the body's form.
	Format Format
	// Target includes each event's target (off by default).
	Target bool
}

// Name is the destination's name in the shared cursor and in logs: the
// scheme and host, and a short SHA-256 of the whole URL to tell two
// webhooks on one host apart. The path and query are left out because a
// webhook's secret is often there (a Slack webhook's path is its secret),
// and cursor rows and logs are read by people who must not post to it.
func (d Destination) Name() string {
	sum := sha256.Sum256([]byte(d.URL))
	host := "?"
	if u, err := url.Parse(d.URL); err == nil {
		host = u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("%s %s #%x", d.Format, host, sum[:4])
}

// wireEvent is the JSON form: watch's field names, plus the digest, the
// delivery id and a hint at what to do.
type wireEvent struct {
	Delivery string    `json:"delivery"`
	Event    EventKind `json:"event"`
	Key      string    `json:"key"`
	Kind     string    `json:"kind,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	Digest   string    `json:"payload_sha256,omitempty"`
	Target   string    `json:"target,omitempty"`
	ID       int64     `json:"id,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	At       time.Time `json:"at"`
	Hint     string    `json:"hint"`
}

// DeliveryID names one event of one ledger; a receiver that may be told
// twice (delivery is at least once) drops a second with the same id.
func DeliveryID(ledgerID string, seq int64) string {
	return fmt.Sprintf("%s:%d", ledgerID, seq)
}

// hint says what an operator does next, as commands they can paste.
func hint(e Event) string {
	switch e.Kind {
	case Pending:
		return "tollgate status " + e.Key + "; then tollgate approve or reject it (or open tollgate console)"
	case Uncertain:
		return "tollgate status " + e.Key + "; find out whether it ran, then tollgate reconcile it"
	case Conflict:
		return "tollgate list --conflicts; the key's stored payload is unchanged"
	default:
		return "tollgate list --fenced; the call was refused by the epoch fence"
	}
}

// Encode returns the body posted for e to d, for the ledger ledgerID.
func Encode(ledgerID string, e Event, d Destination) ([]byte, error) {
	if !e.Kind.Valid() {
		return nil, fmt.Errorf("invalid event kind %q", safetext.Escape(string(e.Kind)))
	}
	w := wireEvent{Delivery: DeliveryID(ledgerID, e.Seq), Event: e.Kind, Key: e.Key, Kind: e.ActionKind, Agent: e.Agent,
		Digest: e.Digest, ID: e.ID, Deadline: e.Deadline.UTC(), At: e.At.UTC(), Hint: hint(e)}
	if d.Target {
		w.Target = e.Target
	}
	if d.Format == Slack {
		return json.Marshal(slackMessage(w))
	}
	return json.Marshal(w)
}
