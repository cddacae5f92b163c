// Module gen holds the generators of package kernels' assembly. It is a
// module of its own so that avo never enters the builds of simdcrf's users.
//
// Each directory below is one kernel family and one program; it writes
// ../kernels/<family>_amd64.s and the Go stubs beside it. The exception is
// arm64/, which avo cannot target: a text emitter that writes every NEON
// kernel to ../kernels/kernels_arm64.s (stubs hand-written in
// kernels/neon_arm64.go), with WORD encodings from internal/neon checked by
// arm64/decode_test.go. Regenerate all:
//
//	cd gen && go generate ./...
//
// The output is deterministic; CI regenerates it and fails on any diff.
package gen
