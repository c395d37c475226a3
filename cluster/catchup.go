package cluster

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/raftstore/stream"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
)

// Catch-up. A stream group's snapshots are the stream's state (version 2,
// raftstore/stream): a follower that installs one keeps its own messages
// and fetches the ones it lacks, a range at a time, on the group's
// catch-up subject in the internal account (so only servers, over their
// authenticated routes, can ask or answer; no client of any account can
// reach it). Every member listens. A request asks the leader first; when
// none answers within catchupLeaderWait, it asks any member: each member
// that is not itself catching up answers with what it holds. Any member's
// store agrees with the leader's on every sequence up to its own last (all
// apply the same committed log), so any answer is right as far as it
// goes; and while the follower installs the snapshot its raft can vote
// for nobody, so a group whose other members have no leader then (one of
// three down, the leader's lease lost meanwhile) could elect none until
// the follower had caught up from someone.
//
//	request   from u64 | to u64 | who u8 (0: the leader, 1: any member)   (little endian)
//	answer    through u64 | count u32 | count × message
//	message   seq u64 | time i64 | uvarint len | subject | uvarint len | header | uvarint len | data
//
// An answer holds at most catchupMsgs messages and stops after the one
// that takes it past catchupBytes; every sequence from the request's from
// to through that it does not hold is deleted at the member that answered
// (through is at most its store's last sequence).

const (
	catchupMsgs       = 1024
	catchupBytes      = 1 << 20
	catchupLeaderWait = time.Second     // for the leader's answer, before asking any member
	catchupWait       = 4 * time.Second // for any member's, before the fetcher retries
)

func (r *Replica) catchupSubject() string {
	return "$JWAL.CLUSTER.CATCHUP." + hex.EncodeToString([]byte(r.name))
}

// startCatchup answers the group's catch-up requests: those for the
// leader while this member leads, those for any member always, unless
// this member is catching up itself.
func (r *Replica) startCatchup() error {
	if r.n.srv == nil {
		return nil
	}
	sub, err := r.n.internal().Subscribe(r.catchupSubject(), "", func(m *server.Msg) {
		if m.Reply == "" || len(m.Data) != 17 || r.fsm.Pending() || (m.Data[16] == 0 && !r.IsLeader()) {
			return
		}
		from, to := binary.LittleEndian.Uint64(m.Data), binary.LittleEndian.Uint64(m.Data[8:])
		reply := m.Reply
		go func() {
			if out, err := r.answerCatchup(from, to); err == nil {
				r.n.internal().Publish(reply, "", nil, out)
			} else {
				r.n.log.Warn("stream group: catch-up answer", "stream", r.name, "from", from, "to", to, "error", err)
			}
		}()
	})
	if err != nil {
		return err
	}
	r.catchSub = sub
	return nil
}

// answerCatchup reads [from, to] from this replica's store.
func (r *Replica) answerCatchup(from, to uint64) ([]byte, error) {
	st := r.fsm.Store()
	through := min(to, st.State().LastSeq)
	le := binary.LittleEndian
	b := make([]byte, 12, 64<<10)
	count, size := uint32(0), 0
	var m store.Msg
	for seq := from; seq <= through; seq = m.Seq + 1 {
		err := st.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if m.Seq > through {
			break
		}
		b = stream.AppendMsg(b, &m)
		count++
		size += len(m.Subject) + len(m.Header) + len(m.Data)
		if count == catchupMsgs || size >= catchupBytes {
			through = m.Seq
			break
		}
	}
	le.PutUint64(b, through)
	le.PutUint32(b[8:], count)
	r.sentMsgs.Add(uint64(count))
	r.sentBytes.Add(uint64(len(b)))
	return b, nil
}

