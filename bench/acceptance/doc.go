// Package acceptance holds the Go side of envsched's independent acceptance harness (issue 13):
// harness.py and worlds.py in this folder play a GRPO trainer with a learner model of their own
// against the real `envsched run` binary through the file protocol, on the real tasks of
// ../shared/data/catalog-real.jsonl, and compare it with random choice and an oracle. The
// harness was written apart from sim/, whose worlds were designed alongside the scheduler.
//
// The tests run the harness's smoke mode (few tasks, few steps) against the real binary and check
// what it measures from its own data: every batch honoured, every rollout counted once in
// status.json, the daemon's calibration ledger equal to the harness's count, the table's figures
// equal to the curves. They skip when python3 is missing; without the real catalogue they run on
// a small catalogue of the same layout written by the test.
package acceptance
