package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// foundByte is the ledger's naming of the byte that broke the key
// grammar: "found 'x' at byte 4". Compiled on the first refusal, not at
// the start of every process.
var foundByte = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`found ('(?:[^'\\]|\\.)+') at byte (\d+)`)
})

// errorText is an error as the terminal shows it: escaped with safetext,
// once. A key refusal is written out again, because its Go quoting would
// be escaped a second time ("k\\xc3") and the byte it names is quoted as
// a rune, so the first byte of "ü" reads 'Ã': the key is shown escaped
// once ("k\xc3") and a byte outside printable ASCII as \xNN.
func errorText(err error) string {
	full := err.Error()
	var ke *ledger.KeyError
	if !errors.As(err, &ke) {
		return safetext.Escape(full)
	}
	at := strings.Index(full, ke.Error())
	if at < 0 {
		return safetext.Escape(full)
	}
	in := ke.Input
	if len(in) > 100 {
		in = in[:100] + "..."
	}
	rule := safetext.Escape(ke.Rule)
	if m := foundByte().FindStringSubmatchIndex(ke.Rule); m != nil {
		if r, _, _, qerr := strconv.UnquoteChar(strings.Trim(ke.Rule[m[2]:m[3]], "'"), '\''); qerr == nil && r < 0x100 {
			shown := fmt.Sprintf("'%c'", r)
			if r < 0x20 || r >= 0x7f {
				shown = fmt.Sprintf(`\x%02x`, r) // the byte the ledger read
			}
			rule = safetext.Escape(ke.Rule[:m[2]]) + shown + safetext.Escape(ke.Rule[m[3]:])
		}
	}
	return safetext.Escape(full[:at]) + `invalid key "` + safetext.Escape(in) + `": ` + rule + safetext.Escape(full[at+len(ke.Error()):])
}
