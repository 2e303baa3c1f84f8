package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// A stored answer larger than answerPartBytes is kept out of the requests bucket, in parts
// appended to answer_parts; requests then holds a reference to them. bbolt does not split a
// leaf of four or fewer elements however large, so answers stored whole in requests (100 KiB
// for a batch of 512) shared a leaf with one to three others, and every answer rewrote that
// whole leaf: about half a megabyte written and fsync'd a request. Appended parts under a
// quarter page are each written once.
//
// A reference is answerRefMark, then the first part's key, the number of parts and the
// answer's length (uvarints). An answer's own bytes never begin with answerRefMark: a stored
// answer is JSON, and bytes that do begin with it are stored in parts, whatever their length.
// Answers of a database of schema 1 are all whole; schema 2 says some may be in parts (see
// markSchema).
var bucketAnswerParts = []byte("answer_parts") // part seq (uint64 BE) -> up to answerPartBytes of an answer

const (
	answerPartBytes = 900 // under a quarter page: see taskLogPart
	answerRefMark   = 0x00
)

// schemaAnswerParts is the schema of a database that may hold answers in parts. Databases are
// created with schema 1 and marked 2 by the first answer stored in parts, so that an envsched
// that reads only whole answers refuses the database (ErrSchemaNewer) rather than serve a
// reference as an answer, while one that never stored such an answer stays readable by it.
const schemaAnswerParts = 2

// putAnswer stores answer as the value of id in rb: whole, or in parts with a reference.
func putAnswer(tx *bolt.Tx, rb *bolt.Bucket, id string, answer []byte) error {
	if len(answer) <= answerPartBytes && (len(answer) == 0 || answer[0] != answerRefMark) {
		return rb.Put([]byte(id), answer)
	}
	if err := markSchema(tx, schemaAnswerParts); err != nil {
		return err
	}
	pb, err := tx.CreateBucketIfNotExists(bucketAnswerParts)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketAnswerParts, err)
	}
	first, parts := pb.Sequence()+1, 0
	for off := 0; off < len(answer); off += answerPartBytes {
		if err := appendValue(pb, answer[off:min(off+answerPartBytes, len(answer))]); err != nil {
			return fmt.Errorf("put answer part: %w", err)
		}
		parts++
	}
	ref := binary.AppendUvarint([]byte{answerRefMark}, first)
	ref = binary.AppendUvarint(ref, uint64(parts))
	return rb.Put([]byte(id), binary.AppendUvarint(ref, uint64(len(answer))))
}

// markSchema raises the stored schema to schema when it is lower, in tx. The Config the
// database was opened with keeps the schema it had then.
func markSchema(tx *bolt.Tx, schema int) error {
	meta := tx.Bucket(bucketMeta)
	if stored, err := strconv.Atoi(string(meta.Get([]byte("schema")))); err == nil && stored >= schema {
		return nil
	}
	if err := meta.Put([]byte("schema"), []byte(strconv.Itoa(schema))); err != nil {
		return fmt.Errorf("put schema %d: %w", schema, err)
	}
	return nil
}

// answerOf returns a copy of the answer whose requests value is v: v itself, or the parts it
// refers to put together.
func answerOf(tx *bolt.Tx, id string, v []byte) ([]byte, error) {
	if len(v) == 0 || v[0] != answerRefMark {
		return bytes.Clone(v), nil
	}
	d := dec{b: v[1:]}
	first, parts, size := d.uvar(), d.uvar(), d.uvar()
	pb := tx.Bucket(bucketAnswerParts)
	if d.bad || len(d.b) > 0 || pb == nil || size > parts*answerPartBytes {
		return nil, fmt.Errorf("answer %q: reference %x: %w", id, v, ErrCorrupt)
	}
	out := make([]byte, 0, size)
	cur := pb.Cursor()
	k, part := cur.Seek(u64key(first))
	for i := uint64(0); i < parts; i++ {
		if k == nil || binary.BigEndian.Uint64(k) != first+i {
			return nil, fmt.Errorf("answer %q: part %d of %d missing: %w", id, i+1, parts, ErrCorrupt)
		}
		out = append(out, part...)
		k, part = cur.Next()
	}
	if uint64(len(out)) != size {
		return nil, fmt.Errorf("answer %q: %d bytes in its parts, %d referred to: %w", id, len(out), size, ErrCorrupt)
	}
	return out, nil
}

// answerParts is how many parts the requests value v refers to (0 for a whole answer).
func answerParts(v []byte) uint64 {
	if len(v) == 0 || v[0] != answerRefMark {
		return 0
	}
	d := dec{b: v[1:]}
	d.uvar()
	return d.uvar()
}

// checkAnswers checks that every stored answer reads back and that the parts referred to are
// all the parts stored.
func checkAnswers(r *Reader) []error {
	var errs []error
	var referred uint64
	err := r.tx.Bucket(bucketRequests).ForEach(func(k, v []byte) error {
		if _, err := answerOf(r.tx, string(k), v); err != nil {
			errs = append(errs, err)
		}
		referred += answerParts(v)
		return nil
	})
	if err != nil {
		return append(errs, err)
	}
	var stored uint64
	if pb := r.tx.Bucket(bucketAnswerParts); pb != nil {
		stored = uint64(pb.Stats().KeyN)
	}
	if stored != referred {
		errs = append(errs, fmt.Errorf("answer parts: %d stored, %d referred to", stored, referred))
	}
	return errs
}
