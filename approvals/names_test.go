package approvals

import (
	"errors"
	"testing"
	"time"
)

// TestSelfApprovalVariants: each way of writing the agent's own name that
// an adversary report tried is refused as self-approval, or refused at
// input when it carries a control or format character.
func TestSelfApprovalVariants(t *testing.T) {
	req := Request{Exists: true, Agent: "bot-1", Expires: time.Unix(2e9, 0)}
	now := time.Unix(1e9, 0)
	for _, op := range []string{"bot-1", "Bot-1", "BOT-1", "bot-1 ", " bot-1", "bot-1\t", "bot-1\u200b", "bot\u200d-1",
		"ｂｏｔ-1", "bot-\u00ad1", "ＢＯＴ－１", "bot-1\u202e", "  bot-1  "} {
		inputErr := CheckName("operator", op)
		err := CheckDecision(req, op, true, "", now)
		if inputErr == nil && !errors.Is(err, ErrSelfApproval) {
			t.Errorf("operator %q approving agent bot-1: %v, want self-approval", op, err)
		}
		if inputErr != nil && !errors.Is(inputErr, ErrBadName) {
			t.Errorf("operator %q: %v", op, inputErr)
		}
	}
	// A stored agent name with hidden characters is the same agent too.
	for _, agent := range []string{"bot\u200b-1", "BOT-1 ", "ｂｏｔ-1"} {
		req.Agent = agent
		if err := CheckDecision(req, "bot-1", true, "", now); !errors.Is(err, ErrSelfApproval) {
			t.Errorf("operator bot-1 approving agent %q: %v", agent, err)
		}
	}
	// Different names stay different, and rejection by oneself is allowed.
	req.Agent = "bot-1"
	for _, op := range []string{"bot-2", "bot1", "alice", "bot-l"} {
		if err := CheckDecision(req, op, true, "", now); err != nil {
			t.Errorf("operator %q: %v", op, err)
		}
	}
	if err := CheckDecision(req, "Bot-1", false, "my mistake", now); err != nil {
		t.Errorf("self-rejection: %v", err)
	}
}

func TestNameKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Alice Smith", "alice smith"}, {"  Alice   Smith ", "alice smith"}, {"ÅSA", "åsa"},
		{"ｂｏｔ-1", "bot-1"}, {"bot\u200d-1", "bot-1"}, {"", ""}, {"☃ops", "☃ops"},
	} {
		if got := NameKey(tc.in); got != tc.want {
			t.Errorf("NameKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
