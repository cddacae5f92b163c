package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A Guesser gives the words of a text its guesses of their labels, learned
// from the training data's words and labels, and the "pos" and "morph"
// feature sets turn them into attributes (Options.Guesser). It is made
// for the words that training saw rarely or never, whose tags the
// word's own features cannot say: unknown words are most of a tagger's
// errors on inflected languages.
//
// It is Brants's TnT suffix guesser (2000): P(label | suffix) from the
// training words seen at most GuessRare times (rare words behave like
// unknown ones), over the lower-cased suffixes of up to GuessSuffix runes,
// combined from the shortest suffix to the longest by successive
// abstraction with θ the standard deviation of the labels' probabilities.
// A word gets:
//   - none, if training saw it more than GuessRare times (its own
//     features know it);
//   - if training saw it, at most GuessRare times: the guess from the
//     other words only (its own counts taken out), as an unknown word
//     would get, so that the weights trained on the guesses of rare
//     words suit unknown ones;
//   - otherwise the guess of its longest suffix seen in training.
//
// The attributes of a guess are gt= (the best label), gp= (its probability
// in fifths, 0–4), g= (each of the GuessK best labels) and, for
// positional labels (Czech XPOS), g@i= (the best label's character i, for
// each i below Positional). On UD Czech CLTT (--features morph, default
// options) they took the test accuracy from 84.52 % to 85.52 %; on UD
// English EWT XPOS (--features pos) from 94.32 % to 94.39 %
// (docs/features.md).
//
// A Guesser is safe for concurrent use.
type Guesser struct {
	labels     []string
	positional int
	known      map[string]struct{} // frequent training words: no guess
	rare       map[string]guess    // rare training words' leave-one-out guesses
	suffix     map[string]guess    // lower-cased suffixes' guesses ("" included)
}

// The Guesser's constants: training words seen at most GuessRare times
// teach it; suffixes of up to GuessSuffix runes; GuessK labels a guess.
// On UD Czech CLTT (morph, a prototype of these attributes), words seen
// at most 3 and 30 times tagged 85.28 % and 85.24 % against 10's 85.48 %;
// one label 85.15 %, five 85.34 %.
const (
	GuessRare   = 10
	GuessSuffix = 8
	GuessK      = 3
)

type guess struct {
	n int8
	y [GuessK]int32
	p [GuessK]float32
}

// GuesserBuilder collects training words and their labels for a Guesser.
type GuesserBuilder struct {
	ids   map[string]int32
	names []string
	words map[string]map[int32]int32 // form → label → count
}

// Add counts one training token: its word (the form as it is) and label.
func (b *GuesserBuilder) Add(word, label []byte) {
	if b.ids == nil {
		b.ids, b.words = map[string]int32{}, map[string]map[int32]int32{}
	}
	y, ok := b.ids[string(label)]
	if !ok {
		y = int32(len(b.names))
		b.ids[string(label)] = y
		b.names = append(b.names, string(label))
	}
	c := b.words[string(word)]
	if c == nil {
		c = map[int32]int32{}
		b.words[string(word)] = c
	}
	c[y]++
}

// AddSequence counts the labelled tokens of s (its Words and Labels).
func (b *GuesserBuilder) AddSequence(s *Sequence) {
	for t := range s.Words {
		if t < len(s.Labels) && s.Labels[t] != nil {
			b.Add(s.Words[t], s.Labels[t])
		}
	}
}

// Labels returns the labels added so far, in order of first appearance.
func (b *GuesserBuilder) Labels() []string { return b.names }

