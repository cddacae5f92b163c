//go:build unix

package layer

import "syscall"

// cpuNanos is the process's user + system CPU time: the benchmarks report
// it per op, which a loaded machine disturbs less than wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
