// Package daemon runs envsched's event loop: it owns every database write, answers batch requests behind the ingest barrier and publishes batch and status files atomically.
package daemon
