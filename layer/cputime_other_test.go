//go:build !unix

package layer

// cpuNanos is not measured here: the cpu-ns/op metric reads 0.
func cpuNanos() int64 { return 0 }