// decodeCatchup parses an answer.
func decodeCatchup(b []byte) ([]store.Msg, uint64, error) {
	le := binary.LittleEndian
	if len(b) < 12 {
		return nil, 0, errors.New("catch-up answer too short")
	}
	through, n := le.Uint64(b), le.Uint32(b[8:])
	p := b[12:]
	if uint64(n) > uint64(len(p))/19 { // a message takes at least 19 bytes
		return nil, 0, fmt.Errorf("catch-up answer: %d messages in %d bytes", n, len(p))
	}
	field := func() ([]byte, error) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, io.ErrUnexpectedEOF
		}
		f := p[k : k+int(l)]
		p = p[k+int(l):]
		return f, nil
	}
	msgs := make([]store.Msg, n)
	for i := range msgs {
		if len(p) < 16 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		m := &msgs[i]
		m.Seq, m.Time = le.Uint64(p), int64(le.Uint64(p[8:]))
		p = p[16:]
		subj, err := field()
		if err != nil {
			return nil, 0, fmt.Errorf("catch-up answer: message %d: %w", i, err)
		}
		if m.Header, err = field(); err != nil {
			return nil, 0, fmt.Errorf("catch-up answer: message %d: %w", i, err)
		}
		if m.Data, err = field(); err != nil {
			return nil, 0, fmt.Errorf("catch-up answer: message %d: %w", i, err)
		}
		m.Subject = string(subj)
		if len(m.Header) == 0 {
			m.Header = nil
		}
	}
	if len(p) != 0 {
		return nil, 0, fmt.Errorf("catch-up answer: %d bytes after the messages", len(p))
	}
	return msgs, through, nil
}

// catchupFetcher is the replica's stream.Fetcher: it asks the group's
// leader, then any member, on the group's catch-up subject.
type catchupFetcher struct {
	r *Replica
}

// Fetch implements stream.Fetcher.
func (c catchupFetcher) Fetch(from, to uint64) ([]store.Msg, uint64, error) {
	r := c.r
	select {
	case <-r.done:
		return nil, 0, stream.ErrStopped
	default:
	}
	if r.n.srv == nil {
		return nil, 0, errors.New("cluster: not started")
	}
	msgs, through, err := c.ask(from, to, 0)
	if err == nil || errors.Is(err, stream.ErrStopped) {
		return msgs, through, err
	}
	return c.ask(from, to, 1) // no leader answered
}

// ask sends one request (who: 0 the leader, 1 any member) and returns the
// first answer that covers from, or an error when none came in time.
func (c catchupFetcher) ask(from, to uint64, who byte) ([]store.Msg, uint64, error) {
	r := c.r
	reply, ch, forget, err := r.n.inbox()
	if err != nil {
		return nil, 0, err
	}
	defer forget()
	req := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, from), to)
	r.n.internal().Publish(r.catchupSubject(), reply, nil, append(req, who))
	wait := catchupWait
	if who == 0 {
		wait = catchupLeaderWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var last error
	for {
		select {
		case b := <-ch:
			msgs, through, err := decodeCatchup(b)
			if err == nil && through >= from {
				return msgs, through, nil
			}
			last = err // a member behind, or a bad answer: wait for another
		case <-t.C:
			if last == nil {
				last = fmt.Errorf("cluster: stream %s: no answer to catch up %d-%d", r.name, from, to)
			}
			return nil, 0, last
		case <-r.done:
			return nil, 0, stream.ErrStopped
		}
	}
}

// adoptSnapshot runs before the group's raft starts: when raft's latest
// snapshot is newer than what the replica marked applied (a crash after
// raft stored an installed snapshot and before the replica recorded its
// restore), the replica takes it up, as raft will count it applied.
func (r *Replica) adoptSnapshot(snaps raft.SnapshotStore) error {
	list, err := snaps.List()
	if err != nil || len(list) == 0 || list[0].Index <= r.fsm.Applied() || r.fsm.Pending() {
		return err
	}
	_, rc, err := snaps.Open(list[0].ID)
	if err != nil {
		return fmt.Errorf("cluster: stream %s: open snapshot %s: %w", r.name, list[0].ID, err)
	}
	return r.fsm.Adopt(rc)
}

// CatchupSent returns the messages and bytes this replica has sent
// members catching up.
func (r *Replica) CatchupSent() (msgs, bytes uint64) { return r.sentMsgs.Load(), r.sentBytes.Load() }

// CatchupFetched returns what this replica fetched from its leader since
// it opened.
func (r *Replica) CatchupFetched() stream.FetchStats { return r.fsm.Fetched() }
