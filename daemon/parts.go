package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
)

// defaultParts are the real ingester and scheduler.
func defaultParts() parts {
	return parts{ingester: newIngester, answerer: interimAnswererFunc}
}

// newIngester is package ingest's Ingester over the exchange directory.
func newIngester(db *storage.DB, dir string, logger *slog.Logger) (Ingester, error) {
	return ingest.New(db, dir, ingest.Options{Logger: logger})
}

// interimAnswerer is a small real answerer: it validates the body strictly, stores an answer
// with no tasks through storage.StoreAnswer and returns the stored answer for an ID answered
// before. It stands in for package schedule until that is wired in, and lets the daemon's own
// duties be tested alone.
type interimAnswerer struct{ db *storage.DB }

type interimRequest struct {
	Size      *int   `json:"size"`
	GroupSize *int   `json:"group_size"`
	Step      *int64 `json:"step"`
}

func (a interimAnswerer) Answer(id string, body []byte) ([]byte, error) {
	if old, err := a.db.Answer(id); err == nil {
		return old, nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	var req interimRequest
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, &badRequestError{msg: "request is not a valid JSON object: " + err.Error() +
				"; write an object such as {\"size\": 64}"}
		}
	}
	size := 64
	if req.Size != nil {
		if *req.Size < 1 || *req.Size > 100000 {
			return nil, &badRequestError{msg: fmt.Sprintf("size %d: must be 1 to 100000", *req.Size)}
		}
		size = *req.Size
	}
	c, err := a.db.Counters()
	if err != nil {
		return nil, err
	}
	step := c.Round + 1
	if req.Step != nil {
		step = *req.Step
	}
	answer, _ := json.Marshal(map[string]any{"id": id, "policy": "envsched/interim", "step": step,
		"created_at": rfc3339(time.Now()), "size": size, "rollouts_seen": c.Rollouts,
		"envs": map[string]int{}, "tasks": []any{}})
	if err := a.db.StoreAnswer(id, step, answer, nil); err != nil {
		return nil, err
	}
	return answer, nil
}

func interimAnswererFunc(db *storage.DB) (Answerer, error) { return interimAnswerer{db}, nil }
