package crfbeam

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths, always
	"github.com/simdcrf/simdcrf/model"
)

// A worker process runs several instances of each DoFn (one per bundle it
// processes at a time) and calls Setup on each, so a model loaded in Setup
// would be loaded, and held, once per instance. The models are kept here
// instead, once per process, keyed by path.
var models struct {
	sync.Mutex
	m map[string]*loaded
}

// loaded is a model with what every DoFn instance that uses it shares.
type loaded struct {
	once   sync.Once
	m      *model.Model
	tagger *model.Tagger // safe for concurrent use
	labels []string      // the label names by id
	err    error
}

// loads counts the models read from storage, for tests.
var loads atomic.Int64

// LoadModel returns the model at path (a local path or any URL Beam's
// file systems know: gs://, s3://, memfs://), reading it only the first
// time a process asks for it; later calls, from any goroutine, share it. A
// failed load is not retried by the same process.
func LoadModel(ctx context.Context, path string) (*model.Model, error) {
	l := cached(ctx, path)
	return l.m, l.err
}

func cached(ctx context.Context, path string) *loaded {
	models.Lock()
	if models.m == nil {
		models.m = map[string]*loaded{}
	}
	l := models.m[path]
	if l == nil {
		l = &loaded{}
		models.m[path] = l
	}
	models.Unlock()
	l.once.Do(func() {
		loads.Add(1)
		l.m, l.err = readModel(ctx, path)
		if l.err == nil {
			l.tagger = l.m.NewTagger()
			l.labels = l.m.LabelNames()
		}
	})
	return l
}

// forgetModels empties the cache (for tests that count loads).
func forgetModels() {
	models.Lock()
	models.m = nil
	models.Unlock()
}

// readModel reads the model at path through Beam's file systems (either
// model format, told apart by the magic, as model.Load tells them).
func readModel(ctx context.Context, path string) (*model.Model, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return model.Decode(path, data)
}
