package storage

// HashID is hashID, for tests that craft collisions.
var HashID = hashID
