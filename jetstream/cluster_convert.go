package jetstream

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/store"
)

// Growing a stream created with one replica (nats stream edit --replicas
// 3). Such a stream is an ordinary local stream of one server, not a raft
// group; the server holding it makes it a raft group of one (what a
// replicated stream shrunk to one replica is) and, in the same meta
// entry, names the other servers, which join that group as for any
// 1 -> N growth (cluster_members.go):
//
//  1. The meta leader commits the assignment unchanged but for a Convert
//     part: the peers placement picked for the new replica count (the R1
//     server first among them), the new config and a token.
//  2. The R1 server, applying it (again after a restart, once its copy of
//     the meta map is current), stops serving the stream: it takes it out
//     of its streams and closes it (no subscription: publishes hear "no
//     responders", which clients retry; requests about it are answered by
//     nobody until the switch), then marks its directory (convertMarker,
//     synced) so that no later start serves it either.
//  3. It opens the stream's group with itself as the only peer (the
//     cluster directory, apart from the local store), waits to lead it and
//     appends the local messages at their sequences with their times,
//     skipping gaps (writeRestored's way: resumed from the group's last
//     sequence, so a copy interrupted anywhere goes on where it stopped).
//  4. It puts each durable consumer's state ("cstate/") and assignment
//     ("consumers/"), which the group's leader starts its consumers from
//     (cluster_consumer.go); ephemeral consumers are dropped.
//  5. It closes the local store and the group, then switches: one
//     compare-and-swap put of the final assignment (the Convert peers,
//     Group, Initial = itself, the new config), applied only while the
//     assignment is still byte for byte the converting one.
//  6. Every server applies the switch: the R1 server deletes the marked
//     local directory and opens the group (it leads it, alone, with
//     everything in it); the others join it, and the leader adds them
//     once they have caught up.
//
// A kill -9 at any point leaves one complete copy served or about to be:
//
//   - before the R1 server applied step 1: the local stream, as before;
//   - in step 2 before the marker is synced: the next start loads and
//     serves the local stream until the replayed Convert stops it again;
//     every write it acknowledged is in it, and is copied;
//   - after the marker (steps 2-5, before the switch commits): the next
//     start leaves the marked stream unserved; the Convert part is still
//     in the assignment, so the conversion starts again, reopens the
//     local store and the group, and the copy resumes past the group's
//     last sequence (consumer puts are idempotent);
//   - the switch committed but not yet applied here, or applied with the
//     marked directory not yet deleted: the assignment is the group's; a
//     start leaves the marked directory unserved and applying the
//     assignment deletes it and opens the group.
//
// A replayed meta log applies the stream's earlier assignments first:
// the conversion acts only on the current map (a read barrier first),
// and a local stream assigned here while a conversion runs, or its marked
// copy is there, is created only once they are gone, if the current
// assignment still asks for it (createAfterConversion).
//
// Deleting the stream during a conversion stops it: the switch finds
// another value (no assignment) and fails; the converter drops the group
// it built and the consumer keys it put, and the marked directory goes
// (a stream created again under the name waits for that). A stream
// update is refused while a conversion runs. The stream's mirror or
// sources resume from the copied messages, as after a restart
// (stream_source.go). Not built: aborting
// a conversion whose server stays down (the stream waits for it, as an R1
// stream does), converting a memory stream (its data would not survive
// the close of step 2), and keeping the dedupe window.

// convertMarker, in a local stream's directory, marks a stream being made
// a raft group: no start serves it, and a committed switch deletes it.
const convertMarker = "converting"

// convertRetry is the pause before a failed conversion step is retried.
const convertRetry = time.Second

// streamConvert is an assignment's conversion under way.
type streamConvert struct {
	Peers  []string         `json:"peers"`
	Config api.StreamConfig `json:"config"`
	Token  string           `json:"token"`
}

