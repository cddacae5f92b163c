//go:build !linux

package model

// Map is Load on this system (see the Linux version); unmap does nothing.
func Map(path string) (m *Model, unmap func() error, err error) { return loadUnmapped(path) }

// FaultError returns nil: on this system Map reads the file.
func (m *Model) FaultError(r any) error { return nil }
