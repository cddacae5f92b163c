package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// lexModel is a random model with a lexicon over words "v0".."v5": v0 and
// v1 restricted to two labels, v2 to one, the others absent (free).
func lexModel(t *testing.T, r *rand.Rand) *Model {
	m := randomModel(t, r, spec{m: 4, attrs: 20, layout: sparse.SparseRows, tied: true})
	var b sparse.LexiconBuilder
	b.Add([]byte("v0"), 3)
	b.Add([]byte("v0"), 1)
	b.Add([]byte("v1"), 0)
	b.Add([]byte("v1"), 2)
	b.Add([]byte("v2"), 2)
	m.Lexicon = b.Build()
	return m
}

// TestLexiconModel: the lexicon survives WriteFile and Load, and Tag with
// Candidates gives the best labelling and the probabilities of the chain
// restricted to the allowed labels (enumerated), words outside free.
func TestLexiconModel(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	m0 := lexModel(t, r)
	path := filepath.Join(t.TempDir(), "lex.model")
	if err := m0.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Lexicon == nil || !slices.Equal(m.Lexicon.Labels, m0.Lexicon.Labels) || !slices.Equal(m.Lexicon.Ptr, m0.Lexicon.Ptr) ||
		!slices.Equal(dictStrings(m.Lexicon.Words), dictStrings(m0.Lexicon.Words)) {
		t.Fatalf("lexicon after Load: %+v, want %+v", m.Lexicon, m0.Lexicon)
	}
	c, err := m.Compact()
	if err != nil || c.Lexicon != m.Lexicon {
		t.Fatalf("Compact dropped the lexicon (%v)", err)
	}
	if err := m.CRFsuiteCompatible(); err == nil || !strings.Contains(err.Error(), "lexicon") {
		t.Errorf("CRFsuiteCompatible with a lexicon: %v", err)
	}
	tg := m.NewTagger()
	var out Output
	restricted := 0
	for range 40 {
		T := 1 + r.IntN(4)
		seq := randomSeq(r, 20, T, false)
		words := make([][]byte, T)
		for k := range words {
			words[k] = fmt.Appendf(nil, "v%d", r.IntN(6))
		}
		cands := m.Candidates(nil, words, len(words))
		if err := tg.Tag(seq, Options{Prob: true, AllMarginals: true, Candidates: cands}, &out); err != nil {
			t.Fatal(err)
		}
		vit, _, err := tg.ViterbiCandidates(nil, seq, cands)
		if err != nil || !slices.Equal(vit, out.Labels) {
			t.Fatalf("ViterbiCandidates %v (%v), Tag %v", vit, err, out.Labels)
		}
		emit := make([]float64, T*4)
		m.State.Score(emit, seq)
		best, bestY, logZ := math.Inf(-1), []int32(nil), math.Inf(-1)
		marg := make([]float64, T*4)
		y := make([]int32, T)
		var paths [][]int32
		var scores []float64
		var rec func(k int)
		rec = func(k int) {
			if k == T {
				s, _ := m.Trans.PathScore(emit, y, nil)
				paths, scores = append(paths, slices.Clone(y)), append(scores, s)
				logZ = logAdd(logZ, s)
				if s > best {
					best, bestY = s, slices.Clone(y)
				}
				return
			}
			for j := range int32(4) {
				if set := m.Lexicon.Allowed(cands[k]); set != nil && !slices.Contains(set, j) {
					continue
				}
				y[k] = j
				rec(k + 1)
			}
		}
		rec(0)
		for p, ys := range paths {
			for k, j := range ys {
				marg[k*4+int(j)] += math.Exp(scores[p] - logZ)
			}
		}
		if !slices.Equal(out.Labels, bestY) || !near(out.Score, best) || !near(out.LogZ, logZ) {
			t.Fatalf("words %q: labels %v score %v logZ %v, want %v %v %v", words, out.Labels, out.Score, out.LogZ, bestY, best, logZ)
		}
		for k := range marg {
			if math.Abs(marg[k]-out.AllMarginals[k]) > 1e-9 {
				t.Fatalf("marginal [%d][%d] %v, want %v", k/4, k%4, out.AllMarginals[k], marg[k])
			}
		}
		for k, c := range cands {
			if c >= 0 {
				restricted++
				if !slices.Contains(m.Lexicon.Allowed(c), out.Labels[k]) {
					t.Fatalf("position %d (%s) labelled %d outside %v", k, words[k], out.Labels[k], m.Lexicon.Allowed(c))
				}
			}
		}
	}
	if restricted == 0 {
		t.Fatal("no position restricted")
	}
	if err := tg.Tag(randomSeq(r, 20, 3, false), Options{Candidates: []int32{0}}, &out); err == nil {
		t.Error("1 candidate entry for 3 positions: no error")
	}
}

