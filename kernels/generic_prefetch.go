//go:build !amd64 || purego

package kernels

// Without the assembly a prefetch is a hint not given.

func prefetchLines(base uintptr, offs []int32, scale int) {}

func prefetchRows(base uintptr, ids []int32, ld, size int) {}