// conversion is a conversion running on this server.
type conversion struct {
	stop chan struct{}
	done chan struct{}
	// putConsumers: step 4 began (its keys may outlive a deletion).
	putConsumers bool
}

// startConversion answers the update that grows the R1 stream of a to
// replicas: it commits the Convert part (step 1).
func (js *JetStream) startConversion(a streamAssignment, cfg api.StreamConfig, replicas int) (*api.StreamInfo, *api.ApiError) {
	if cfg.Storage == api.MemoryStorage {
		return nil, api.Errorf(api.ErrStreamUpdate, "changing a memory stream created with one replica to several is not supported by jetwal")
	}
	peers, aerr := js.placeStream(&cfg, replicas, slices.Clone(a.Peers), nil)
	if aerr != nil {
		return nil, aerr
	}
	// The R1 server first: it stays, and leads the group it builds.
	peers = append(slices.Clone(a.Peers[:1]), slices.DeleteFunc(peers, func(p string) bool { return p == a.Peers[0] })...)
	var tok [12]byte
	_, _ = rand.Read(tok[:])
	a.Convert = &streamConvert{Peers: peers, Config: cfg, Token: hex.EncodeToString(tok[:])}
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		return nil, api.Errorf(api.ErrStreamUpdate, "%v", err)
	}
	js.log.Info("JetStream cluster: converting a stream created with one replica into a group", "stream", cfg.Name, "peers", peers)
	js.adviseStream(cfg.Name, api.ActionModify)
	info := js.replyInfo(a, false)
	info.Config = validate.WithDynamicMetadata(cfg, js.srv.Version())
	return info, nil
}

// applyConvert starts the conversion of a local stream this server holds
// (step 2 on), unless one is running.
func (js *JetStream) applyConvert(a streamAssignment) {
	name := a.Config.Name
	js.cl.mu.Lock()
	if js.cl.converting[name] != nil {
		js.cl.mu.Unlock()
		return
	}
	cv := &conversion{stop: make(chan struct{}), done: make(chan struct{})}
	js.cl.converting[name] = cv
	js.cl.mu.Unlock()
	go js.runConversion(name, a.Convert.Token, cv)
}

// errConvertOver: the assignment no longer holds this conversion.
var errConvertOver = errors.New("jetstream: the conversion is over")

func (js *JetStream) runConversion(name, token string, cv *conversion) {
	defer func() {
		js.cl.mu.Lock()
		if js.cl.converting[name] == cv {
			delete(js.cl.converting, name)
		}
		js.cl.mu.Unlock()
		close(cv.done)
	}()
	for {
		// The assignment applied may be a replayed one: act on the
		// current map only.
		err := js.cl.c.SyncMeta()
		if err == nil {
			err = js.convertOnce(name, token, cv)
		}
		switch {
		case err == nil:
			js.log.Info("JetStream cluster: stream converted into a group", "stream", name)
			return
		case errors.Is(err, errConvertOver):
			js.convertAbandoned(name, cv)
			return
		}
		js.log.Warn("JetStream cluster: converting a stream into a group; retrying", "stream", name, "error", err)
		select {
		case <-cv.stop:
			js.convertAbandoned(name, cv)
			return
		case <-time.After(convertRetry):
		}
	}
}

