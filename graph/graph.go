package graph

// Node is one (environment, task) pair; Env indexes Graph.Envs.
type Node struct {
	Env  int32
	Task string
}

// Edge is a directed edge from a node to a neighbour. Edges come in both directions.
type Edge struct {
	To     int32   // index of the neighbour node
	Weight float32 // how much evidence flows along the edge, in (0, 1]; smaller for Cross edges
	Sim    float32 // the similarity the edge was made from, in (0, 1]
	Cross  bool    // true when the neighbour is in another environment
}

// Graph is an immutable snapshot of the dual-relation graph in compressed sparse rows. The tie
// of every task to its environment aggregate is implicit: Node.Env names it.
type Graph struct {
	Envs  []string // environment names, sorted
	Nodes []Node   // nodes in a stable order (by environment, then task)
	off   []int32  // Neighbors(i) is edges[off[i]:off[i+1]]
	edges []Edge
	// Feat are the catalogue features of the nodes, indexed like Nodes, or nil when none were
	// attached (see WithFeatures): without them the predictor uses environment priors alone.
	Feat *Features
}

// New returns a graph of the given nodes with adj[i] the edges of node i. It copies adj.
func New(envs []string, nodes []Node, adj [][]Edge) *Graph {
	g := &Graph{Envs: envs, Nodes: nodes, off: make([]int32, len(nodes)+1)}
	total := 0
	for i := range nodes {
		if i < len(adj) {
			total += len(adj[i])
		}
	}
	g.edges = make([]Edge, 0, total)
	for i := range nodes {
		if i < len(adj) {
			g.edges = append(g.edges, adj[i]...)
		}
		g.off[i+1] = int32(len(g.edges))
	}
	return g
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.Nodes) }

// NumEdges is the number of directed edges.
func (g *Graph) NumEdges() int { return len(g.edges) }

// Neighbors returns the edges of node i. The slice must not be changed.
func (g *Graph) Neighbors(i int) []Edge { return g.edges[g.off[i]:g.off[i+1]] }

// NewCSR returns a graph that takes ownership of off and edges, already in compressed sparse
// rows: the edges of node i are edges[off[i]:off[i+1]]. off must have len(nodes)+1 entries,
// start at 0, never decrease and end at len(edges). It is the allocation-free path for large
// generated graphs; New is the convenient one.
func NewCSR(envs []string, nodes []Node, off []int32, edges []Edge) *Graph {
	return &Graph{Envs: envs, Nodes: nodes, off: off, edges: edges}
}
