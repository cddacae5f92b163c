package format
import ("testing"; "io")
func BenchmarkDbgMasks(b *testing.B) {
	data := chunkingCRFsuite(b)
	b.SetBytes(int64(len(data)))
	var x uint64
	for b.Loop() {
		for i := 0; i+64 <= len(data); i += 64 {
			t, s := masks(data[i:])
			x += t ^ s
		}
	}
	_ = x
}
func BenchmarkDbgLines(b *testing.B) {
	data := chunkingCRFsuite(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lr := newLineReader(bytesReader(data))
		for { if _, ok := lr.next(); !ok {break} }
	}
}
func bytesReader(d []byte) *bytesR { return &bytesR{d: d} }
type bytesR struct{ d []byte }
func (r *bytesR) Read(p []byte) (int, error) { if len(r.d)==0 {return 0, io.EOF}; n := copy(p, r.d); r.d = r.d[n:]; return n, nil }