// convertOnce runs steps 2 to 5; every step is idempotent.
func (js *JetStream) convertOnce(name, token string, cv *conversion) error {
	old, ok := js.cl.c.Get(streamKeyPrefix + name)
	var a streamAssignment
	if !ok || json.Unmarshal(old, &a) != nil || a.Convert == nil || a.Convert.Token != token ||
		!slices.Contains(a.Peers, js.cl.c.Self()) {
		return errConvertOver
	}
	src, err := js.convertSource(name)
	if err != nil {
		return err
	}
	srcOpen := true
	defer func() {
		if srcOpen {
			_ = src.close()
		}
	}()
	lead := make(chan bool, 8)
	rep, err := js.cl.c.OpenStream(name, []string{js.cl.c.Self()}, false, true, js.replicaOptions(&a.Config), func(l bool) {
		select {
		case lead <- l:
		default:
		}
	})
	if err != nil {
		return fmt.Errorf("opening the stream's group: %w", err)
	}
	repOpen := true
	defer func() {
		if repOpen {
			_ = rep.Close()
		}
	}()
	if err := waitLead(lead, cv.stop); err != nil {
		return err
	}
	js.log.Info("JetStream cluster: copying the stream into its group", "stream", name,
		"group_last_seq", rep.Store().State().LastSeq, "last_seq", src.store.State().LastSeq)
	if err := copyToGroup(src.store, rep.Store(), cv.stop); err != nil {
		return err
	}
	cv.putConsumers = true // only this goroutine reads it
	if err := js.convertConsumers(src); err != nil {
		return err
	}
	srcOpen, repOpen = false, false
	if err := src.close(); err != nil {
		return err
	}
	if err := rep.Close(); err != nil {
		return err
	}
	fin := a
	fin.Convert = nil
	fin.Config = a.Convert.Config
	fin.Group = true
	fin.Peers = a.Convert.Peers
	fin.Initial = []string{js.cl.c.Self()}
	fin.Preferred = js.cl.c.Self()
	b, err := json.Marshal(fin)
	if err != nil {
		return err
	}
	err = js.cl.c.PutIf(streamKeyPrefix+name, old, b)
	if err == nil {
		return nil
	}
	// Applied although the answer was lost, or fenced out.
	if err2 := js.cl.c.SyncMeta(); err2 != nil {
		return err
	}
	if cur, ok := js.cl.c.Get(streamKeyPrefix + name); ok && string(cur) == string(b) {
		return nil
	} else if !ok || string(cur) != string(old) {
		return errConvertOver
	}
	return err
}

// convertSource returns the local stream being converted, closed to
// clients and marked (step 2), opened apart: not served.
func (js *JetStream) convertSource(name string) (*stream, error) {
	dir := filepath.Join(streamsDir(js.cfg.StoreDir, js.cfg.Account), name)
	js.mu.Lock()
	s := js.streams[name]
	if s != nil && s.rep == nil {
		delete(js.streams, name)
	} else {
		s = nil
	}
	js.mu.Unlock()
	if s != nil {
		if s.dir == "" {
			return nil, errors.New("a memory stream cannot be converted")
		}
		dir = s.dir
		if err := s.close(); err != nil {
			return nil, err
		}
		js.log.Info("JetStream cluster: stream closed to clients while it becomes a group", "stream", name)
	} else if _, err := js.cfg.FS.Stat(filepath.Join(dir, convertMarker)); err != nil {
		return nil, fmt.Errorf("this server has no local stream %s to convert: %w", name, err)
	}
	if err := writeFileSync(js.cfg.FS, filepath.Join(dir, convertMarker), nil); err != nil {
		return nil, fmt.Errorf("marking stream %s converting: %w", name, err)
	}
	if err := js.cfg.FS.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("marking stream %s converting: %w", name, err)
	}
	return js.openStream(dir, time.Now())
}

// waitLead waits until the group of one elected this server and applied
// everything committed before.
func waitLead(lead <-chan bool, stop <-chan struct{}) error {
	timeout := time.After(leaderWait)
	for {
		select {
		case l := <-lead:
			if l {
				return nil
			}
		case <-stop:
			return errConvertOver
		case <-timeout:
			return fmt.Errorf("the stream's group of one elected no leader in %v", leaderWait)
		}
	}
}

// asyncRawWriter is a group's store that takes copied messages without
// waiting for each (cluster's view): appends are pipelined, and a skip is
// ordered after the appends queued before it.
type asyncRawWriter interface {
	rawWriter
	AppendAtAsync(subject string, hdr, data []byte, ts int64, done store.AppendDone) error
}

