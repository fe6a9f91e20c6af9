package service

import (
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// The objects an agent's calls answer with: what `--json` prints and what
// a 2xx body (or a problem's members) holds. The command line builds its
// answers from these types too, so the two cannot drift apart.

// GuardObject is guard's answer.
type GuardObject struct {
	ledger.Answer
	// Authority describes the operators file the answering ledger
	// enforced (opkeys.Anchor.Describe).
	Authority string `json:"authority"`
	ExitCode  int    `json:"exit_code"`
}

// ReportObject is report's answer.
type ReportObject struct {
	ledger.ReportAnswer
	ExitCode int `json:"exit_code"`
}

// StatusObject is status's answer.
type StatusObject struct {
	ledger.Detail
	Authority string `json:"authority"`
}

// EpochObject is epoch show's answer.
type EpochObject struct {
	Activated time.Time `json:"activated_at"`
	Active    bool      `json:"active"`
	Epoch     string    `json:"epoch"`
	Operator  string    `json:"operator"`
}

// NewEpochObject is the answer for an epoch.
func NewEpochObject(e ledger.EpochInfo) EpochObject {
	return EpochObject{Epoch: e.Epoch, Operator: e.Operator, Activated: e.Activated, Active: e.Epoch != ""}
}

// Info is the epoch the object names.
func (o EpochObject) Info() ledger.EpochInfo {
	return ledger.EpochInfo{Epoch: o.Epoch, Operator: o.Operator, Activated: o.Activated}
}

// WhoamiObject is GET /v1/whoami's answer: who the server takes the
// caller for.
type WhoamiObject struct {
	Name  string `json:"name"`
	Scope Scope  `json:"scope"`
}
