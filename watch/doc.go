// Package watch reports which paths under the exchange directory may have changed, from fsnotify
// events and from a polling loop that alone is enough.
//
// Everything it reports is a hint: the reader of a file decides what changed by reading it. A
// Watcher never reads file contents. Events only mark paths dirty; one goroutine (Run) flushes
// the dirty set after a short debounce (at once for a path Options.Urgent picks), polls on a ticker, and turns an event overflow or any
// watcher error into a request for a full rescan. In notify mode the polling loop still runs, at
// a slow interval, as a safety net against lost events; in poll mode (forced, or when fsnotify
// cannot start) it is the only source and runs at the poll interval.
package watch
