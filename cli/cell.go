package cli

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// cell is a name from the trainer's files (an environment, a task id) as a table cell for a
// terminal: unchanged when every rune is printable, else Go-quoted ("a\tb", "\x1b[2J"), so that
// a hostile name can neither send escape sequences to the terminal nor break the table's rows
// and columns with tabs and newlines.
func cell(s string) string {
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
