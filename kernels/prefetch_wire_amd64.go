//go:build !purego

package kernels

func prefetchLines(base uintptr, offs []int32, scale int) { prefetchLinesAsm(base, offs, scale) }

func prefetchRows(base uintptr, ids []int32, ld, size int) { prefetchRowsAsm(base, ids, ld, size) }
