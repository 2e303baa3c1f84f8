package daemon

// testParts are the collaborators of the daemons under test: the real ingester and the small
// test answerer (helpers_test.go).
func testParts() []Option {
	return []Option{WithAnswerer(interimAnswererFunc)}
}
