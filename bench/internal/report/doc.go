// Package report turns the raw measurements of a comparison run into
// bench/results: REPORT.md (tables, targets marked met or not, the commands
// to reproduce), CSV files, PNG charts drawn with gonum/plot, and the
// Performance section spliced into the repository README. The text files
// name no absolute path of the machine (paths.go), and the charts keep
// their legends below the plot area (render.go).
//
// Every figure in a table is a median over the repetitions of a row; the
// ratio column is server A (jetwal) divided by server B (nats-server), so a
// ratio above 1 means A did more messages per second, or, for latency rows,
// took longer.
package report