// copyToGroup appends the messages of src that dst lacks at their
// sequences and times (step 3).
func copyToGroup(src, dst store.StreamStore, stop <-chan struct{}) error {
	w, ok := dst.(asyncRawWriter)
	if !ok {
		return errors.New("the group's store cannot take copied messages")
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed error
	)
	fail := func(err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		mu.Unlock()
	}
	check := func() error {
		mu.Lock()
		defer mu.Unlock()
		return failed
	}
	last := dst.State().LastSeq
	srcLast := src.State().LastSeq
	var m store.Msg
	for n, next := 0, last+1; ; n++ {
		if n%1024 == 1023 {
			select {
			case <-stop:
				wg.Wait()
				return errConvertOver
			default:
			}
			if err := check(); err != nil {
				wg.Wait()
				return err
			}
		}
		err := src.LoadNext("", next, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			wg.Wait()
			return fmt.Errorf("reading message %d: %w", next, err)
		}
		if m.Seq > last+1 {
			if err := w.SkipTo(m.Seq); err != nil {
				wg.Wait()
				return err
			}
		}
		want := m.Seq
		wg.Add(1)
		err = w.AppendAtAsync(m.Subject, m.Header, m.Data, m.Time, func(seq uint64, _ int64, err error) {
			defer wg.Done()
			switch {
			case err != nil:
				fail(fmt.Errorf("copying message %d: %w", want, err))
			case seq != want:
				fail(fmt.Errorf("message %d copied at sequence %d", want, seq))
			}
		})
		if err != nil {
			wg.Done()
			wg.Wait()
			return fmt.Errorf("copying message %d: %w", want, err)
		}
		last, next = want, want+1
	}
	wg.Wait()
	if err := check(); err != nil {
		return err
	}
	if srcLast > last {
		return w.SkipTo(srcLast + 1)
	}
	return nil
}

// convertConsumers puts the durable consumers of src, with their states,
// in the meta group (step 4).
func (js *JetStream) convertConsumers(src *stream) error {
	if err := src.openObs(); err != nil {
		return err
	}
	obs := src.cons.obs
	if obs == nil {
		return nil
	}
	names, err := obs.List()
	if err != nil {
		return fmt.Errorf("listing consumers: %w", err)
	}
	for _, n := range names {
		c, err := obs.Load(n)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", n, err)
		}
		var meta consumerMeta
		if err := json.Unmarshal(c.Config(), &meta); err != nil {
			return fmt.Errorf("consumer %s: %w", n, err)
		}
		if meta.Config.Durable == "" {
			js.log.Warn("JetStream cluster: ephemeral consumer dropped by the conversion into a group", "stream", src.name, "consumer", n)
			continue
		}
		st := c.Snapshot()
		if err := js.cl.c.Put(cstateKey(src.name, meta.Config.Durable), consumerstate.Encode(&st)); err != nil {
			return err
		}
		if err := js.propose(consumerKeyPrefix+src.name+"/"+meta.Config.Durable, consumerAssignment{Config: meta.Config, Created: meta.Created}); err != nil {
			return err
		}
	}
	return nil
}

// convertAbandoned cleans up after a conversion the assignment no longer
// holds: unless the switch made the stream this server's group, the group
// built here goes, and with no stream left, the consumer keys cv put
// (the deletion may have come between its check and its puts).
func (js *JetStream) convertAbandoned(name string, cv *conversion) {
	a, ok := js.assignment(name)
	if ok && a.grouped() && slices.Contains(a.Peers, js.cl.c.Self()) {
		return
	}
	if ok && a.Convert != nil {
		return // closing: the next start resumes it
	}
	if err := js.cl.c.RemoveStreamData(name); err != nil {
		js.log.Warn("JetStream cluster: removing the group of an abandoned conversion", "stream", name, "error", err)
	}
	if !ok && cv.putConsumers {
		for _, k := range js.cl.c.Keys(consumerKeyPrefix + name + "/") {
			if err := js.cl.c.Delete(k); err != nil {
				js.log.Warn("JetStream cluster: dropping a consumer of a deleted stream", "key", k, "error", err)
			}
		}
		js.forgetConsumerState(name, "")
	}
	js.log.Info("JetStream cluster: conversion into a group abandoned", "stream", name)
}

