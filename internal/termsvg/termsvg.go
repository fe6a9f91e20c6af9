// Package termsvg draws a terminal screen (plain text, as the console's
// teatest goldens hold it) as an SVG picture. It exists for the README's
// picture of the console: made from a golden that the UI tests keep true,
// so the picture cannot drift from what the console shows (the test of
// this package fails when docs/console.svg is stale; -update redraws it).
// It is a few lines of XML rather than a dependency: the picture needs no
// colours, only the characters, escaped.
package termsvg

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Cell sizes in pixels for a 14 px monospace font.
const (
	cellW   = 8.4
	cellH   = 17.0
	padding = 16.0
	titleH  = 28.0
)

// Render draws screen (lines of text, trailing spaces kept) under a
// window bar titled title.
func Render(screen, title string) []byte {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	cols := 0
	for _, l := range lines {
		cols = max(cols, utf8.RuneCountInString(l))
	}
	w := padding*2 + float64(cols)*cellW
	h := titleH + padding*2 + float64(len(lines))*cellH
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n", w, h, w, h, escape(title))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="8" fill="#1e1e2e"/>`+"\n")
	fmt.Fprintf(&b, `<circle cx="18" cy="14" r="6" fill="#f38ba8"/><circle cx="38" cy="14" r="6" fill="#f9e2af"/><circle cx="58" cy="14" r="6" fill="#a6e3a1"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="19" fill="#9399b2" font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" font-size="13" text-anchor="middle">%s</text>`+"\n", w/2, escape(title))
	fmt.Fprintf(&b, `<g font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace" font-size="14" fill="#cdd6f4" xml:space="preserve">`+"\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" textLength="%.1f" lengthAdjust="spacingAndGlyphs">%s</text>`+"\n",
			padding, titleH+padding+float64(i+1)*cellH-4, float64(utf8.RuneCountInString(strings.TrimRight(l, " ")))*cellW, escape(strings.TrimRight(l, " ")))
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Bytes()
}

// escape makes text safe inside XML: the five markup characters, and
// every control character (which XML 1.0 cannot hold) as U+FFFD.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r < 0x20 && r != '\t', r >= 0x7f && r < 0xa0, r == 0xfffe, r == 0xffff:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
