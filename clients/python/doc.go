// Package python holds the Go tests of envsched's Python side: the stdlib client
// (envsched_client.py), the verl and TRL adapters, and the example trainer in
// examples/python_trainer. The tests build the real envsched binary, run `envsched run`, and drive
// it from python3; they skip with a message when python3 is not installed.
package python
