// Package graph builds the dual-relation graph of (environment, task) nodes: intra-environment
// and cross-environment nearest-neighbour edges from catalogue text, tools, tags or embeddings.
//
// A Builder takes catalogue tasks (Add, incremental) and yields immutable CSR snapshots
// (Snapshot, a *Graph) for propagate and batcher, and per-node adjacency by name (Adjacency)
// for storage. The package is pure: no I/O, no logging, no package-level state.
//
// Similarity is the cosine of TF-IDF vectors over the words of the text plus tool names and
// tags as distinct, heavier features, or the cosine of given embeddings. Candidates come from
// an inverted index whose posting lists of very frequent features (more than MaxDF tasks) are
// not scanned, and from random-hyperplane LSH for embeddings; they are bounded by their partial
// dot products and only the few that can enter a top list are scored exactly. Never all pairs.
//
// TextFeatures gives the same words, tools and tags as sparse binary rows, which a Graph may
// carry (WithFeatures) for propagate's feature prior.
package graph
