package machine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"time"
)

// PeakRSS watches a running process's peak resident set size (VmHWM in
// /proc/PID/status, Linux) until stop is called, and returns the largest
// value seen, in bytes (0 where /proc is not available). The parent's own
// ru_maxrss of a child is no good here: Linux carries the RSS of the process
// that spawned the child over its vfork and exec into the child's figure.
func PeakRSS(pid int) (stop func() int64) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	done := make(chan struct{})
	result := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, vmHWM(path))
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		return <-result
	}
}

func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("VmHWM:")) {
			var kb int64
			fmt.Sscanf(string(line[len("VmHWM:"):]), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}
