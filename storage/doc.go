// Package storage is envsched's bbolt database and its only importer of bbolt: schema, file cursors, rollouts, statistics, quarantine, edges and stored answers, each change in one transaction.
package storage