// Build returns the Guesser of the tokens added, nil when none were;
// positional > 0 adds the g@i= attributes of the first positional bytes of
// the labels (which must all be at least that long).
func (b *GuesserBuilder) Build(positional int) *Guesser {
	if len(b.words) == 0 {
		return nil
	}
	g := &Guesser{labels: slices.Clone(b.names), positional: positional,
		known: map[string]struct{}{}, rare: map[string]guess{}, suffix: map[string]guess{}}
	counts := map[string]map[int32]int32{} // lower-cased suffix → label → count
	var lw []byte
	for w, c := range b.words {
		n := int32(0)
		for _, v := range c {
			n += v
		}
		if n > GuessRare {
			g.known[w] = struct{}{}
			continue
		}
		lw = appendLower(lw[:0], []byte(w))
		for _, s := range suffixes(lw) {
			sc := counts[s]
			if sc == nil {
				sc = map[int32]int32{}
				counts[s] = sc
			}
			for y, v := range c {
				sc[y] += v
			}
		}
	}
	if len(counts) == 0 { // every word frequent: nothing to learn from
		return g
	}
	a := abstraction{counts: make(map[string]labelCounts, len(counts)), scratch: make([]float64, len(g.labels)),
		seen: make([]bool, len(g.labels)), names: g.labels}
	for s, c := range counts {
		a.counts[s] = sortedCounts(c)
	}
	a.theta = thetaOf(a.counts[""])
	for s := range counts {
		g.suffix[s] = a.guess([]byte(s), labelCounts{})
	}
	for w, c := range b.words {
		if _, ok := g.known[w]; ok {
			continue
		}
		lw = appendLower(lw[:0], []byte(w))
		g.rare[w] = a.guess(lw, sortedCounts(c))
	}
	return g
}

// labelCounts are a suffix's (or word's) label counts, by label id, with
// their total.
type labelCounts struct {
	y []int32
	n []int32
	m int32
}

func sortedCounts(c map[int32]int32) labelCounts {
	lc := labelCounts{y: slices.Sorted(maps.Keys(c))}
	for _, y := range lc.y {
		lc.n = append(lc.n, c[y])
		lc.m += c[y]
	}
	return lc
}

// get returns the count of label y.
func (lc labelCounts) get(y int32) int32 {
	if i, ok := slices.BinarySearch(lc.y, y); ok {
		return lc.n[i]
	}
	return 0
}

// suffixes returns the suffixes of lw of 0 to GuessSuffix runes, shortest
// first.
func suffixes(lw []byte) []string {
	out := []string{""}
	end := len(lw)
	for k := 1; k <= GuessSuffix && end > 0; k++ {
		_, size := utf8.DecodeLastRune(lw[:end])
		end -= size
		out = append(out, string(lw[end:]))
	}
	return out
}

// thetaOf is TnT's θ: the standard deviation of the labels' probabilities
// among the rare words' tokens.
func thetaOf(c labelCounts) float64 {
	if len(c.y) < 2 {
		return 0
	}
	mean, ss := 1/float64(len(c.y)), 0.0
	for _, v := range c.n {
		d := float64(v)/float64(c.m) - mean
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(c.y)-1))
}

// abstraction computes guesses: successive abstraction over the suffix
// counts, into a dense scratch row of the labels.
type abstraction struct {
	counts  map[string]labelCounts
	theta   float64
	scratch []float64
	seen    []bool
	touched []int32
	chain   []labelCounts
	names   []string
}

