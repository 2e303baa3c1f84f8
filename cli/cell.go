package cli

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// cell is a name from the trainer's files (an environment, a task id) as a table cell for a
// terminal: unchanged when every rune is printable, else Go-quoted ("a\tb", "\x1b[2J"), so that
// a hostile name can neither send escape sequences to the terminal nor break the table's rows
// and columns with tabs and newlines.
//
// A name that is not in Unicode's composed form (NFC: "cafe" plus a combining accent) is
// quoted with every non-ASCII character escaped ("cafe\u0301"): names are bytes, so such a name
// and its composed twin are two environments, and `stats` showed two rows that read "café".
// So is every other name that reads like another (the look-alikes a request is refused for,
// batcher's lookAlike): one not in compatibility form (NFKC: the ligature "ﬁ" of "fi",
// full-width letters) and one with white space at either end ("math " beside "math").
func cell(s string) string {
	if !norm.NFKC.IsNormalString(s) {
		return strconv.QuoteToASCII(s)
	}
	if strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	for i, r := range s {
		if r == utf8.RuneError && !validAt(s, i) || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// validAt reports whether s holds a real U+FFFD at byte i (not an invalid byte).
func validAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n == 3
}
