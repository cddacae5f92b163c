package kernels

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestDispatchChild is not a test on its own: run by TestEnvOverride in a
// child process, it prints which implementation the child's init chose.
func TestDispatchChild(t *testing.T) {
	if os.Getenv("SIMDCRF_DISPATCH_CHILD") != "1" {
		t.Skip("helper for TestEnvOverride")
	}
	fmt.Printf("impl=%s|note=%s|impls=%s|\n", Impl(), Note(), strings.Join(Impls(), ","))
}

// chosen starts this test binary with SIMDCRF_KERNELS=req and returns the
// implementation and note its init chose.
func chosen(t *testing.T, req string) (impl, note string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDispatchChild$", "-test.v")
	cmd.Env = append(os.Environ(), "SIMDCRF_DISPATCH_CHILD=1", EnvVar+"="+req)
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.ENOEXEC) {
		// Under qemu-user without binfmt_misc the test binary cannot be
		// started directly (TestNEONSelected covers the choice there).
		t.Skipf("cannot start the test binary: %v (running under an emulator)", err)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := string(out)
	i := strings.Index(s, "impl=")
	if i < 0 {
		t.Fatalf("child printed no choice:\n%s", s)
	}
	fields := strings.SplitN(s[i:], "|", 4)
	if got := strings.TrimPrefix(fields[2], "impls="); got != strings.Join(Impls(), ",") {
		// The child ran natively while this process runs under an
		// emulator (qemu-x86_64 -cpu Haswell): its CPU differs.
		t.Skipf("child process sees tiers %s, this one %v: running under emulation", got, Impls())
	}
	return strings.TrimPrefix(fields[0], "impl="), strings.TrimPrefix(fields[1], "note=")
}

func TestEnvOverride(t *testing.T) {
	if testing.Short() && runtime.GOARCH != "amd64" {
		t.Skip("spawns processes; slow under emulation")
	}
	best := Impls()[len(Impls())-1]
	if got, note := chosen(t, ""); got != best || note != "" {
		t.Errorf("unset: chose %q (note %q), want the best, %q", got, note, best)
	}
	for _, name := range Impls() {
		if got, note := chosen(t, name); got != name || note != "" {
			t.Errorf("%s=%s: chose %q (note %q)", EnvVar, name, got, note)
		}
	}
	got, note := chosen(t, "no-such-tier")
	if got != best || !strings.Contains(note, "no-such-tier") {
		t.Errorf("bogus request: chose %q with note %q; want %q and a note naming the request", got, note, best)
	}
	for _, name := range Compiled() {
		if !slices.Contains(Impls(), name) {
			got, note := chosen(t, name)
			if got != best || !strings.Contains(note, "not supported") {
				t.Errorf("unsupported %s: chose %q with note %q", name, got, note)
			}
		}
	}
}

func TestUse(t *testing.T) {
	before := Impl()
	for _, name := range Impls() {
		restore, err := Use(name)
		if err != nil {
			t.Fatal(err)
		}
		if Impl() != name {
			t.Errorf("after Use(%q), Impl() = %q", name, Impl())
		}
		restore()
		if Impl() != before {
			t.Errorf("restore left %q, want %q", Impl(), before)
		}
	}
	if _, err := Use("no-such-tier"); err == nil {
		t.Error("Use of an unknown implementation succeeded")
	}
	for _, name := range Compiled() {
		if !slices.Contains(Impls(), name) {
			if _, err := Use(name); err == nil {
				t.Errorf("Use(%q) succeeded on a CPU without it", name)
			}
		}
	}
}

// genericOK lists the kernels a tier leaves to the generic code on purpose.
var genericOK = map[string][]string{
	// arm64 has no gather instruction (see SpMV, MaxPlusCSR).
	"neon": {"spmv", "gatherMulAdd", "maxPlusCSR"},
}

// TestTiersComplete fails when a tier's table leaves a kernel nil, or runs
// the generic one where genericOK does not say so, so that a lost entry
// cannot pass silently (the tests compare each tier with generic: a generic
// kernel would pass them).
func TestTiersComplete(t *testing.T) {
	gv := reflect.ValueOf(generic).Elem()
	for _, p := range all {
		v := reflect.ValueOf(p).Elem()
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch {
			case f.Kind() != reflect.Func:
			case f.IsNil():
				if p != generic || name != "fmaPeak" {
					t.Errorf("%s: %s is nil", p.name, name)
				}
			case p != generic && f.Pointer() == gv.Field(i).Pointer() && !slices.Contains(genericOK[p.name], name):
				t.Errorf("%s: %s is the generic implementation", p.name, name)
			}
		}
		if p != generic && p.needs == "" {
			t.Errorf("%s: no needs", p.name)
		}
	}
}

// TestWrapperChecks checks that wrong arguments panic with a message that
// names the kernel, instead of corrupting memory in the assembly.
func TestWrapperChecks(t *testing.T) {
	x := make([]float64, 16)
	mustPanicT(t, "short alpha", "Forward", func() { Forward(x[:3], x, x, x, 2, 2) })
	mustPanicT(t, "short e", "len(e)", func() { Forward(x, x, x, x[:3], 2, 2) })
	mustPanicT(t, "short et", "Backward", func() { Backward(x, x, x, x[:1], 2, 2) })
	mustPanicT(t, "short y", "Axpy", func() { Axpy(1, x, x[:3]) })
	mustPanicT(t, "short dst", "Exp", func() { Exp(x[:3], x) })
	mustPanicT(t, "short bp", "Viterbi", func() { Viterbi(make([]int32, 2), x, make([]int32, 3), x, x, 2, 2) })
	mustPanicT(t, "short work", "Transitions", func() { Transitions(x, x, x, x, x, x, x[:1], 2, 2) })
	ptr := []int32{0, 2}
	mustPanicT(t, "id out of range", "out of range", func() { Gather(x[:2], x[:4], 2, ptr, []int32{0, 2}, x[:2], 1, 2) })
	mustPanicT(t, "negative id", "out of range", func() { Scatter(x[:4], 2, x[:2], ptr, []int32{-1, 0}, x[:2], 1, 1, 2) })
	mustPanicT(t, "descending ptr", "ascending", func() { Gather(x[:4], x[:4], 2, []int32{0, 2, 1}, []int32{0, 1}, x[:2], 2, 2) })
	mustPanicT(t, "ld < M", "bad sizes", func() { Gather(x[:4], x[:4], 1, ptr, []int32{0, 1}, x[:2], 1, 2) })
	// The last row may end exactly at the end of w (ld > M).
	Gather(x[:2], x[:5], 3, ptr, []int32{0, 1}, x[:2], 1, 2)
	// Sizes whose products wrap around would pass the length checks.
	mustPanicT(t, "T·M overflows", "bad size", func() { Forward(x, x, x, x, 1<<33, 1<<31) })
	mustPanicT(t, "M·M overflows", "bad size", func() { Backward(x, x, x, x, 0, 1<<33) })
	mustPanicT(t, "negative T and K", "bad size", func() { ForwardBatch(x, x, x, x, nil, -2, -3, 1) })
	mustPanicT(t, "T·M overflows in Scatter", "bad size", func() { Scatter(x, 1, x, ptr, ptr, x, 1, 1<<40, 1<<30) })
	mustPanicT(t, "negative M", "bad size", func() { Viterbi32(nil, nil, nil, nil, nil, 1, -1) })
}
