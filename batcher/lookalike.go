package batcher

import (
	"slices"

	"github.com/envsched/envsched/record"
)

// Names are bytes (PROTOCOL.md, section 2): "café" written as one code point (NFC) and as "e"
// plus a combining accent (NFD) are two environments, as are "Retail" and "retail", and
// "retail" with a zero-width space in it. A request naming an environment the way a person
// would read it, but not byte for byte as the catalogue wrote it, was told that "café" is
// unknown and that the known ones are "café", …; and in exclude_envs such a name excluded
// nothing, so the environment the trainer meant to exclude filled part of its batch. lookAlike
// finds the known name such a name stands for, so that both are refused saying what differs.

// lookAlike returns the known environment that name stands for (record.LookAlike).
func lookAlike(name string, known []string) string {
	return record.LookAlike(name, slices.Values(known))
}
