// Package fuzz holds jetwal's native Go fuzz targets for the storage engine:
//
//	FuzzSegmentDecode  arbitrary bytes as a segment file
//	FuzzRecover        operations, a crash point and a damage mode on the
//	                   crashable filesystem, then recovery
//	FuzzSubjectMatch   subject wildcard matching against a reference matcher
//
// Targets that need a package's internals live beside it:
// server.FuzzProtocolParser, consumerstate.FuzzConsumerStateDecode and
// jetstream.FuzzJetStreamAPI. `make fuzz FUZZTIME=60s` runs them all;
// `make test` runs each for a few seconds. Seed corpora are in testdata/fuzz.
package fuzz
