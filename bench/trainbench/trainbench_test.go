package trainbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/internal/testdata"
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// TestMeasureQuick runs the chunking task (or those TB_TASKS names) for a few iterations through the
// whole pipeline: attribute files, simdcrf learn and tag as child processes,
// and (with SIMDCRF_CRFSUITE_REAL set) CRFsuite on the same files.
func TestMeasureQuick(t *testing.T) {
	data := testdata.Dir(t)
	if testing.Short() {
		t.Skip("builds simdcrf and trains on CoNLL-2000")
	}
	dir := t.TempDir()
	exe, err := BuildSimdcrf(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Measure(context.Background(), Options{
		Exe: exe, DataDir: data, TemplateDir: filepath.Join(data, "..", "templates"), WorkDir: dir,
		Tasks: strings.Split(envOr("TB_TASKS", "chunking"), ","), Threads: []int{1}, Peers: os.Getenv("SIMDCRF_CRFSUITE_REAL") != "",
		TagRepeats: 1, MaxIterCheck: 5, Progress: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every task run has a run per variant too.
	for _, task := range Tasks {
		for _, v := range task.Variants {
			if !slices.ContainsFunc(runs, func(r Run) bool { return r.Task == task.Name }) {
				break
			}
			if !slices.ContainsFunc(runs, func(r Run) bool { return r.Task == task.Name && r.System == v.System }) {
				t.Errorf("%s: no run of variant %q", task.Name, v.System)
			}
		}
	}
	for _, r := range runs {
		t.Logf("%+v", r)
		if r.System == SystemCRFsuiteModel { // CRFsuite's model: CRFsuite's accuracy
			var peer *Run
			for i := range runs {
				if runs[i].Task == r.Task && runs[i].System == "crfsuite" {
					peer = &runs[i]
				}
			}
			if peer == nil || r.ItemAcc != peer.ItemAcc || r.ChunkF1 != peer.ChunkF1 || r.TagTokSec <= 0 {
				t.Errorf("simdcrf on CRFsuite's model: %+v; CRFsuite: %+v", r, peer)
			}
			continue
		}
		if r.Iters != 5 || r.TestToks == 0 || (r.Task == "chunking" && (r.TestToks != 47377 || r.ChunkF1 < 50)) || r.TagTokSec <= 0 || r.PeakMiB <= 0 {
			t.Errorf("implausible run: %+v", r)
		}
	}
}

// TestFrontDoorQuick measures the Go API against the command for a few
// iterations: both train the same model (the same labels on the test file).
func TestFrontDoorQuick(t *testing.T) {
	data := testdata.Dir(t)
	if testing.Short() {
		t.Skip("builds simdcrf and trains on CoNLL-2000")
	}
	dir := t.TempDir()
	exe, err := BuildSimdcrf(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := MeasureFrontDoor(context.Background(), Options{
		Exe: exe, DataDir: data, TemplateDir: testdata.Templates(t), WorkDir: dir,
		TagRepeats: 1, MaxIterCheck: 5, Progress: func(s string) { t.Log(s) },
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if !r.SameModelLabels || r.Iters != 5 || r.TestTokens != 47377 || r.LearnSec <= 0 || r.TrainerSec <= r.AppendSec || r.CmdTagTokSec <= 0 || r.TaggerTokSec <= 0 {
		t.Errorf("implausible: %+v", r)
	}
}
