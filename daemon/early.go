package daemon

import (
	"bytes"
	"io"
	"path/filepath"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/schedule"
)

// EarlyAnswerer is an Answerer that hands a new answer's bytes over just before it stores them
// (schedule.Scheduler does, see its AnswerEarly). The daemon then writes the batch file's
// temporary copy while the answer's commit is fsync'd, and renames it into place only once
// AnswerEarly has returned: the answer is in the database before its batch file is visible.
type EarlyAnswerer interface {
	AnswerEarly(id string, body []byte, early func(answer []byte)) ([]byte, error)
}

// ParsedAnswerer is an EarlyAnswerer that answers a body parsed once (schedule.Scheduler is
// one): the daemon parses each request body once (Parse), answers from that parse and logs from
// it (the keys ignored, a body that differs from its stored answer), where it parsed the body
// again for each of those. A body of 20,000 keys that are no field was parsed twice.
type ParsedAnswerer interface {
	Parse(body []byte) schedule.Parsed
	AnswerParsed(id string, p schedule.Parsed, early func(answer []byte)) ([]byte, error)
}

// parse parses a request body once, by the answerer's own defaults when it parses.
func (d *Daemon) parse(body []byte) schedule.Parsed {
	if pa, ok := d.answer.(ParsedAnswerer); ok {
		return pa.Parse(body)
	}
	req, err := schedule.ParseRequest(body, d.cfg.BatchSize, d.cfg.GroupSize)
	return schedule.Parsed{Request: req, Err: err}
}

// earlyBatch is the temporary batch file of an answer, written by a goroutine of its own while
// the answer is being stored.
type earlyBatch struct {
	answer []byte
	done   chan struct{}
	file   *fsutil.Prepared // nil when the write failed
}

// answerEarly answers id, starting the batch file's write as soon as a new answer's bytes are
// known when the answerer can say them early. The returned earlyBatch (nil when none was
// started) must be taken or discarded.
func (d *Daemon) answerEarly(id string, body []byte, parsed schedule.Parsed) ([]byte, *earlyBatch, error) {
	var b *earlyBatch
	early := func(answer []byte) {
		if !d.canPublish(batchFileName(id)) {
			return // written by a later sweep once it can be
		}
		b = d.startBatch(id, answer)
		d.crash.afterWait(CrashBeforeStore, b.wait)
	}
	var answer []byte
	var err error
	switch a := d.answer.(type) {
	case ParsedAnswerer:
		answer, err = a.AnswerParsed(id, parsed, early)
	case EarlyAnswerer:
		answer, err = a.AnswerEarly(id, body, early)
	default:
		answer, err = d.answer.Answer(id, body)
	}
	return answer, b, err
}

// startBatch writes answer into a temporary batch file of id, fsync'd, from a new goroutine.
func (d *Daemon) startBatch(id string, answer []byte) *earlyBatch {
	b := &earlyBatch{answer: answer, done: make(chan struct{})}
	path := filepath.Join(d.dirs.batches, batchFileName(id))
	go func() {
		defer close(b.done)
		b.file, _ = fsutil.Prepare(path, 0o644, func(w io.Writer) error {
			_, err := w.Write(answer)
			return err
		}) // a failed write is done again by publish, which reports it
	}()
	return b
}

// wait waits for the write to end. A nil earlyBatch has nothing to wait for.
func (b *earlyBatch) wait() {
	if b != nil {
		<-b.done
	}
}

// take waits for the write and returns its file when it holds answer (nil otherwise, the
// temporary file removed).
func (b *earlyBatch) take(answer []byte) *fsutil.Prepared {
	if b == nil {
		return nil
	}
	b.wait()
	if !bytes.Equal(b.answer, answer) {
		b.file.Discard()
		return nil
	}
	return b.file
}

// discard waits for the write and removes its temporary file.
func (b *earlyBatch) discard() {
	if b != nil {
		b.wait()
		b.file.Discard()
	}
}
