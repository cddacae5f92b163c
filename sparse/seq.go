package sparse

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// NoLabel marks an unlabelled position in Builder.End.
const NoLabel int32 = -1

// Seq is one sequence of T positions in compressed sparse row (CSR) form:
// position t has the features Ptr[t] ≤ f < Ptr[t+1], each an attribute id
// IDs[f] with value Vals[f]. The same attribute may occur more than once at a
// position (its values add up), and a position may have no features.
//
// Ptr has T+1 entries and starts at 0. Vals is nil when every value is 1.
// Labels, if not nil, has one gold label per position.
//
// A Seq is a view: the Seq that Corpus.Seq and Builder.Seq return share
// memory with their source.
type Seq struct {
	Ptr    []int32   // T+1 feature offsets, from 0
	IDs    []int32   // attribute id of each feature
	Vals   []float64 // value of each feature, or nil for all 1
	Labels []int32   // gold label of each position, or nil
}

// Len returns the number of positions T.
func (s Seq) Len() int {
	if len(s.Ptr) == 0 {
		return 0
	}
	return len(s.Ptr) - 1
}

// NumFeatures returns the number of (position, attribute) features.
func (s Seq) NumFeatures() int {
	if len(s.Ptr) == 0 {
		return 0
	}
	return int(s.Ptr[len(s.Ptr)-1])
}

// Value returns the value of feature f (1 when Vals is nil).
func (s Seq) Value(f int) float64 {
	if s.Vals == nil {
		return 1
	}
	return s.Vals[f]
}

// values returns Vals, or a shared read-only slice of n ones when Vals is
// nil (for kernels.Gather and Scatter, which want values).
func (s Seq) values() []float64 {
	if s.Vals != nil {
		return s.Vals
	}
	return ones(s.NumFeatures())
}

// Validate checks that s is well formed for a model with numAttrs attributes
// and m labels: Ptr starts at 0 and ascends, IDs and Vals have Ptr[T]
// entries, ids are in [0, numAttrs), values are finite and labels (if any)
// are in [0, m). Data read from files should pass Validate before it is
// scored; the scoring methods treat malformed sequences as programming
// errors.
func (s Seq) Validate(numAttrs, m int) error {
	if err := s.checkShape(); err != nil {
		return err
	}
	for f, id := range s.IDs[:s.NumFeatures()] {
		if id < 0 || int(id) >= numAttrs {
			return fmt.Errorf("sparse: feature %d has attribute id %d, out of range [0,%d)", f, id, numAttrs)
		}
	}
	return s.checkLabels(m)
}

// checkShape checks everything but the range of ids and labels.
func (s Seq) checkShape() error {
	if len(s.Ptr) == 0 {
		if len(s.IDs) != 0 || len(s.Vals) != 0 || len(s.Labels) != 0 {
			return fmt.Errorf("sparse: sequence has no Ptr but %d ids, %d values, %d labels", len(s.IDs), len(s.Vals), len(s.Labels))
		}
		return nil
	}
	if s.Ptr[0] != 0 {
		return fmt.Errorf("sparse: Ptr[0] = %d, want 0", s.Ptr[0])
	}
	for t := 1; t < len(s.Ptr); t++ {
		if s.Ptr[t] < s.Ptr[t-1] {
			return fmt.Errorf("sparse: Ptr descends at position %d (%d < %d)", t-1, s.Ptr[t], s.Ptr[t-1])
		}
	}
	n := s.NumFeatures()
	if len(s.IDs) != n {
		return fmt.Errorf("sparse: %d attribute ids for %d features", len(s.IDs), n)
	}
	if s.Vals != nil {
		if len(s.Vals) != n {
			return fmt.Errorf("sparse: %d values for %d features", len(s.Vals), n)
		}
		for f, v := range s.Vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse: feature %d has value %v", f, v)
			}
		}
	}
	if s.Labels != nil && len(s.Labels) != s.Len() {
		return fmt.Errorf("sparse: %d labels for %d positions", len(s.Labels), s.Len())
	}
	return nil
}

func (s Seq) checkLabels(m int) error {
	for t, y := range s.Labels {
		if y < 0 || int(y) >= m {
			return fmt.Errorf("sparse: label %d at position %d is out of range [0,%d)", y, t, m)
		}
	}
	return nil
}

// onesBuf holds a shared, never written slice of ones, replaced by a
// longer one on demand.
var (
	onesBuf  atomic.Pointer[[]float64]
	onesGrow sync.Mutex
)

