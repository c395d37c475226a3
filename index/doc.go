// Package index holds the in-memory indexes of a stream store: where each
// sequence lives, and which sequences each subject has.
//
// # Sequence index
//
// Sequences are dense, so the sequence index is a list of blocks, each a run
// of consecutive sequences in one segment: a base sequence, one uint32
// segment offset per sequence, and a deletion bitmap allocated on the first
// delete (1 bit per sequence). A block holds at most 8192 sequences and never
// spans segments. Lookup is a binary search over blocks (about 122 per million
// messages) and an array index: 4 bytes and 1 bit per message. A block that
// can no longer grow is packed when its records allow (pack.go): when every
// message lies the same distance after the one before (records of one size),
// just the first offset and that distance (no array: a lookup reads nothing
// beyond the block); else, while
// consecutive messages lie under 256 bytes apart, one uint32 anchor per 32
// sequences and one byte per sequence holding the distance from the one
// before (1.125 bytes per message; an offset is its anchor plus at most 31
// such bytes, summed a word at a time), else one anchor per 16 sequences
// and a uint16 distance from it (2.25 bytes per message, for records under
// about 4 KiB on average).
//
// # Subject index
//
// A subject is a fixed 32-byte entry {First, Last, name reference, message
// count, list id}; entries sit in chunks of 1024 (subjtable.go), so growth
// never copies more than a chunk, and a deleted subject's entry is reused.
// Names are found through an open-addressing hash table of uint32 entry ids
// (linear probing, at most 3/4 full, deletion by shifting back, no
// tombstones) keyed by the xxhash64 of the name. The names' bytes sit back
// to back in 64 KiB arena pages, not as Go strings; when deleted names make
// up more than half of the arena it is rewritten with the live ones. A
// subject so costs 32 bytes, 5–11 for the table and its name's bytes:
// about 40 bytes plus the name.
//
// A subject of one or two messages has no sequence list: its messages are
// First and Last. From the third message on it has a list of its
// sequences as marks of 16 bytes {sequence, byte offset, count}. A mark
// holds at most 32 entries delta-encoded as uvarints (1–3 bytes per
// message), or is a run: any number (up to 2^32-1) of consecutive
// sequences and no bytes. A block of 32 consecutive sequences drops its
// varints when it completes and becomes a run; a sequence that continues
// the last run extends it. "The first sequence >= S of subject X" is a
// binary search over marks plus at most 31 varint decodes (none in a
// run). A subject that owns a stretch of the stream so costs one mark per
// stretch: 16 bytes for 100M messages of one subject. Entries of deleted
// messages stay in a list until dead entries outnumber live ones, when the
// list is rebuilt; a subject back to two messages drops its list. A
// removal moves a subject's First (or Last) to the next live entry of its
// list; a bulk removal (RemoveSpan: every message of the subject in a span
// of sequences) does so once for the whole span, not once per message.
//
// Filters with wildcards are resolved to the matching subjects (cached until
// the subject set changes). When a filter matches few subjects the store walks
// their lists; when it matches many, it walks sequences and checks subjects.
//
// # Checkpoint format (little endian)
//
//	offset size  field
//	0      4     magic "JWIX"
//	4      1     version (3; 1 and 2 are still read)
//	5      1     flags (bit 0: the subject section is sealed, sealsubj.go:
//	             an encrypted store's checkpoint holds no subject in the clear)
//	6      2     reserved
//	8      8     body length B
//	16     B     body (see checkpoint.go: blocks, then subjects, then the
//	             store's opaque trailer)
//	16+B   8     xxhash64 of bytes [0, 16+B)
//
// The body begins with the sequence blocks: a uint32 count, then each
// block (blockcodec.go), a multiple of 4 bytes long:
//
//	size  field
//	4     segment id
//	8     base sequence
//	4     entries n
//	4     form: 0 offsets, 1 small, 2 wide, 3 stride (not in version 2)
//	...   form 0: n uint32 offsets
//	      form 1: a = ceil(n/32) uint32 anchors, then 32·a distance bytes
//	      form 2: a = ceil(n/16) uint32 anchors, then n uint16 distances,
//	              then 2 zero bytes if n is odd
//	      form 3: uint32 first offset, uint32 distance d (entry i at
//	              first + i·d)
//	4     deletion bitmap words w
//	8·w   deletion bitmap
//
// Every field sits at a 4-byte aligned offset of the file, so a reader that
// maps the checkpoint can use a packed block's arrays in place
// (DecodeInPlace). The newest block is always form 0 (it stays open for
// appends). Version 1 wrote every block as form 0 without the form field.
// In every version a block holds 1 to 8192 entries, base+n (one past its
// last sequence) is below 2^64, blocks ascend without overlap, and no
// deletion bit lies past entry n-1; a checkpoint that breaks any of these
// is refused as corrupt.
// The subject section follows (subjcodec.go), then the store's trailer.
//
// Subject section, version 2 (subjcodec.go; every field 4-byte aligned
// from the section start):
//
//	size  field
//	4     number of subjects S, then S times:
//	2     name length L
//	2     reserved (0)
//	L     name, then zero bytes to a multiple of 4
//	8     messages
//	8     First
//	8     Last
//	8     list entries N (live and deleted)
//	8     last list entry
//	4     marks M, then M times:
//	8       first sequence of the mark
//	4       byte offset in the varints of its second entry
//	4       entries of the mark (a run when > 1 and it has no bytes)
//	4     varint bytes V
//	V     varints, then zero bytes to a multiple of 4
//
// A subject without a list (one or two messages) is written as the one
// mark its list would hold. Version 1 had no reserved or padding bytes, a
// 4-byte N, and 12-byte marks without counts (each of 32 entries but the
// last); it is still read, its runs merged on the way in.
//
// A checkpoint whose checksum fails is ignored and the store rebuilds the
// index by scanning its segments. A block whose fields contradict each
// other (a form it cannot have, a group not starting at its anchor, a
// deletion bit past its entries) is damage too. These constants are part
// of the on-disk format.
package index
