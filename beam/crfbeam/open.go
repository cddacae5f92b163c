package crfbeam

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"cloud.google.com/go/storage"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/gcsx"
)

// openAt opens f to be read from byte offset on (decompressed, for a file
// Beam's fileio decompresses, only from 0). Beam's file systems open files
// at their start, and its readers of gs:// and s3:// objects cannot seek: a
// range far into a large object would first read, and throw away,
// everything before it (as Beam's own textio does), so that reading an
// object in n ranges would read about n/2 times its size. Local files seek;
// gs:// objects are read from the offset with a range request; other file
// systems read and discard.
func openAt(ctx context.Context, f fileio.ReadableFile, offset int64) (io.ReadCloser, error) {
	path := f.Metadata.Path
	if offset > 0 && strings.HasPrefix(path, "gs://") {
		c, err := gcsClient(ctx)
		if err != nil {
			return nil, err
		}
		bucket, object, err := gcsx.ParseObject(path)
		if err != nil {
			return nil, err
		}
		return c.Bucket(bucket).Object(object).NewRangeReader(ctx, offset, -1)
	}
	rc, err := f.Open(ctx)
	if err != nil || offset == 0 {
		return rc, err
	}
	if sk, ok := rc.(io.Seeker); ok {
		_, err = sk.Seek(offset, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, rc, offset)
	}
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: seeking to %d: %w", path, offset, err)
	}
	return rc, nil
}

// gcs is the process's Cloud Storage client for range reads, made on first
// use (with the credentials Beam's gcs file system uses).
var gcs struct {
	once sync.Once
	c    *storage.Client
	err  error
}

func gcsClient(ctx context.Context) (*storage.Client, error) {
	gcs.once.Do(func() {
		gcs.c, gcs.err = gcsx.NewClient(context.WithoutCancel(ctx), storage.ScopeReadOnly)
	})
	return gcs.c, gcs.err
}
