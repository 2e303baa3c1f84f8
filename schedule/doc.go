// Package schedule answers batch requests: it parses and validates a request body, loads the
// statistics and the graph from storage, predicts with propagate, chooses with batcher, and
// stores the answer (PROTOCOL.md sections 5 and 6) with storage.StoreAnswer before it
// returns it. An ID answered before gets its stored bytes back unchanged.
//
// A Scheduler keeps between requests what does not change with every rollout: the graph
// snapshot (rebuilt only when the set of tasks changes), the predictor's buffers and drift
// state, and the selector's buffers. Statistics are read afresh for every request, in one
// read transaction.
package schedule
