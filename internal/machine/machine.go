// Package machine describes the computer simdcrf runs on, for simdcrf
// version and the headers of benchmark tables and reports. It is internal,
// not under bench/, because the user's command imports it.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/simdcrf/simdcrf/kernels"
)

// Info is what a report says about the machine.
type Info struct {
	CPU      string   // model name, e.g. "Intel(R) Xeon(R) Platinum 8488C"
	Cores    int      // logical CPUs the Go runtime sees
	OS, Arch string   // runtime.GOOS, runtime.GOARCH
	Go       string   // runtime.Version()
	Features []string // SIMD features relevant to the kernels
	Tiers    []string // kernel implementations this CPU can run
	Active   string   // the implementation in use
	Note     string   // why SIMDCRF_KERNELS was not honoured, if it was not
	MemGiB   float64  // total memory, 0 if unknown
}

// Describe returns the Info of this machine.
func Describe() Info {
	in := Info{
		CPU:    cpuName(),
		Cores:  runtime.NumCPU(),
		OS:     runtime.GOOS,
		Arch:   runtime.GOARCH,
		Go:     runtime.Version(),
		Tiers:  kernels.Impls(),
		Active: kernels.Impl(),
		Note:   kernels.Note(),
		MemGiB: memGiB(),
	}
	add := func(name string, ok bool) {
		if ok {
			in.Features = append(in.Features, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64":
		add("AVX2", cpu.X86.HasAVX2)
		add("FMA", cpu.X86.HasFMA)
		add("BMI2", cpu.X86.HasBMI2)
		add("AVX512F", cpu.X86.HasAVX512F)
		add("AVX512DQ", cpu.X86.HasAVX512DQ)
		add("AVX512VL", cpu.X86.HasAVX512VL)
		add("AVX512BW", cpu.X86.HasAVX512BW)
	case "arm64":
		add("ASIMD", cpu.ARM64.HasASIMD)
		add("SVE", cpu.ARM64.HasSVE)
	}
	return in
}

// String is a one-paragraph description.
func (in Info) String() string {
	s := fmt.Sprintf("%s; %d logical CPUs; %s/%s; %s; features %s; kernel tiers %s, using %s",
		in.CPU, in.Cores, in.OS, in.Arch, in.Go, strings.Join(in.Features, " "),
		strings.Join(in.Tiers, ", "), in.Active)
	if in.MemGiB > 0 {
		s = fmt.Sprintf("%s; %.0f GiB memory", s, in.MemGiB)
	}
	if in.Note != "" {
		s += " (" + in.Note + ")"
	}
	return s
}

func cpuName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memGiB() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb float64
		if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %f kB", &kb); err == nil {
			return kb / (1 << 20)
		}
	}
	return 0
}
