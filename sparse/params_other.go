//go:build !linux

package sparse

func adviseHuge[E any](x []E) {}