// guess is the guess for the lower-cased word lw from its suffixes'
// counts, less own (the word's own counts, for a training word):
// p_0 = c_0/m_0 for the empty suffix, p_k = (c_k/m_k + θ·p_{k−1})/(1+θ)
// for the suffixes of k runes, as long as they were seen (by others
// than the word itself).
func (a *abstraction) guess(lw []byte, own labelCounts) guess {
	a.chain = a.chain[:0]
	for _, s := range suffixes(lw) {
		c, ok := a.counts[s]
		if !ok || c.m-own.m <= 0 {
			break
		}
		a.chain = append(a.chain, c)
	}
	a.touched = a.touched[:0]
	for k, c := range a.chain {
		m := float64(c.m - own.m)
		if k > 0 {
			for _, y := range a.touched {
				a.scratch[y] *= a.theta
			}
		}
		for i, y := range c.y {
			v := c.n[i] - own.get(y)
			if v <= 0 {
				continue
			}
			if !a.seen[y] {
				a.seen[y] = true
				a.touched = append(a.touched, y)
			}
			a.scratch[y] += float64(v) / m
		}
		if k > 0 {
			for _, y := range a.touched {
				a.scratch[y] /= 1 + a.theta
			}
		}
	}
	var gs guess
	better := func(y, z int32) bool {
		if a.scratch[y] != a.scratch[z] {
			return a.scratch[y] > a.scratch[z]
		}
		return a.names[y] < a.names[z]
	}
	for _, y := range a.touched {
		// insert y into the best GuessK so far
		k := int(gs.n)
		if k == GuessK && !better(y, gs.y[k-1]) {
			continue
		}
		if k < GuessK {
			gs.n++
		} else {
			k--
		}
		for k > 0 && better(y, gs.y[k-1]) {
			gs.y[k] = gs.y[k-1]
			k--
		}
		gs.y[k] = y
	}
	for k := range gs.n {
		gs.p[k] = float32(a.scratch[gs.y[k]])
	}
	for _, y := range a.touched {
		a.scratch[y], a.seen[y] = 0, false
	}
	return gs
}

// lookup returns the guess for a word (lw: lower-cased), or false for a
// frequent training word.
func (g *Guesser) lookup(w, lw []byte) (guess, bool) {
	if _, ok := g.known[string(w)]; ok {
		return guess{}, false
	}
	if gs, ok := g.rare[string(w)]; ok {
		return gs, gs.n > 0
	}
	end := 0
	for k := 1; k <= GuessSuffix && end < len(lw); k++ {
		_, size := utf8.DecodeLastRune(lw[:len(lw)-end])
		if _, ok := g.suffix[string(lw[len(lw)-end-size:])]; !ok {
			break
		}
		end += size
	}
	gs, ok := g.suffix[string(lw[len(lw)-end:])]
	return gs, ok && gs.n > 0
}

// Guess returns the labels the Guesser guesses for word, best first, with
// their probabilities; none for a word training saw often.
func (g *Guesser) Guess(word string) (labels []string, probs []float32) {
	lw := appendLower(nil, []byte(word))
	gs, ok := g.lookup([]byte(word), lw)
	if !ok {
		return nil, nil
	}
	for k := range gs.n {
		labels = append(labels, g.labels[gs.y[k]])
		probs = append(probs, gs.p[k])
	}
	return labels, probs
}

// attrs adds the attributes of the guess for w (lw lower-cased) to b.
func (g *Guesser) attrs(b *builder, w, lw []byte) {
	gs, ok := g.lookup(w, lw)
	if !ok {
		return
	}
	best := g.labels[gs.y[0]]
	st := b.put("gt=")
	b.arena = append(b.arena, best...)
	b.mark(st)
	st = b.put("gp=")
	b.arena = append(b.arena, byte('0'+min(4, int(gs.p[0]*5))))
	b.mark(st)
	for k := range gs.n {
		st = b.put("g=")
		b.arena = append(b.arena, g.labels[gs.y[k]]...)
		b.mark(st)
	}
	for i := range min(g.positional, len(best)) {
		st = b.put("g@")
		b.arena = strconv.AppendInt(b.arena, int64(i), 10)
		b.arena = append(b.arena, '=', best[i])
		b.mark(st)
	}
}

// Len returns the Guesser's entries: frequent words, rare words and
// suffixes.
func (g *Guesser) Len() (known, rare, suffixes int) {
	return len(g.known), len(g.rare), len(g.suffix)
}

// Labels returns the labels the Guesser knows, by id.
func (g *Guesser) Labels() []string { return g.labels }

const guesserMagic = "SCGUESS1"