func ones(n int) []float64 {
	if p := onesBuf.Load(); p != nil && len(*p) >= n {
		return (*p)[:n]
	}
	onesGrow.Lock()
	defer onesGrow.Unlock()
	old := 0
	if p := onesBuf.Load(); p != nil {
		if len(*p) >= n {
			return (*p)[:n]
		}
		old = len(*p)
	}
	s := make([]float64, max(n, 2*old, 1024))
	for i := range s {
		s[i] = 1
	}
	onesBuf.Store(&s)
	return s[:n]
}

// Builder assembles one sequence position by position with no allocation
// once its buffers have grown: Add the features of a position, End it (with
// its label or NoLabel), and take the result with Seq. Reset starts the next
// sequence and reuses the memory.
type Builder struct {
	ptr       []int32
	ids       []int32
	vals      []float64
	labels    []int32
	hasVals   bool // some value ≠ 1
	hasLabels bool // some position labelled
}

// Reset empties the builder, keeping its memory. Sequences returned by Seq
// before are overwritten by the next use.
func (b *Builder) Reset() {
	b.ptr = append(b.ptr[:0], 0)
	b.ids, b.vals, b.labels = b.ids[:0], b.vals[:0], b.labels[:0]
	b.hasVals, b.hasLabels = false, false
}

// Add adds attribute id with value v to the current position.
func (b *Builder) Add(id int32, v float64) {
	if len(b.ptr) == 0 {
		b.ptr = append(b.ptr, 0)
	}
	b.ids = append(b.ids, id)
	b.vals = append(b.vals, v)
	if v != 1 {
		b.hasVals = true
	}
}

// End closes the current position (which may have no features) with its
// gold label, or NoLabel.
func (b *Builder) End(label int32) {
	if len(b.ptr) == 0 {
		b.ptr = append(b.ptr, 0)
	}
	b.ptr = append(b.ptr, int32(len(b.ids)))
	b.labels = append(b.labels, label)
	if label != NoLabel {
		b.hasLabels = true
	}
}

// Seq returns the sequence of the positions ended so far, a view of the
// builder's memory valid until the next Reset. Features added after the last
// End are not part of it. Vals is nil if every value is 1, Labels nil if no
// position was labelled.
func (b *Builder) Seq() Seq {
	if len(b.ptr) <= 1 {
		return Seq{}
	}
	n := b.ptr[len(b.ptr)-1]
	s := Seq{Ptr: b.ptr, IDs: b.ids[:n]}
	if b.hasVals {
		s.Vals = b.vals[:n]
	}
	if b.hasLabels {
		s.Labels = b.labels
	}
	return s
}

