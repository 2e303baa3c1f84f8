package storage

// HashID is hashID, for tests that craft collisions.
var HashID = hashID

// SetReleaseEvery sets how many values a scan reads between releases of its pages, for a test;
// it returns the function that restores it.
func SetReleaseEvery(n int) func() {
	old := releaseEvery
	releaseEvery = n
	return func() { releaseEvery = old }
}
