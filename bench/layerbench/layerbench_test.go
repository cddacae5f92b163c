package layerbench

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestAgainstTorch runs the suite with PyTorch at one small size and checks
// the agreement columns. Opt-in (SIMDCRF_TORCH_TEST=1): it needs
// python3-torch and takes seconds.
func TestAgainstTorch(t *testing.T) {
	if os.Getenv("SIMDCRF_TORCH_TEST") == "" {
		t.Skip("set SIMDCRF_TORCH_TEST=1 to run the PyTorch reference")
	}
	res, err := Run(context.Background(), Options{Labels: []int{5}, Threads: []int{1}, Reps: 1, MinTime: time.Millisecond, Warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results, want 6", len(res))
	}
	for _, r := range res {
		tol := 1e-12
		if r.Type == "float32" {
			tol = 1e-4
		}
		if !r.Compared || r.Mismatch != 0 || r.MaxRel > tol || r.MaxAbs > tol || !(r.TorchMs > 0) || !(r.SimdcrfMs > 0) {
			t.Errorf("%+v", r)
		}
	}
}

func TestNoTorch(t *testing.T) {
	res, err := Run(context.Background(), Options{Labels: []int{4}, Types: []string{"float32"}, Threads: []int{1, 2}, Reps: 1, MinTime: time.Millisecond, Warmup: 1, NoTorch: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results, want 6", len(res))
	}
	for _, r := range res {
		if r.Compared || r.TorchMs != 0 || !(r.SimdcrfTokensS > 0) || r.Tokens < B*MinLen {
			t.Errorf("%+v", r)
		}
	}
}
