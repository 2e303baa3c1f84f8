// Package python holds the Go tests of envsched's Python side (issue 6): the stdlib client
// (envsched_client.py), the verl and TRL adapters, the example trainer in
// examples/python_trainer, verl's rollout dumps, and verl's parquet catalogues through
// `envsched catalog import` and the daemon. The tests build the real envsched binary and run
// `envsched run`; those that drive it from python3 skip with a message when python3 is missing.
package python
