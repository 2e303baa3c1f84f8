// Package report turns an envsched database into one self-contained HTML page that a person
// opens after (or during) a training run: rollouts and mean reward per environment over steps,
// each environment's share of the chosen batches, predicted against realised degenerate groups
// per step (is the predictor calibrated?), the predicted success of every task now, the most
// and least chosen tasks, and what was quarantined. Plots are PNG images made with gonum/plot
// and embedded as data URIs, so the file needs nothing beside it.
//
// Collect reads everything from one read transaction (a consistent state); Render writes the
// page. Neither writes to the database.
package report
