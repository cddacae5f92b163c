package crfsuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ensure installs CRFsuite or skips (fails under CI) when it cannot be had.
func ensure(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := Ensure(ctx); err != nil {
		if errors.Is(err, ErrUnavailable) && os.Getenv("CI") == "" {
			t.Skipf("CRFsuite unavailable: %v", err)
		}
		t.Fatal(err)
	}
}

// writeToy writes n sequences over labels A, B, C where each item carries an
// attribute naming its label (with an escaped colon in it) and a noise attribute,
// so a trained model must tag the data perfectly.
func writeToy(t *testing.T, path string, n int, seed int64) (labels [][]string) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for i := 0; i < n; i++ {
		var seq []string
		for j := 0; j < 1+rng.Intn(8); j++ {
			l := string(rune('A' + rng.Intn(3)))
			seq = append(seq, l)
			fmt.Fprintf(&b, "%s\tw\\:%s%d\tnoise=%d\tbias:1\n", l, strings.ToLower(l), rng.Intn(3), rng.Intn(5))
		}
		b.WriteString("\n")
		labels = append(labels, seq)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return labels
}

func TestToy(t *testing.T) {
	ensure(t)
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "toy.txt")
	gold := writeToy(t, data, 200, 1)
	model := filepath.Join(dir, "toy.model")
	tr, err := Train(ctx, TrainOptions{Data: data, Model: model, Params: map[string]string{"max_iterations": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train: %+v", tr)
	if tr.Sequences != 200 || tr.Iterations < 1 || tr.Iterations > 100 || !(tr.Loss > 0) || tr.Params["max_iterations"] != "100" {
		t.Errorf("odd training result: %+v", tr)
	}
	if tr.PeakRSS < tr.BaselineRSS || tr.BaselineRSS <= 0 || tr.WallSeconds < tr.TrainSeconds {
		t.Errorf("odd memory or time: %+v", tr)
	}
	out := filepath.Join(dir, "out.txt")
	tg, err := Tag(ctx, TagOptions{Model: model, Data: data, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tag: %+v", tg)
	if tg.Sequences != 200 || tg.ItemAccuracy != 1 || tg.InstanceAccuracy != 1 || tg.Correct != tg.Tokens {
		t.Errorf("separable data not tagged perfectly: %+v", tg)
	}
	// The labels written must be the gold ones, sequence by sequence.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, s := range gold {
		want.WriteString(strings.Join(s, "\n") + "\n\n")
	}
	if string(b) != want.String() {
		t.Errorf("output labels differ from gold:\n%.200s\nwant\n%.200s", b, want.String())
	}
}

func TestDriverRejects(t *testing.T) {
	ensure(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"value":  "A\tx:0.5\n\n",
		"weight": "@weight:2\nA\tx\n\n",
	} {
		data := filepath.Join(dir, name+".txt")
		if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Train(context.Background(), TrainOptions{Data: data, Model: filepath.Join(dir, "m")})
		if err == nil || !strings.Contains(err.Error(), data+":") {
			t.Errorf("%s: got %v, want an error naming %s and its line", name, err, data)
		}
	}
	_, err := Train(context.Background(), TrainOptions{Data: filepath.Join(dir, "value.txt"), Model: filepath.Join(dir, "m"),
		Params: map[string]string{"no_such": "1"}})
	if err == nil || !strings.Contains(err.Error(), "unknown parameter no_such") {
		t.Errorf("unknown parameter: got %v", err)
	}
}

func TestParseLog(t *testing.T) {
	log := `Feature generation
Number of features: 42
Seconds required: 0.010

***** Iteration #1 *****
Loss: 10.5
Active features: 40
Seconds required for this iteration: 0.250

***** Iteration #2 *****
Loss: 7.25
Active features: 41
Seconds required for this iteration: 0.500

L-BFGS resulted in convergence
Total seconds required for training: 0.800
`
	var r TrainResult
	if err := parseLog([]byte(log), &r); err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 2 || r.Loss != 7.25 || r.Features != 42 || r.ActiveFeatures != 41 ||
		r.IterationCPUSeconds != 0.75 || !slices.Equal(r.IterationSeconds, []float64{0.25, 0.5}) || r.Stop != "L-BFGS resulted in convergence" {
		t.Errorf("parsed %+v", r)
	}
	if err := parseLog([]byte("Loss: x\n"), &r); err == nil {
		t.Error("bad number accepted")
	}
	if err := parseLog([]byte("nothing\n"), &TrainResult{}); err == nil {
		t.Error("a log without iterations accepted")
	}
}
