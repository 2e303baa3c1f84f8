// Package graph builds the dual-relation graph of (environment, task) nodes: intra-environment and cross-environment nearest-neighbour edges from catalogue text, tools, tags or embeddings.
package graph
