package kernels

// The generic implementation is plain Go, in generic_<family>.go: the oracle
// every assembly tier is tested against, and the fallback on CPUs (and builds)
// without one. The exported wrappers have checked the arguments.
