package enginepeer

import (
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// jetwalStore is jetwal's stream store without fsync (SyncNever), the
// counterpart of nats-server's default file store: neither syncs a write.
type jetwalStore struct {
	s *wal.Store
	m store.Msg
}

func openJetwal(dir string) (*jetwalStore, error) {
	s, err := wal.Open(dir, wal.Options{Sync: wal.SyncNever})
	if err != nil {
		return nil, err
	}
	return &jetwalStore{s: s}, nil
}

func (j *jetwalStore) name() string { return "jetwal" }

func (j *jetwalStore) append(subj string, data []byte) error {
	return j.s.AppendAsync(subj, nil, data, nil)
}

func (j *jetwalStore) load(seq uint64) ([]byte, error) {
	if err := j.s.Load(seq, &j.m); err != nil {
		return nil, err
	}
	return j.m.Data, nil
}

func (j *jetwalStore) next(start uint64) (uint64, error) {
	if err := j.s.LoadNext("", start, &j.m); err != nil {
		return 0, err
	}
	return j.m.Seq, nil
}

// settle waits for the group commit that makes every append readable (an
// async append is readable once committed; without fsync that is a write to
// the OS).
func (j *jetwalStore) settle() error { return j.s.Sync() }

func (j *jetwalStore) purge() error {
	_, err := j.s.Purge("", 0, 0)
	return err
}

func (j *jetwalStore) close() error { return j.s.Close() }
