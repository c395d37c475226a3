package index

import (
	"encoding/binary"
	"unsafe"
)

// Reading a checkpoint's arrays in place. A packed block's anchors and
// distances are little-endian and 4-byte aligned within a version 2 or 3
// checkpoint; on a little-endian machine, and when the checkpoint's bytes
// are themselves aligned (a mapping starts on a page), they can be used as
// []uint32 and []uint16 without a copy. Otherwise they are copied.

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// aligned reports whether b can be read in place as words of size bytes.
func aligned(b []byte, size uintptr) bool {
	return littleEndian && len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%size == 0
}

// u32s reads n uint32s, in place when alias is set and the bytes allow it.
func (r *reader) u32s(n int, alias bool) []uint32 {
	raw := r.take(4 * n)
	if r.err != nil || n == 0 {
		return nil
	}
	if alias && aligned(raw, 4) {
		r.inPlace++
		return unsafe.Slice((*uint32)(unsafe.Pointer(&raw[0])), n)
	}
	v := make([]uint32, n)
	copyU32s(v, raw)
	return v
}

// u16s reads n uint16s, in place when alias is set and the bytes allow it.
func (r *reader) u16s(n int, alias bool) []uint16 {
	raw := r.take(2 * n)
	if r.err != nil || n == 0 {
		return nil
	}
	if alias && aligned(raw, 2) {
		r.inPlace++
		return unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), n)
	}
	v := make([]uint16, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return v
}

// bytesAt reads n bytes, in place when alias is set. The slice's capacity
// is cut to its length, so that an append can never write into the
// checkpoint.
func (r *reader) bytesAt(n int, alias bool) []byte {
	raw := r.take(n)
	if r.err != nil {
		return nil
	}
	if alias {
		r.inPlace++
		return raw[:n:n]
	}
	return append([]byte(nil), raw...)
}

func copyU32s(dst []uint32, raw []byte) {
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
}