// MarshalBinary encodes the Guesser (a model stores it): the magic, the
// positional count, the labels, the frequent words, then the rare words'
// and the suffixes' guesses, each table sorted, little-endian.
func (g *Guesser) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := []byte(guesserMagic)
	str := func(s string) {
		b = le.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	b = le.AppendUint32(b, uint32(g.positional))
	b = le.AppendUint32(b, uint32(len(g.labels)))
	for _, l := range g.labels {
		str(l)
	}
	b = le.AppendUint32(b, uint32(len(g.known)))
	for _, w := range slices.Sorted(maps.Keys(g.known)) {
		str(w)
	}
	for _, tab := range []map[string]guess{g.rare, g.suffix} {
		b = le.AppendUint32(b, uint32(len(tab)))
		for _, w := range slices.Sorted(maps.Keys(tab)) {
			str(w)
			gs := tab[w]
			b = append(b, byte(gs.n))
			for k := range gs.n {
				b = le.AppendUint32(b, uint32(gs.y[k]))
				b = le.AppendUint32(b, math.Float32bits(gs.p[k]))
			}
		}
	}
	return b, nil
}

// UnmarshalGuesser decodes a Guesser that MarshalBinary encoded, refusing
// damaged data with an error that says what is wrong.
func UnmarshalGuesser(data []byte) (*Guesser, error) {
	if len(data) < len(guesserMagic) || string(data[:len(guesserMagic)]) != guesserMagic {
		return nil, errors.New("guesser: not a guesser (bad magic)")
	}
	// The keys are substrings of one copy of the data: one allocation,
	// not one per key (a Czech model's guesser has some 76,000).
	d := decoder{b: data[len(guesserMagic):], all: string(data), n: len(data)}
	g := &Guesser{}
	g.positional = int(d.u32())
	n := d.count(4)
	for range n {
		g.labels = append(g.labels, d.str())
	}
	if d.err == nil && g.positional > 0 {
		for _, l := range g.labels {
			if len(l) < g.positional {
				d.fail("label %q shorter than the %d positional characters", l, g.positional)
				break
			}
		}
	}
	n = d.count(4)
	g.known = make(map[string]struct{}, n)
	for range n {
		w := d.str()
		if _, dup := g.known[w]; dup && d.err == nil {
			d.fail("word %q listed twice", w)
		}
		g.known[w] = struct{}{}
	}
	for _, tab := range []*map[string]guess{&g.rare, &g.suffix} {
		n = d.count(5)
		*tab = make(map[string]guess, n)
		for range n {
			w := d.str()
			var gs guess
			k := int(d.byte())
			if k < 1 || k > GuessK {
				d.fail("guess for %q has %d labels (want 1 to %d)", w, k, GuessK)
			}
			for i := range k {
				if d.err != nil {
					break
				}
				y, p := d.u32(), math.Float32frombits(d.u32())
				if y >= uint32(len(g.labels)) {
					d.fail("guess for %q has label %d of %d", w, y, len(g.labels))
				}
				if !(p >= 0 && p <= 1) {
					d.fail("guess for %q has probability %v", w, p)
				}
				gs.y[i], gs.p[i] = int32(y), p
			}
			gs.n = int8(k)
			if _, dup := (*tab)[w]; dup && d.err == nil {
				d.fail("entry %q listed twice", w)
			}
			(*tab)[w] = gs
			if d.err != nil {
				break
			}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the end", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return g, nil
}

// decoder reads MarshalBinary's encoding, remembering the first error.
type decoder struct {
	b   []byte
	all string // the whole data, for str's substrings
	n   int    // its length
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("guesser: "+format, args...)
	}
}

func (d *decoder) u32() uint32 {
	if len(d.b) < 4 {
		d.fail("truncated")
		d.b = nil
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// count reads a count of entries of at least min bytes each, refusing one
// the data cannot hold.
func (d *decoder) count(min int) int {
	n := d.u32()
	if d.err == nil && uint64(n)*uint64(min) > uint64(len(d.b)) {
		d.fail("truncated (%d entries in %d bytes)", n, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		d.fail("truncated")
	}
	if d.err != nil {
		d.b = nil
		return ""
	}
	start := d.n - len(d.b)
	s := d.all[start : start+int(n)]
	d.b = d.b[n:]
	return s
}
