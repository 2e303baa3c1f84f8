//go:build !linux

package storage

import bolt "go.etcd.io/bbolt"

func releaseMapped(*bolt.Tx) {}
