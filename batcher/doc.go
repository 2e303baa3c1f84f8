// Package batcher chooses a batch from predictions: exploitation and coverage values,
// environment quotas, a similarity penalty and a few random slots, deterministically for a
// seed.
//
// Every eligible task gets score = exploit + β_c·coverage, where
//
//   - exploit is 4·Var (ExploitVariance, the default; a fair coin is worth 1), the chance of
//     an informative group, 1 − PDegenerate(group size) (ExploitInformative), or the expected
//     spread of the group's rewards (ExploitSpread, ExpectedSpread), times the transfer factor
//     1 − d + d·G/(G + L) for the mean decayed rollouts L of the task's graph neighbours (d =
//     Transfer, 0.3 by default): among informative tasks, those whose neighbourhood recent
//     batches did not train come first;
//   - coverage, in [0, 1], is ½ uncertainty n₀/(n₀ + own and borrowed evidence) + ¼ staleness
//     1 − exp(−rounds since last chosen / τ) (1 for a task never chosen) + ¼ novelty (½ for a
//     task never rolled out, ½ more for an environment never rolled out).
//
// Each environment's value is its mean score times min(n, batch size)^(1−α)·n^α for its n
// eligible tasks; its share is that value's share smoothed towards shares ∝ n^α (α =
// QuotaSize, 1 by default: quotas follow the catalogue's shape; with α = 0 the value counts at
// most a batch of tasks and the smoothing is towards uniform, so a huge environment gets no more
// than a small one). Quotas start from a minimum (MinShare of the uniform share; with MinCredit
// its fractional parts go a slot each to environments behind it over the batches so far, so
// that it is honoured over batches when it is less than a slot) and grow slot by slot towards
// the shares, up to a
// maximum (MaxShare of the batch) that gives way only when the other environments run out of
// tasks. About RandomShare of the slots go to tasks drawn uniformly (within the quotas); the
// rest are filled by lazy greedy selection in which a candidate's gain is its score minus η
// times its largest edge similarity to a task already chosen (MMR). The penalty only grows, so
// a stale gain in the heap is an upper bound and the greedy needs O((size + updates)·log N).
// An environment with many more candidates than its quota q keeps only its best 2q+16 in its
// heap, and the best one left out bounds the environment's place among the others: a top that
// does not come before it makes the heap whole first, so the picks are those of whole heaps.
//
// Ties are broken by a hash of the seed and the node, so the same inputs and seed give the
// same batch and another seed may give another.
package batcher
