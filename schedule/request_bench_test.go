package schedule

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// unknownKeysBody is a request of n keys that are no field and no near miss of one, each of
// width bytes (a trainer dumping its whole config into the request, or a hostile file).
func unknownKeysBody(n, width int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"size": 2`)
	for i := range n {
		k := fmt.Sprintf("cfg_%d_", i)
		k += strings.Repeat("x", max(0, width-len(k)))
		fmt.Fprintf(&b, `, %q: %d`, k, i)
	}
	b.WriteString("}")
	return b.Bytes()
}

// BenchmarkParseRequestUnknownKeys is ParseRequest of a body of many keys that are no field:
// each such key was looked at for a 'did you mean' (folded, and its edit distance to every
// field worked out), so the cost grew with the keys times their length.
func BenchmarkParseRequestUnknownKeys(b *testing.B) {
	for _, n := range []int{100, 2000, 20000} {
		for _, width := range []int{8, 60} {
			body := unknownKeysBody(n, width)
			b.Run(fmt.Sprintf("keys=%d/width=%d", n, width), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					req, err := ParseRequest(body, DefaultSize, DefaultGroupSize)
					if err != nil || len(req.Ignored) != n {
						b.Fatalf("%d ignored, %v", len(req.Ignored), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/request")
			})
		}
	}
}
