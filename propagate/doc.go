// Package propagate turns per-task statistics and the graph into per-node predictions: mean reward, within-group variance, the exact chance of a degenerate group, and uncertainty.
package propagate