// Corpus stores many sequences in shared backing arrays: one array of
// attribute ids for all features, one of per-position offsets, one of
// labels, and per-sequence offsets into them. A feature costs 4 bytes
// (12 with values ≠ 1), a position 8 (offset and label); sequences cost no
// allocation of their own.
type Corpus struct {
	ptr    []int32   // per sequence: its T+1 offsets, starting at 0
	ids    []int32   // all features
	vals   []float64 // all values, or nil while every value is 1
	labels []int32   // per position, or nil for an unlabelled corpus
	seqPos []int64   // sequence i has positions seqPos[i] … seqPos[i+1]
	seqFt  []int64   // and features seqFt[i] … seqFt[i+1]
	maxLen int
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus {
	return &Corpus{seqPos: []int64{0}, seqFt: []int64{0}}
}

// Len returns the number of sequences.
func (c *Corpus) Len() int { return len(c.seqPos) - 1 }

// Tokens returns the total number of positions.
func (c *Corpus) Tokens() int64 { return c.seqPos[len(c.seqPos)-1] }

// Features returns the total number of features.
func (c *Corpus) Features() int64 { return c.seqFt[len(c.seqFt)-1] }

// MaxLen returns the length of the longest sequence.
func (c *Corpus) MaxLen() int { return c.maxLen }

// Labelled reports whether the corpus holds gold labels (true for an empty
// corpus).
func (c *Corpus) Labelled() bool { return c.labels != nil || c.Tokens() == 0 }

// MemoryBytes returns the bytes the corpus's arrays occupy (capacities).
func (c *Corpus) MemoryBytes() int64 {
	return 4*int64(cap(c.ptr)+cap(c.ids)+cap(c.labels)) + 8*int64(cap(c.vals)+cap(c.seqPos)+cap(c.seqFt))
}

// Append copies s into the corpus. It checks the shape of s (not the range
// of its ids and labels: see Validate) and that it is labelled if and only
// if the sequences before it are.
func (c *Corpus) Append(s Seq) error {
	if c.seqPos == nil {
		c.seqPos, c.seqFt = []int64{0}, []int64{0}
	}
	if err := s.checkShape(); err != nil {
		return err
	}
	T, n := s.Len(), s.NumFeatures()
	if c.Tokens() > 0 && T > 0 && (s.Labels != nil) != (c.labels != nil) {
		return fmt.Errorf("sparse: Corpus.Append: mixing labelled and unlabelled sequences")
	}
	if c.Tokens() == 0 && s.Labels != nil {
		c.labels = make([]int32, 0, T)
	}
	if s.Vals != nil && c.vals == nil {
		c.vals = make([]float64, len(c.ids), cap(c.ids))
		for i := range c.vals {
			c.vals[i] = 1
		}
	}
	if T > 0 {
		c.ptr = append(c.ptr, s.Ptr...)
		c.labels = append(c.labels, s.Labels...)
	} else {
		c.ptr = append(c.ptr, 0)
	}
	c.ids = append(c.ids, s.IDs[:n]...)
	if c.vals != nil {
		if s.Vals != nil {
			c.vals = append(c.vals, s.Vals[:n]...)
		} else {
			c.vals = append(c.vals, ones(n)...)
		}
	}
	c.seqPos = append(c.seqPos, c.Tokens()+int64(T))
	c.seqFt = append(c.seqFt, c.Features()+int64(n))
	c.maxLen = max(c.maxLen, T)
	return nil
}

// Seq returns sequence i, a view of the corpus's memory (no allocation).
func (c *Corpus) Seq(i int) Seq {
	p0, p1 := c.seqPos[i], c.seqPos[i+1]
	f0, f1 := c.seqFt[i], c.seqFt[i+1]
	if p0 == p1 {
		return Seq{}
	}
	// Every sequence stores T+1 offsets (an empty one stores [0]), so
	// sequence i's start after those of the i sequences before it.
	o := p0 + int64(i)
	s := Seq{Ptr: c.ptr[o : o+p1-p0+1], IDs: c.ids[f0:f1]}
	if c.vals != nil {
		s.Vals = c.vals[f0:f1]
	}
	if c.labels != nil {
		s.Labels = c.labels[p0:p1]
	}
	return s
}

// Validate checks every sequence with Seq.Validate.
func (c *Corpus) Validate(numAttrs, m int) error {
	for i := range c.Len() {
		if err := c.Seq(i).Validate(numAttrs, m); err != nil {
			return fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	return nil
}

// AttrCounts returns how many features use each attribute id in
// [0, numAttrs) (ids outside are not counted): the input of FrequencyOrder.
func (c *Corpus) AttrCounts(numAttrs int) []int64 {
	counts := make([]int64, numAttrs)
	for _, id := range c.ids {
		if id >= 0 && int(id) < numAttrs {
			counts[id]++
		}
	}
	return counts
}

// Remap replaces every attribute id a by oldToNew[a] in place, and drops
// the features whose new id is negative (as Dict.Reorder's map does for the
// attributes it leaves out). It is an error for an id to be outside
// [0, len(oldToNew)); the corpus is then unchanged.
func (c *Corpus) Remap(oldToNew []int32) error {
	for f, id := range c.ids {
		if id < 0 || int(id) >= len(oldToNew) {
			return fmt.Errorf("sparse: Corpus.Remap: feature %d has attribute id %d, out of range [0,%d)", f, id, len(oldToNew))
		}
	}
	w := int64(0) // write index into ids/vals
	for i := range c.Len() {
		p0, p1 := c.seqPos[i], c.seqPos[i+1]
		ptr := c.ptr[p0+int64(i) : p1+int64(i)+1]
		base := c.seqFt[i]
		c.seqFt[i] = w
		start := w
		for t := 0; t+1 < len(ptr); t++ {
			lo, hi := base+int64(ptr[t]), base+int64(ptr[t+1])
			ptr[t] = int32(w - start)
			for f := lo; f < hi; f++ {
				if nid := oldToNew[c.ids[f]]; nid >= 0 {
					c.ids[w] = nid
					if c.vals != nil {
						c.vals[w] = c.vals[f]
					}
					w++
				}
			}
		}
		ptr[len(ptr)-1] = int32(w - start)
	}
	c.seqFt[c.Len()] = w
	c.ids = c.ids[:w]
	if c.vals != nil {
		c.vals = c.vals[:w]
	}
	return nil
}
