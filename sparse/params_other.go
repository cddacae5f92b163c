//go:build !linux

package sparse

func adviseHuge(x []float64) {}
