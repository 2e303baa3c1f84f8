package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/schedule"
)

// badIDMessage says why an ID is refused and how to fix it.
func badIDMessage(id string) string {
	return fmt.Sprintf("request ID %q is not valid: an ID is 1 to 128 characters from A-Z, a-z, 0-9, "+
		"'.', '_' and '-', starting with a letter or digit, and does not end in \".error\" (ID.error.json is "+
		"the error file of ID); rename the request file to ID.json", id)
}

// requestID returns the ID named by a file in DIR/requests, and whether the file is a request at
// all: unfinished writes (a leading dot, a ".tmp" end) and names not ending in ".json" are not.
func requestID(name string) (string, bool) {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp") {
		return "", false
	}
	id, ok := strings.CutSuffix(name, ".json")
	return id, ok && id != ""
}

// readyRequest reports whether path, just created or renamed into DIR/requests, is a request
// that can be read now: a request name, a regular file, not empty. The watcher then hands it
// over without its debounce (a trainer waits on the answer). A file created empty (a writer
// that opens the final name, then writes) is left to the debounce as before, so that it is
// not read before its bytes are there. It runs in the watcher's goroutine.
func (d *Daemon) readyRequest(path string) bool {
	if filepath.Dir(path) != d.dirs.requests {
		return false
	}
	if _, ok := requestID(filepath.Base(path)); !ok {
		return false
	}
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// errRequestGone means the request file went away before it was read: nothing to answer.
var errRequestGone = errors.New("request file is gone")

// errOwnOutput means the request file is the daemon's own standard output or error (`2>>
// DIR/requests/log.json`): never read nor answered. Refused as a bad request, its error was
// logged into it, which made it a request written again, refused and logged again: 140 log
// lines a second for as long as the daemon ran.
var errOwnOutput = errors.New("request file is envsched's own standard output or error (its log)")

// readRequest reads a request file of at most MaxRequestBytes. A larger file is a bad request.
// Only a regular file is read: a symbolic link is not followed, and a FIFO (or anything else)
// is refused without blocking (fsutil.OpenRegular), as a bad request.
func readRequest(path string) ([]byte, error) {
	f, err := fsutil.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errRequestGone
	}
	if errors.Is(err, fs.ErrPermission) { // said apart: the advice for a link or a FIFO sent its writer looking for one
		return nil, &badRequestError{msg: fmt.Sprintf("cannot read the request file: %v; make it readable by the "+
			"user envsched runs as (it is answered once it is)", err)}
	}
	if err != nil {
		return nil, &badRequestError{msg: fmt.Sprintf("cannot read the request file: %v; write it as a "+
			"plain file (not a link), as .ID.json.tmp then rename to ID.json", err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fsutil.IsOwnOutput(fi) {
		return nil, errOwnOutput
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRequestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read request %s: %w", path, err)
	}
	if len(data) > MaxRequestBytes {
		return nil, &badRequestError{msg: fmt.Sprintf("request file is larger than %d bytes; a request "+
			"is a small JSON object such as {\"size\": 64}", MaxRequestBytes)}
	}
	return data, nil
}

// badRequestError is a request that cannot be served; the daemon writes its message to
// ID.error.json and goes on.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

// BadRequest marks the error as the requester's fault.
func (e *badRequestError) BadRequest() bool { return true }

// isBadRequest reports whether err is the requester's fault (an ID.error.json) rather than a
// failure of envsched (which stops the daemon). Any error in the chain with a BadRequest()
// method returning true counts, so the scheduler's own error types need no import here.
func isBadRequest(err error) bool {
	var br interface{ BadRequest() bool }
	return errors.As(err, &br) && br.BadRequest()
}

// errorFile is the body of ID.error.json.
func errorFile(id, msg string) []byte {
	data, _ := json.Marshal(struct {
		ID    string `json:"id"`
		Error string `json:"error"`
	}{id, msg})
	return append(data, '\n')
}

// nearRequest reports whether a file name in DIR/requests that is not a request (requestID) looks
// like one all the same: ID.JSON, ID.jsonl, ID.json5, ID.json.bak, or an ID with no extension at
// all (step-000001: the .json forgotten). Such a file is never answered, and its trainer waits for
// a batch that never comes.
func nearRequest(name string) bool {
	_, ok := requestID(name)
	return !ok && !strings.HasPrefix(name, ".") && !strings.HasSuffix(name, ".tmp") &&
		(strings.Contains(strings.ToLower(name), ".json") || (!strings.Contains(name, ".") && schedule.ValidID(name)))
}

// listRequests returns the names of the request files in dir, in directory order, and the names
// of the files that look like requests but are not (nearRequest). dir itself must be a folder,
// not a symbolic link to one (an error wrapping syscall.ELOOP): requests are never read from
// outside DIR.
func listRequests(dir string) (names, near []string, err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, ok := requestID(e.Name()); ok { // a folder too: it gets an error file
			names = append(names, e.Name())
		} else if !e.IsDir() && nearRequest(e.Name()) {
			near = append(near, e.Name())
		} else if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			near = append(near, e.Name()+"/") // requests/run1/ID.json is never read: no subfolder is
		}
	}
	return names, near, nil
}

// errorFileName and batchFileName are the answer files of an ID in DIR/batches. The error file
// is ID.error.json, except when that name is longer than a published name may be (an ID of
// more than 222 bytes, never valid; its request file name may have up to 255): then it is the
// ID's first 200 bytes, "~", 16 hex digits of the SHA-256 of the whole ID, and ".error.json".
// No valid ID has a "~", so no valid ID's files can be taken.
func batchFileName(id string) string { return id + ".json" }
func errorFileName(id string) string {
	if name := id + ".error.json"; len(name) <= maxPublished {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	return id[:200] + "~" + hex.EncodeToString(sum[:8]) + ".error.json"
}

// maxNameLen is the longest file name in bytes on the file systems envsched runs on, and
// maxPublished the longest name envsched publishes: its temporary file's name
// (fsutil.TempName) is 22 bytes longer.
const (
	maxNameLen   = 255
	maxPublished = maxNameLen - 22
)

// safeName reports whether name can be written as a file in one folder: a plain name, no
// separator, not too long for the filesystem.
func safeName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") &&
		len(name) <= maxPublished && filepath.Base(name) == name
}
