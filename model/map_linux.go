package model

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map is Load with the file mapped into memory instead of read: the
// model's arrays are views of the file's pages in the page cache, so that
// loading copies nothing and allocates no large buffer. It suits a
// short-lived process that loads a model once, such as simdcrf tag: with the
// CoNLL-2000 chunking model (16 MB), a whole tag run right after a CRFsuite
// run took 81.5 ms against 102.5 ms with Load (median of 11, alternating),
// whose fresh huge-page buffer the kernel must first find and clear pages
// for.
//
// The mapping is private and copy-on-write, so writes to the model's
// arrays never reach the file. unmap releases it: nothing taken from the
// model (taggers, weights, strings) may be used after it, and a program
// that keeps the model until it exits need not call it. Replacing the file
// while it is mapped is safe the way WriteFile does it (a new file renamed
// over the old one); truncating or rewriting it in place (cp does) makes
// later reads of the model fault, which a goroutine running with
// debug.SetPanicOnFault(true) can recover and turn into an error with
// FaultError, as simdcrf tag and dump do.
//
// On systems other than Linux, Map is Load and unmap does nothing.
func Map(path string) (m *Model, unmap func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	size := st.Size()
	if !st.Mode().IsRegular() || size < headerSize || size > math.MaxInt || !littleEndian {
		// Load tells these apart (and copies where views are impossible).
		return loadUnmapped(path)
	}
	// Populated up front: faulting the pages in one call is far cheaper
	// than one fault per page as the tagger touches them. Read-only at
	// first, because populating a writable private mapping copies every
	// page; then writable, each page copied only if it is written.
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err == nil {
		if err = unix.Mprotect(b, unix.PROT_READ|unix.PROT_WRITE); err != nil {
			unix.Munmap(b)
		}
	}
	if err != nil {
		// A file system that cannot map files (some FUSE ones): read it.
		return loadUnmapped(path)
	}
	if m, err = decode(path, b); err != nil {
		unix.Munmap(b)
		return nil, nil, err
	}
	m.mapped, m.path = b, path
	return m, func() error {
		if b == nil {
			return nil
		}
		err := unix.Munmap(b)
		b, m.mapped = nil, nil
		return err
	}, nil
}

// FaultError returns, for r recovered from a panic in a goroutine that runs
// with debug.SetPanicOnFault(true), an error saying that m's file changed
// under its mapping when r is a fault on the mapped pages, and nil
// otherwise (then r is someone else's to handle). It lets a program that
// maps a model report a model file truncated or rewritten in place while
// in use, rather than crash with a fault.
func (m *Model) FaultError(r any) error {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || m == nil || len(m.mapped) == 0 {
		return nil
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(m.mapped)))
	if a := f.Addr(); a < lo || a-lo >= uintptr(len(m.mapped)) {
		return nil
	}
	return fmt.Errorf("model %s: the file was truncated or rewritten while in use (replace a model file by renaming a new one over it)", m.path)
}
