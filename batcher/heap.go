package batcher

// entry is a candidate (or, in the top-level heap, an environment) with its gain.
type entry struct {
	gain float64
	key  uint64 // seeded tie-break among equal gains
	node int32
}

// before orders entries best first: higher gain, then higher key, then lower index, so that
// the order is total and the selection deterministic.
func (a entry) before(b entry) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	if a.key != b.key {
		return a.key > b.key
	}
	return a.node < b.node
}

// heap is a binary max-heap of entries, typed to avoid container/heap's interface calls on
// the hot path.
type heap struct{ items []entry }

func (h *heap) len() int    { return len(h.items) }
func (h *heap) peek() entry { return h.items[0] }

func (h *heap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *heap) push(e entry) {
	h.items = append(h.items, e)
	h.up(len(h.items) - 1)
}

func (h *heap) pop() entry {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

// replaceTop replaces the top entry and restores the heap.
func (h *heap) replaceTop(e entry) {
	h.items[0] = e
	h.down(0)
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].before(h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *heap) down(i int) {
	n := len(h.items)
	for {
		best, l := i, 2*i+1
		if l < n && h.items[l].before(h.items[best]) {
			best = l
		}
		if r := l + 1; r < n && h.items[r].before(h.items[best]) {
			best = r
		}
		if best == i {
			return
		}
		h.items[i], h.items[best] = h.items[best], h.items[i]
		i = best
	}
}
