package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
)

// TestSealedSubjects: a checkpoint with a sealed subject section holds no
// subject name, decodes to the same subjects with the key, refuses
// another key or a flipped byte, and skips the section without a key.
func TestSealedSubjects(t *testing.T) {
	for _, n := range []int{0, 10, 5000} { // 5000 subjects: several chunks
		x := New()
		for s := uint64(1); s <= uint64(2*n); s++ {
			x.Add(s, Loc{Seg: 1, Off: uint32(32 + 100*s)}, fmt.Sprintf("private.customer%05d.orders", s%uint64(max(n, 1))))
		}
		key, _ := crypt.NewDataKey(crypt.ChaCha)
		sess, _ := key.NewSession()
		var buf bytes.Buffer
		size, _, err := EncodeToPlacedSealed(&buf, x, []byte("trailer"), sess)
		if err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if int(size) != len(b) || len(b) != encodedSize(x, []byte("trailer"), true) {
			t.Fatalf("size %d, len %d, want %d", size, len(b), encodedSize(x, []byte("trailer"), true))
		}
		if bytes.Contains(b, []byte("private.customer")) {
			t.Fatal("subject name in the clear")
		}
		y, tr, err := DecodeOpen("ckpt", b, key)
		if err != nil || string(tr) != "trailer" {
			t.Fatalf("n=%d: decode: %v", n, err)
		}
		if y.Subj.Len() != x.Subj.Len() {
			t.Fatalf("n=%d: %d subjects, want %d", n, y.Subj.Len(), x.Subj.Len())
		}
		if _, _, err := DecodeInPlaceOpen("ckpt", b, key); err != nil {
			t.Fatal(err)
		}
		// No key: structure only, no subjects.
		z, tr, err := Decode("ckpt", b)
		if err != nil || string(tr) != "trailer" || z.Subj.Len() != 0 || z.Seqs.Len() != x.Seqs.Len() {
			t.Fatalf("keyless: %v", err)
		}
		other, _ := crypt.NewDataKey(crypt.ChaCha)
		if _, _, err := DecodeOpen("ckpt", b, other); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("other key: %v", err)
		}
		// A byte of the sealed section flipped, checksum recomputed.
		d := bytes.Clone(b)
		d[len(d)-40] ^= 1
		binary.LittleEndian.PutUint64(d[len(d)-8:], xxhash.Sum64(d[:len(d)-8]))
		if _, _, err := DecodeOpen("ckpt", d, key); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("tampered: %v", err)
		}
		// A clear checkpoint is refused by an encrypted store.
		if _, _, err := DecodeOpen("ckpt", Encode(x, nil), key); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("clear section accepted: %v", err)
		}
	}
}
