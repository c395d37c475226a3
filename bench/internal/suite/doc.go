// Package suite runs the comparison: it starts server A (jetwal) and
// server B (nats-server) side by side, runs every workload at every message
// size against both in alternating order, repeats that for each durability
// mode and repetition with fresh servers, then runs the durable-consumers
// test (1,000 durable consumers on one stream: idle CPU, clean and kill -9
// restart) and the growth test (append to 1M, 10M, 50M messages; clean and
// SIGKILL restarts at each size) against each server in turn.
//
// Time is bounded twice: every run has a time cap derived from what is left
// of the comparison budget, and the growth test stops appending when its
// budget ends, recording how far it got. Config says what to run; Full,
// Quick and Smoke are the presets behind the default, -quick and the smoke
// test.
//
// A failed run is recorded with its error and the suite goes on; the report
// shows the row as "<server>: error: …". A server that leaves the consumer
// API unanswered (one without consumers) costs one API timeout: its later
// read runs are recorded as errors without running.
package suite
