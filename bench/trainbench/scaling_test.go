package trainbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/train"
)

const scaleSample = `# sent_id = a
1	Pes	pes	NOUN	NNMS1-----A----	_	0	root	_	_
2	spí	spát	VERB	VB-S---3P-AA---	_	1	dep	_	_

# sent_id = b
1-2	Abych	_	_	_	_	_	_	_	_
1	Aby	aby	SCONJ	J,-------------	_	0	root	_	_
2	bych	být	AUX	Vc-S---1-------	_	1	dep	_	_
3	spal	spát	VERB	VpYS---XR-AA---	_	1	dep	_	_

# sent_id = c
1	Pes	pes	NOUN	NNMS1-----A----	_	0	root	_	_

# sent_id = d
1	Kočka	kočka	NOUN	NNFS1-----A----	_	0	root	_	_
2	spí	spát	VERB	VB-S---3P-AA---	_	1	dep	_	_
3	a	a	CCONJ	J^-------------	_	1	dep	_	_
4	pes	pes	NOUN	NNMS1-----A----	_	1	dep	_	_
`

// TestScaleData: the sentences are read with their word lines' tags
// (multiword token lines left out); the cover keeps every tag with the
// fewest, shortest sentences, in file order; the truncated file has
// each XPOS cut to k characters and reads back with that label set.
func TestScaleData(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.conllu")
	if err := os.WriteFile(in, []byte(scaleSample), 0o644); err != nil {
		t.Fatal(err)
	}
	sents, err := readConllu([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(sents) != 4 || sents[1].tokens != 3 || len(sents[1].tags) != 3 {
		t.Fatalf("read %d sentences: %+v", len(sents), sents)
	}
	cov := coverTags(sents)
	// J^ and NNFS1 only in d; d holds NNMS1 and VB too; J, Vc Vp only
	// in b: b and d, a and c are not needed.
	var ids []string
	for _, s := range cov {
		ids = append(ids, s.lines[0])
	}
	if want := []string{"# sent_id = b", "# sent_id = d"}; !slices.Equal(ids, want) {
		t.Errorf("cover %q, want %q", ids, want)
	}
	for _, c := range []struct{ k, labels int }{{1, 3}, {2, 6}, {15, 7}} {
		out := filepath.Join(dir, "k.conllu")
		if err := writeTruncated(out, cov, c.k); err != nil {
			t.Fatal(err)
		}
		var l corpus.Loader
		tr, err := l.Load([]string{out}, format.Spec{Format: "conllu", Features: "pos", Label: "xpos"})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Data.Labels != c.labels || tr.Items != 7 {
			t.Errorf("k = %d: %d labels, %d items; want %d, 7", c.k, tr.Data.Labels, tr.Items, c.labels)
		}
		for _, name := range tr.Data.LabelNames {
			if len([]rune(name)) > c.k {
				t.Errorf("k = %d: label %q", c.k, name)
			}
		}
	}
	if truncTag("NNMS1", 2) != "NN" || truncTag("N", 3) != "N" {
		t.Error("truncTag")
	}
	bad := filepath.Join(dir, "bad.conllu")
	os.WriteFile(bad, []byte("1\tPes\tpes\n"), 0o644)
	if _, err := readConllu([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad.conllu:1") {
		t.Errorf("a short line: %v", err)
	}
	for _, s := range []string{ScaleDense, ScaleLockstep, ScaleTied, ScaleCandidates} {
		if err := scaleConfig(&train.Config{}, s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	// CRFsuite runs first, then while M² from its last point stays under
	// the cap.
	for _, c := range []struct {
		last       float64
		lastM, m   int
		skip, text string
	}{{0, 0, 12, "", ""}, {2.1, 277, 400, "", ""}, {2.1, 277, 806, "skip", "expected 18 s/iteration from its 2.1 s at M = 277 by M², over the 10 s cap"},
		{12, 400, 806, "skip", "its 12 s/iteration at M = 400 was over the 10 s cap already"}} {
		got := peerSkip(c.last, c.lastM, c.m, 10)
		if (got != "") != (c.skip != "") || !strings.Contains(got, c.text) {
			t.Errorf("peerSkip(%v, %d, %d) = %q", c.last, c.lastM, c.m, got)
		}
	}
	var cfg train.Config
	if err := scaleConfig(&cfg, ScalePruned); err != nil || cfg.PruneMax != ScalePruneMax {
		t.Errorf("pruned: prune.max %d, %v", cfg.PruneMax, err)
	}
	if scaleConfig(&train.Config{}, "bogus") == nil {
		t.Error("an unknown structure configured")
	}
}

// TestScalingQuick runs the suite at two small label sets, one
// iteration, every structure (CRFsuite with SIMDCRF_CRFSUITE_REAL set).
func TestScalingQuick(t *testing.T) {
	data := testdata.Dir(t)
	if testing.Short() {
		t.Skip("trains on UD Czech")
	}
	res, err := Scaling(context.Background(), ScaleOptions{DataDir: data, WorkDir: t.TempDir(), Ks: []int{1, 2}, Iterations: 1,
		Peers: os.Getenv("SIMDCRF_CRFSUITE_REAL") != ""})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sentences, %d tokens", res.Sentences, res.Tokens)
	labels := map[int]int{}
	for _, p := range res.Points {
		t.Logf("%+v", p)
		labels[p.K] = p.Labels
		switch {
		case p.Structure != ScaleCRFsuite && p.Skipped != "":
			t.Errorf("skipped: %+v", p)
		case p.Skipped == "" && (p.CPU <= 0 || p.Iters != 1):
			t.Errorf("%+v", p)
		}
	}
	if labels[1] != 12 || labels[2] != 59 {
		t.Errorf("labels %v, want 12 at k = 1 and 59 at k = 2 (the pool's)", labels)
	}
}
