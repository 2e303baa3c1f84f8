// Package batcher chooses a batch from predictions: exploitation and coverage values, environment quotas, a similarity penalty and a few random slots, deterministically for a seed.
package batcher
