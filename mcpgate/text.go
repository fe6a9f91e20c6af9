package mcpgate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/tollgate-dev/tollgate/safetext"
)

// badTextError names the argument whose text is not Unicode: Go's JSON
// decoders (the SDK's among them) replace invalid UTF-8 and lone UTF-16
// surrogate escapes with U+FFFD without a word, so a body would be
// recorded, digested and executed as something its sender never wrote.
type badTextError struct{ field string }

func (e *badTextError) Error() string {
	return fmt.Sprintf("the argument %q is not valid text: it holds invalid UTF-8 or a lone UTF-16 surrogate escape (\\ud800 to \\udfff unpaired), which a JSON decoder would silently replace with U+FFFD",
		safetext.Escape(e.field))
}

// checkText refuses arguments (a call's raw JSON, as received) in which
// any string, a name or a value at any depth, is not valid text. It
// names the top-level argument that holds it. It reads the raw bytes
// because once decoded the damage is invisible.
func checkText(raw json.RawMessage) error {
	depth := 0
	expectKey := false // at depth 1 in an object, the next string is a name
	field := ""
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			depth++
			if depth == 1 {
				expectKey = true
			}
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 1 {
				expectKey = true
			}
		case '"':
			end := stringEnd(raw, i)
			tok := raw[i : end+1]
			isKey := depth == 1 && expectKey
			if isKey {
				field = keyName(tok)
				expectKey = false
			}
			if !validText(tok[1 : len(tok)-1]) {
				if depth == 0 {
					field = "arguments"
				}
				return &badTextError{field: field}
			}
			i = end
		}
	}
	return nil
}

// stringEnd is the index of the quote that closes the string opening at
// start (or the last byte, for a truncated one: the decoder refuses it).
func stringEnd(raw []byte, start int) int {
	for j := start + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(raw) - 1
}

// keyName is an argument's name for a message, decoded where it can be.
func keyName(tok []byte) string {
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return string(tok)
	}
	return s
}

// validText reports whether a JSON string's raw content is valid UTF-8
// whose \u escapes pair every surrogate.
func validText(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) || s[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(s, i+2)
		if !ok {
			return false
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			low, ok := hex4(s, i+8)
			if !ok || s[i+6] != '\\' || s[i+7] != 'u' || low < 0xdc00 || low > 0xdfff {
				return false
			}
			i += 11
		case r >= 0xdc00 && r <= 0xdfff:
			return false
		default:
			i += 5
		}
	}
	return true
}

// hex4 is the value of the four hex digits at s[at:], if there are four.
func hex4(s []byte, at int) (rune, bool) {
	if at < 0 || at+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[at:at+4]), 16, 32)
	return rune(v), err == nil
}
