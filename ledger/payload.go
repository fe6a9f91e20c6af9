package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxFieldRunes bounds each payload field, counted in Unicode code points as
// the seed fixture's Python len() counts them, not in bytes.
const MaxFieldRunes = 4000

// Payload is the exact operation an action key binds: what kind of action,
// against which target, with which body. Nothing else is part of the
// identity, so nothing else may be sent.
type Payload struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Body   string `json:"body"`
}

// PayloadError reports a payload that breaks the payload rules. It never
// carries the payload's text: bodies may hold secrets.
type PayloadError struct {
	Field string
	Rule  string
}

// Error implements error.
func (e *PayloadError) Error() string {
	if e.Field == "" {
		return "invalid payload: " + e.Rule
	}
	return fmt.Sprintf("invalid payload field %q: %s", e.Field, e.Rule)
}

// Is lets errors.Is(err, ErrInvalidInput) match every payload refusal.
func (e *PayloadError) Is(target error) bool { return target == ErrInvalidInput }

// Validate checks the bounds and encoding of every field.
func (p Payload) Validate() error {
	for _, f := range [...]struct{ name, v string }{{"kind", p.Kind}, {"target", p.Target}, {"body", p.Body}} {
		if err := validateField(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

func validateField(name, v string) error {
	if !utf8.ValidString(v) {
		return &PayloadError{name, "must be valid UTF-8 (no lone surrogates)"}
	}
	if n := utf8.RuneCountInString(v); n > MaxFieldRunes {
		return &PayloadError{name, fmt.Sprintf("must be at most %d code points (got %d)", MaxFieldRunes, n)}
	}
	return nil
}

// Canonical returns the canonical JSON of the payload: byte for byte what
// Python 3.12 json.dumps(p, sort_keys=True, ensure_ascii=True,
// separators=(",", ":")) produces, which is what the seed fixture hashes.
func (p Payload) Canonical() []byte {
	return p.appendCanonical(make([]byte, 0, 32+len(p.Body)+len(p.Kind)+len(p.Target)))
}

func (p Payload) appendCanonical(b []byte) []byte {
	b = append(b, `{"body":`...)
	b = appendPyString(b, p.Body)
	b = append(b, `,"kind":`...)
	b = appendPyString(b, p.Kind)
	b = append(b, `,"target":`...)
	b = appendPyString(b, p.Target)
	return append(b, '}')
}

// Digest returns the lowercase hex SHA-256 of the canonical JSON. Every
// call computes it, retries included, so a small payload is encoded on the
// stack.
func (p Payload) Digest() string {
	var buf [512]byte
	return sha256Hex(p.appendCanonical(buf[:0]))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

const hexDigits = "0123456789abcdef"

// appendPyString appends s as a JSON string the way Python's ensure_ascii
// encoder writes it: printable ASCII raw (so / < > & stay as they are),
// the five short escapes, everything else as lowercase \uxxxx, astral code
// points as a UTF-16 surrogate pair.
func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r >= 0x20 && r <= 0x7e:
			b = append(b, byte(r))
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			b = appendU(appendU(b, hi), lo)
		default:
			b = appendU(b, r)
		}
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// DecodePayload reads a payload from JSON strictly: one object with exactly
// the string fields kind, target and body, no duplicates, no lone surrogate
// escapes (which encoding/json would silently turn into U+FFFD) and nothing
// after the object. The result is validated.
func DecodePayload(data []byte) (Payload, error) {
	if !utf8.Valid(data) {
		return Payload{}, &PayloadError{"", "must be valid UTF-8 JSON"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return Payload{}, &PayloadError{"", "must be a JSON object with exactly kind, target and body"}
	}
	var p Payload
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Payload{}, &PayloadError{"", "malformed JSON"}
		}
		name, _ := tok.(string)
		var dst *string
		switch name {
		case "kind":
			dst = &p.Kind
		case "target":
			dst = &p.Target
		case "body":
			dst = &p.Body
		default:
			return Payload{}, &PayloadError{"", "only the fields kind, target and body are allowed"}
		}
		if seen[name] {
			return Payload{}, &PayloadError{name, "appears twice"}
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Payload{}, &PayloadError{name, "malformed JSON"}
		}
		v, err := unquoteStrict(raw)
		if err != nil {
			return Payload{}, &PayloadError{name, err.Error()}
		}
		*dst = v
	}
	if _, err := dec.Token(); err != nil {
		return Payload{}, &PayloadError{"", "malformed JSON"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Payload{}, &PayloadError{"", "nothing may follow the JSON object"}
	}
	if len(seen) != 3 {
		return Payload{}, &PayloadError{"", "must have exactly the fields kind, target and body"}
	}
	return p, p.Validate()
}

// unquoteStrict decodes a JSON string literal that the decoder has already
// checked for syntax, refusing non-strings and unpaired surrogates.
func unquoteStrict(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", errors.New("must be a string")
	}
	s := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("malformed escape")
		}
		switch s[i+1] {
		case '"', '\\', '/':
			out = append(out, s[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return "", errors.New("malformed \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
					return "", errors.New("must be valid UTF-8 (no lone surrogates)")
				}
				lo, ok := hex4(s[i+2:])
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return "", errors.New("must be valid UTF-8 (no lone surrogates)")
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", errors.New("malformed escape")
		}
		i += 2
	}
	return string(out), nil
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[:4]), 16, 16)
	return rune(v), err == nil
}
