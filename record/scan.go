package record

import (
	"bytes"
	"errors"
)

// The scanner walks one line once, checks that it is well-formed JSON in its structure, and
// records where the value of each key it reads lies. It builds nothing and allocates nothing:
// the values that are read are converted afterwards, from their spans. It costs what fastjson's
// tree costs on verl lines (both are bound by the search for the quote that ends each long
// string), less on compact lines, and unlike fastjson it checks numbers and literals everywhere
// (BENCHMARKS.md, "Record parser").
//
// What it checks: the grammar of objects, arrays, numbers and literals, that strings end, and
// nesting up to maxDepth. What it does not check in values that are not read: escapes, control
// characters and UTF-8 inside strings (read values are checked when they are converted).

// maxDepth bounds the nesting of arrays and objects in a line.
const maxDepth = 512

// kind is the JSON type of a span.
type kind uint8

// A span whose kind is none is absent; null values are recorded as absent.
const (
	none kind = iota
	jString
	jNumber
	jTrue
	jFalse
	jObject
	jArray
)

// span is where a value lies in the line: line[start:end] is its JSON text.
type span struct {
	start, end int32 // MaxLine fits
	kind       kind
}

var (
	errSyntax  = errors.New("syntax")
	errTooDeep = errors.New("nested too deep")
)

// scanner holds the line being scanned.
type scanner struct{ s []byte }

// top scans line as one JSON object and fills f with the keys it reads. It returns
// ReasonInvalidJSON or ReasonNotObject as a *BadLineError.
func (sc scanner) top(f *fields) error {
	i := sc.ws(0)
	if i < len(sc.s) && sc.s[i] == '{' {
		end, err := sc.object(i, 1, f.setTop)
		if err == nil && sc.ws(end) == len(sc.s) {
			return nil
		}
		return invalid(err)
	}
	end, _, err := sc.value(i, 0)
	if err == nil && sc.ws(end) == len(sc.s) {
		return &BadLineError{Reason: ReasonNotObject}
	}
	return invalid(err)
}

// invalid is the bad line of a scan error: ReasonTooDeep when the line nests deeper than
// maxDepth (well-formed or not: the scan stops there), else ReasonInvalidJSON.
func invalid(err error) error {
	if errors.Is(err, errTooDeep) {
		return &BadLineError{Reason: ReasonTooDeep}
	}
	return &BadLineError{Reason: ReasonInvalidJSON}
}

// onKey is called for each key of an object with the key's span (quotes included) and the
// position of its value; it returns the end of the value.
type onKey func(sc scanner, key span, at, depth int) (int, error)

// object scans the object that starts at s[i] == '{' and returns the position after it.
func (sc scanner) object(i, depth int, f onKey) (int, error) {
	if depth > maxDepth {
		return 0, errTooDeep
	}
	i = sc.ws(i + 1)
	if i < len(sc.s) && sc.s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(sc.s) || sc.s[i] != '"' {
			return 0, errSyntax
		}
		kend, err := sc.str(i)
		if err != nil {
			return 0, err
		}
		j := sc.ws(kend)
		if j >= len(sc.s) || sc.s[j] != ':' {
			return 0, errSyntax
		}
		if i, err = f(sc, mkSpan(i, kend, jString), sc.ws(j+1), depth); err != nil {
			return 0, err
		}
		if i = sc.ws(i); i < len(sc.s) && sc.s[i] == '}' {
			return i + 1, nil
		}
		if i >= len(sc.s) || sc.s[i] != ',' {
			return 0, errSyntax
		}
		i = sc.ws(i + 1)
	}
}

// skipKey is the onKey of objects whose keys are not read.
func skipKey(sc scanner, _ span, at, depth int) (int, error) {
	end, _, err := sc.value(at, depth)
	return end, err
}

// array scans the array that starts at s[i] == '[' and returns the position after it.
func (sc scanner) array(i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errTooDeep
	}
	i = sc.ws(i + 1)
	if i < len(sc.s) && sc.s[i] == ']' {
		return i + 1, nil
	}
	for {
		end, _, err := sc.value(i, depth)
		if err != nil {
			return 0, err
		}
		if i = sc.ws(end); i < len(sc.s) && sc.s[i] == ']' {
			return i + 1, nil
		}
		if i >= len(sc.s) || sc.s[i] != ',' {
			return 0, errSyntax
		}
		i = sc.ws(i + 1)
	}
}

// value scans the value at s[i] (inside containers nested depth deep) and returns its end and
// kind (none for null).
func (sc scanner) value(i, depth int) (int, kind, error) {
	if i >= len(sc.s) {
		return 0, none, errSyntax
	}
	var end int
	var err error
	k := jString
	switch c := sc.s[i]; {
	case c == '"':
		end, err = sc.str(i)
	case c == '{':
		end, err = sc.object(i, depth+1, skipKey)
		k = jObject
	case c == '[':
		end, err = sc.array(i, depth+1)
		k = jArray
	case c == 't':
		end, err = sc.literal(i, "true")
		k = jTrue
	case c == 'f':
		end, err = sc.literal(i, "false")
		k = jFalse
	case c == 'n':
		end, err = sc.literal(i, "null")
		k = none
	default:
		end = scanNumber(sc.s, i)
		if end == i {
			err = errSyntax
		}
		k = jNumber
	}
	return end, k, err
}

// str returns the position after the string that starts at s[i] == '"'.
func (sc scanner) str(i int) (int, error) {
	j := i + 1
	for {
		q := bytes.IndexByte(sc.s[j:], '"')
		if q < 0 {
			return 0, errSyntax
		}
		q += j
		n := 0
		for p := q - 1; p > i && sc.s[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func (sc scanner) literal(i int, lit string) (int, error) {
	if !bytes.HasPrefix(sc.s[i:], []byte(lit)) {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

// ws returns the position of the first byte at or after i that is not JSON whitespace.
func (sc scanner) ws(i int) int {
	for i < len(sc.s) {
		switch sc.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanNumber returns the end of the number that starts at s[i] by RFC 8259's grammar, or i
// when there is none.
func scanNumber(s []byte, i int) int {
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return start
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return start
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return start
		}
		i = j
	}
	return i
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func mkSpan(start, end int, k kind) span { return span{int32(start), int32(end), k} }