// TestLexiconDamaged: a lexicon label beyond the model's labels, offsets
// that do not fit, or offsets without words are errors naming the file.
func TestLexiconDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	m := lexModel(t, r)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// section returns the bytes of the section of kind in b.
	section := func(b []byte, kind uint32) []byte {
		le := binary.LittleEndian
		for i := range le.Uint32(b[24:]) {
			e := b[headerSize+entrySize*int(i):]
			if le.Uint32(e) == kind {
				off, n := le.Uint64(e[8:]), le.Uint64(e[16:])
				return b[off : off+n]
			}
		}
		t.Fatalf("no section %d", kind)
		return nil
	}
	for _, c := range []struct {
		name   string
		damage func(b []byte)
		want   string
	}{
		{"label", func(b []byte) { binary.LittleEndian.PutUint32(section(b, secLexLabels), 9) }, "lexicon label 9 of 4"},
		{"offset", func(b []byte) { binary.LittleEndian.PutUint32(section(b, secLexPtr)[4:], 99) }, "lexicon offset 1 is 99"},
		{"order", func(b []byte) { binary.LittleEndian.PutUint32(section(b, secLexPtr)[4:], 0) }, "bad lexicon"},
		{"no words", func(b []byte) { // the words' section kind made unknown (and not needed)
			le := binary.LittleEndian
			for i := range le.Uint32(b[24:]) {
				e := b[headerSize+entrySize*int(i):]
				if le.Uint32(e) == secLexWords {
					le.PutUint32(e, 999)
					le.PutUint32(e[4:], 0)
				}
			}
		}, "lexicon offsets without lexicon words"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(buf.Bytes())
			c.damage(b)
			fixup(b)
			wantErr(t, b, c.name, c.want)
		})
	}
}

// TestSubLabelModel: sub-label weights survive WriteFile and Load, and the
// tagger's scores are the state scores plus, for each label part, the
// weights of the position's attributes on it (computed here from the
// definition).
func TestSubLabelModel(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	m0 := randomModel(t, r, spec{m: 6, attrs: 30, layout: sparse.SparseRows})
	c := sparse.NewCorpus()
	var b sparse.Builder
	for range 20 {
		b.Reset()
		for range 5 {
			b.Add(int32(r.IntN(30)), 1)
			b.Add(int32(r.IntN(30)), 1)
			b.End(int32(r.IntN(6)))
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := sparse.NewSubLabels(m0.LabelNames(), sparse.Positions(4), c, 30) // "L3-D": parts L, 3, -, D
	if err != nil {
		t.Fatal(err)
	}
	for k := range sub.W {
		sub.W[k] = r.NormFloat64()
	}
	m0.Sub = sub
	path := filepath.Join(t.TempDir(), "sub.model")
	if err := m0.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Sub == nil || !slices.Equal(m.Sub.W, sub.W) || !slices.Equal(m.Sub.IDs, sub.IDs) || !slices.Equal(m.Sub.Of, sub.Of) || !slices.Equal(m.Sub.Ptr, sub.Ptr) || m.Sub.NSub != sub.NSub {
		t.Fatalf("sub-labels after Load differ")
	}
	if err := m.CRFsuiteCompatible(); err == nil || !strings.Contains(err.Error(), "sub-label") {
		t.Errorf("CRFsuiteCompatible with sub-labels: %v", err)
	}
	tg := m.NewTagger()
	var out Output
	for range 20 {
		T := 1 + r.IntN(4)
		seq := randomSeq(r, 30, T, true)
		if err := tg.Tag(seq, Options{Prob: true}, &out); err != nil {
			t.Fatal(err)
		}
		emit := make([]float64, T*6)
		m.State.Score(emit, seq)
		for p := range T {
			for f := seq.Ptr[p]; f < seq.Ptr[p+1]; f++ {
				a := seq.IDs[f]
				for k := sub.Ptr[a]; k < sub.Ptr[a+1]; k++ {
					for y := range 6 {
						if slices.Contains(sub.Of[y*4:(y+1)*4], sub.IDs[k]) {
							emit[p*6+y] += seq.Value(int(f)) * sub.W[k]
						}
					}
				}
			}
		}
		path := make([]int32, T)
		best, err := m.Trans.Viterbi(engine.NewWorkspace(), emit, nil, path)
		if err != nil {
			t.Fatal(err)
		}
		logZ, _ := m.Trans.LogZ(engine.NewWorkspace(), emit, nil)
		if !slices.Equal(path, out.Labels) || !near(best, out.Score) || !near(logZ, out.LogZ) {
			t.Fatalf("tagger %v %v %v, want %v %v %v", out.Labels, out.Score, out.LogZ, path, best, logZ)
		}
	}
	bad := *sub
	bad.W = slices.Clone(sub.W)
	bad.W[0] = math.NaN()
	m0.Sub = &bad
	if err := m0.WriteFile(path); err == nil {
		t.Error("a NaN sub-label weight was written")
	}
}
