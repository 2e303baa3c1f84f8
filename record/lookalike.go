package record

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Names are bytes (PROTOCOL.md, section 2): "café" written as one code point (NFC) and as "e"
// plus a combining accent (NFD) are two names, as are "Retail" and "retail", and "retail" with
// a zero-width space in it. A person reads each pair as one name. LookAlike finds the name one
// stands for, so that a request naming an environment the way a person reads it is refused
// saying which one it meant (batcher), and rollouts of a task written so are logged as such
// (storage, ingest).

// LookAlike returns the name of known, other than name itself, that name stands for: the one
// equal to it once both are folded (see fold). "" when there is none, or more than one.
func LookAlike(name string, known iter.Seq[string]) string {
	key := fold(name)
	if key == "" {
		return ""
	}
	found := ""
	for k := range known {
		if k == name || !sameFolded(name, key, k) {
			continue
		}
		if found != "" {
			return "" // two candidates: no single one was meant
		}
		found = k
	}
	return found
}

// sameFolded reports whether known folds to key (the fold of name). Names of ASCII letters,
// digits and punctuation alone, the usual case, are compared without folding them (only their
// case and their ends' spaces can differ), so that a scan of 100,000 environment names stays
// cheap.
func sameFolded(name, key, known string) bool {
	if isPlainASCII(name) && isPlainASCII(known) {
		return strings.EqualFold(strings.TrimSpace(name), strings.TrimSpace(known))
	}
	return fold(known) == key
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// fold is the form in which two names that read alike are equal: compatibility-normalised
// (NFKC: NFC and NFD twins, full-width letters, ligatures), case-folded, without the characters
// that show nothing (format characters: zero-width spaces and joiners, bidirectional marks, the
// byte order mark, soft hyphens) and without white space at either end.
func fold(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = cases.Fold().String(norm.NFKC.String(s))
	return norm.NFKC.String(strings.TrimSpace(s))
}
