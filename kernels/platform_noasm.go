//go:build purego || !amd64

package kernels

func platformImpls() []*impl { return nil }
