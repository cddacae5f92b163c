package crfbeam

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
)

// TestOpenAtGCS: a range of a gs:// object is read from its offset with a
// range request, not from the object's start (a fake Cloud Storage server,
// through the client's STORAGE_EMULATOR_HOST).
func TestOpenAtGCS(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 5000)
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bucket/dir/big.txt" {
			http.NotFound(w, r)
			return
		}
		ranges = append(ranges, r.Header.Get("Range"))
		http.ServeContent(w, r, "big.txt", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL, "http://"))
	f := fileio.ReadableFile{Metadata: fileio.FileMetadata{Path: "gs://bucket/dir/big.txt", Size: int64(len(data))}}
	for _, off := range []int64{1, 12345, int64(len(data)) - 3} {
		rc, err := openAt(context.Background(), f, off)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[off:]) {
			t.Fatalf("from %d: %d bytes, want the %d after the offset", off, len(got), len(data)-int(off))
		}
	}
	if len(ranges) != 3 || ranges[1] != "bytes=12345-" {
		t.Fatalf("requests with ranges %q, want bytes=12345- for the second", ranges)
	}
}
