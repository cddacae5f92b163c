//go:build purego || !(amd64 || arm64)

package kernels

func platformImpls() []*impl { return nil }