// dropConverted deletes the marked local directory of a stream converted
// or deleted (step 6), once its conversion, if one runs, has stopped.
func (js *JetStream) dropConverted(name string) {
	js.cl.mu.Lock()
	cv := js.cl.converting[name]
	js.cl.mu.Unlock()
	if cv == nil {
		js.removeMarked(name)
		return
	}
	cv.cancel()
	go func() {
		<-cv.done
		js.removeMarked(name)
	}()
}

func (cv *conversion) cancel() {
	select {
	case <-cv.stop:
	default:
		close(cv.stop)
	}
}

// marked reports whether this server holds the local stream name marked
// as converting (not served).
func (js *JetStream) marked(name string) bool {
	dir := filepath.Join(streamsDir(js.cfg.StoreDir, js.cfg.Account), name)
	_, err := js.cfg.FS.Stat(filepath.Join(dir, convertMarker))
	return err == nil
}

func (js *JetStream) removeMarked(name string) {
	if !js.marked(name) {
		return
	}
	dir := filepath.Join(streamsDir(js.cfg.StoreDir, js.cfg.Account), name)
	if err := js.removeStreamDir(dir); err != nil {
		js.log.Error("JetStream cluster: deleting the local copy of a stream converted into a group", "stream", name, "error", err)
		return
	}
	js.log.Info("JetStream cluster: local copy of a stream converted into a group deleted", "stream", name)
}

// convertingHere reports whether a conversion of the stream name runs
// here or left its marked local copy.
func (js *JetStream) convertingHere(name string) bool {
	js.cl.mu.Lock()
	running := js.cl.converting[name] != nil
	js.cl.mu.Unlock()
	return running || js.marked(name)
}

// createAfterConversion creates the local stream name assigned here once
// the marked local copy holding its name is out of the way: that of a
// conversion whose later entries are being replayed (the current
// assignment, applied then, is the conversion's, and nothing is created
// here), or that of a stream deleted while it converted and assigned
// again (its conversion stopping or over, the copy goes first).
func (js *JetStream) createAfterConversion(name string) {
	go func() {
		for {
			js.cl.mu.Lock()
			cv := js.cl.converting[name]
			js.cl.mu.Unlock()
			if cv != nil {
				<-cv.done
				continue
			}
			if err := js.cl.c.SyncMeta(); err != nil {
				if js.isClosed() {
					return
				}
				time.Sleep(convertRetry)
				continue
			}
			break
		}
		js.cl.applyMu.Lock()
		defer js.cl.applyMu.Unlock()
		a, ok := js.assignment(name)
		js.cl.mu.Lock()
		running := js.cl.converting[name] != nil
		js.cl.mu.Unlock()
		if !ok || a.grouped() || a.Convert != nil || running || !slices.Contains(a.Peers, js.cl.c.Self()) || js.lookup(name) != nil {
			return
		}
		if js.removeMarked(name); js.marked(name) {
			return // logged
		}
		js.applyStreamLocked(a)
	}()
}

// stopConversions stops the conversions running here (JetStream closes);
// the next start resumes them.
func (js *JetStream) stopConversions() {
	js.cl.mu.Lock()
	cvs := make([]*conversion, 0, len(js.cl.converting))
	for _, cv := range js.cl.converting {
		cvs = append(cvs, cv)
	}
	js.cl.mu.Unlock()
	for _, cv := range cvs {
		cv.cancel()
		<-cv.done
	}
}
