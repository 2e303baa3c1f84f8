// Package propagate turns per-task statistics and the graph into per-node predictions: mean
// reward, within-group variance, the exact chance of a degenerate group, and uncertainty.
//
// Each node's success probability gets a Beta posterior from three sources of evidence:
//
//   - a prior Beta(κ·m, κ·(1−m)), so that a task never rolled out still has a sound
//     prediction and no pilot rollouts are needed. When the graph carries catalogue features
//     (graph.Features), m is the feature prior: a ridge regression, refitted every call, of
//     the rolled-out nodes' logits on their words, tools, tags and environment. Otherwise m
//     is the environment prior: the decayed mean reward of the node's environment without
//     the node itself (0.5 when nothing is known);
//   - the node's own evidence a = Σr, b = Σ(1−r), decayed by λ per round (stats.Task.Evidence);
//   - evidence borrowed from neighbours: a share γ·w/W of each neighbour's own evidence (w the
//     edge weight, W the node's total edge weight, at least MinTotalWeight), over one or two
//     hops, never the node's own evidence echoed back, and capped at BorrowCap pseudo
//     rollouts.
//
// A call also measures drift, against the baselines of the State it is given (the state is a
// value: each call takes one and returns the next, and the caller stores it): when an environment's new
// rollouts of tasks never rolled out before come out above (or below) what was predicted for
// them, a smoothed logit offset moves the environment's stale nodes the same way; the tasks
// rolled out before and chosen again share one such offset (the re-chosen offset), since
// training on a task makes it easier faster than its decayed evidence says.
//
// Rewards are in [0, 1]. For 0/1 rewards Var is E[p(1−p)] and PDeg is exact under the
// Beta-Binomial model; a task with continuous rewards blends in its observed within-group
// variance and share of degenerate groups. The answer's chance of a degenerate group for a
// pick of an environment with graded rewards is then calibrated per channel by what came back
// for such picks (Params.GradedCal, gradedcal.go).
//
// Use in a simulator, without storage: keep one []stats.Task indexed like g.Nodes, update it
// with stats.Task.Add as rollouts come in, and call one Predictor's Predict every step with
// the step as the round and the State the previous call returned, with the baselines of
// the nodes whose rollouts the call should measure (see the example of package batcher).
package propagate
