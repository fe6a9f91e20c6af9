package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/safetext"
)

// slackBody is an incoming-webhook message. Markdown is turned off
// (mrkdwn false): an agent's key or kind then cannot bold, link or strike
// anything, and the only markup left is Slack's control sequences in angle
// brackets, which slackEscape disarms.
type slackBody struct {
	Text   string `json:"text"`
	Mrkdwn bool   `json:"mrkdwn"`
}

// slackEscape makes untrusted text inert in a Slack message: Slack reads
// <...> as a link, a user or channel mention (<!channel> pings everyone)
// or a date, and & begins an entity, so those three are escaped as Slack
// documents; control and invisible characters are shown as escapes, as on
// a terminal, so a key cannot hide text or break a line.
func slackEscape(s string) string {
	s = safetext.Escape(s)
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

var slackTitle = map[EventKind]string{
	Pending:   "Approval requested",
	Uncertain: "Outcome uncertain",
	Conflict:  "Key reused with another payload",
	Fenced:    "Call fenced",
}

func slackMessage(w wireEvent) slackBody {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", slackTitle[w.Event], slackEscape(w.Key))
	if w.Kind != "" {
		fmt.Fprintf(&b, " (%s)", slackEscape(w.Kind))
	}
	if w.Agent != "" {
		fmt.Fprintf(&b, " by agent %s", slackEscape(w.Agent))
	}
	if w.Target != "" {
		fmt.Fprintf(&b, ", target %s", slackEscape(w.Target))
	}
	if !w.Deadline.IsZero() {
		fmt.Fprintf(&b, ", expires %s", w.Deadline.Format(time.RFC3339))
	}
	if w.Digest != "" {
		fmt.Fprintf(&b, "\nsha256 %s", slackEscape(w.Digest))
	}
	fmt.Fprintf(&b, "\n%s", slackEscape(w.Hint))
	return slackBody{Text: b.String()}
}
