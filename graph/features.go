package graph

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/envsched/envsched/record"
)

// Feature kinds prefix a feature's name so that a tool called "search" and the word "search"
// are distinct features.
const (
	kindWord = "w\x00"
	kindTool = "t\x00"
	kindTag  = "g\x00"
)

// MaxTaskWords and MaxTaskNames bound the features one task gives: its first MaxTaskWords
// distinct words (in the order of its text) and its first MaxTaskNames distinct tools and tags.
// A task's text tells what it is in far fewer words (the real catalogue's longest has 98); a
// hostile row of 150,000 distinct random words made every one of them a feature, held in the
// vocabulary by every start (40 such rows, 72 MB: 1.5 GB resident and 15-20 s to the first
// answer). Every occurrence of a word kept is counted.
const (
	MaxTaskWords = 2048
	MaxTaskNames = 1024
)

// firstDistinct returns names without the occurrences of any name (after clean, when not nil;
// empty ones dropped) past the first n distinct, in their order. It returns names itself when
// they hold n distinct names or fewer.
func firstDistinct(names []string, n int, clean func(string) string) []string {
	if len(names) <= n {
		return names
	}
	seen := make(map[string]struct{}, n)
	out := make([]string, 0, len(names))
	for _, x := range names {
		if clean != nil {
			x = clean(x)
		}
		if x == "" {
			continue
		}
		if _, ok := seen[x]; !ok {
			if len(seen) == n {
				continue
			}
			seen[x] = struct{}{}
		}
		out = append(out, x)
	}
	return out
}

// rawFeature is one feature of a task with its weight before IDF.
type rawFeature struct {
	name string
	w    float64
}

// taskFeatures returns the features of t sorted by name: each word of the text with weight
// 1 + ln(count), each distinct tool with toolW and each distinct tag with tagW.
func taskFeatures(t record.Task, toolW, tagW float64) []rawFeature {
	counts := map[string]int{}
	for _, w := range firstDistinct(tokens(t.Text), MaxTaskWords, nil) {
		counts[kindWord+w]++
	}
	out := make([]rawFeature, 0, len(counts)+len(t.Tools)+len(t.Tags))
	for name, c := range counts {
		out = append(out, rawFeature{name, 1 + math.Log(float64(c))})
	}
	out = appendSet(out, kindTool, t.Tools, toolW)
	out = appendSet(out, kindTag, t.Tags, tagW)
	slices.SortFunc(out, func(a, b rawFeature) int { return strings.Compare(a.name, b.name) })
	return out
}

func appendSet(out []rawFeature, kind string, names []string, w float64) []rawFeature {
	seen := map[string]bool{}
	for _, n := range firstDistinct(names, MaxTaskNames, strings.TrimSpace) {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, rawFeature{kind + n, w})
	}
	return out
}

// tokens splits text into lower-case words of letters and digits, dropping one-letter words
// and pure numbers, which carry little about what a task is.
func tokens(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len(f) > 1 && !allDigits(f) {
			out = append(out, f)
		}
	}
	return out
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// contentHash identifies what a task says, so that adding an unchanged task again is a no-op.
func contentHash(t record.Task) uint64 {
	h := fnv.New64a()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(t.Text)
	put(strings.Join(t.Tools, "\x00"))
	put(strings.Join(t.Tags, "\x00"))
	for _, x := range t.Embedding {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], math.Float32bits(x))
		h.Write(n[:])
	}
	return h.Sum64()
}

// unitEmbedding returns e scaled to unit length in float64, or nil when e is empty, not finite
// or all zero.
func unitEmbedding(e []float32) []float64 {
	if len(e) == 0 {
		return nil
	}
	v := make([]float64, len(e))
	ss := 0.0
	for i, x := range e {
		v[i] = float64(x)
		ss += v[i] * v[i]
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] *= inv
	}
	return v
}
