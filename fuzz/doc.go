// Package fuzz holds jetwal's native Go fuzz targets that span packages:
//
//	FuzzSegmentDecode  arbitrary bytes as a segment file
//	FuzzRecover        an operation sequence (appends, async appends, syncs,
//	                   deletes, purges, clean reopens, segment rolls), a
//	                   crash point and a damage mode (torn tail, zeroed
//	                   512-byte sector, bit flip) on the crashable
//	                   filesystem, then recovery; the input layout is in
//	                   recover_input_test.go, the properties on FuzzRecover
//	FuzzJetStreamAPI   arbitrary bodies to each $JS.API subject of an
//	                   in-process server: always an error JSON or a valid
//	                   response, and the server keeps serving
//	FuzzSubjectMatch   subject wildcard matching against a reference matcher
//
// Targets that need a package's internals live beside their package (for
// example server.FuzzProtocolParser and the consumerstate and jetstream
// targets). FUZZ_TARGETS in the Makefile lists every one, and the test
// internal/lint.TestFuzzTargetsInMakefile fails when a Fuzz function is
// missing from it: `make fuzz FUZZTIME=60s` runs each for that long, `make
// test` each for SHORTFUZZ (3s). Seed corpora are in testdata/fuzz; the
// regress_* inputs of FuzzRecover are crashes it found (see their names).
//
// One limit FuzzRecover accepts by design: zeros that cover a record start
// and run past the last record of a segment read as the end of written data,
// so the messages there are gone without a report; nothing on disk tells
// such damage from a segment that simply ends there.
package fuzz
