package crypt

import "unsafe"

// The AEADs panic on buffers that overlap in ways they cannot handle (an
// output that starts inside its input at another offset, or that overlaps
// the associated data). Library code must not panic on any input, so Open
// and Seal check for those overlaps and take a copying path instead.

// anyOverlap reports whether x and y share any byte.
func anyOverlap(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 &&
		uintptr(unsafe.Pointer(&x[0])) <= uintptr(unsafe.Pointer(&y[len(y)-1])) &&
		uintptr(unsafe.Pointer(&y[0])) <= uintptr(unsafe.Pointer(&x[len(x)-1]))
}

// inexactOverlap reports whether x and y share bytes but start at
// different addresses.
func inexactOverlap(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 || &x[0] == &y[0] {
		return false
	}
	return anyOverlap(x, y)
}

// outRegion is where an AEAD appending n bytes to dst writes: dst's spare
// capacity, or nothing when it must allocate.
func outRegion(dst []byte, n int) []byte {
	if n <= 0 || cap(dst)-len(dst) < n {
		return nil
	}
	return dst[len(dst) : len(dst)+n]
}

// unsafeBuffers reports whether an AEAD writing n bytes after dst, reading
// in and ad, would meet an overlap it refuses.
func unsafeBuffers(dst []byte, n int, in, ad []byte) bool {
	out := outRegion(dst, n)
	return inexactOverlap(out, in) || anyOverlap(out, ad)
}
