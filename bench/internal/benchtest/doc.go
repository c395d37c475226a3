// Package benchtest holds helpers shared by the bench module's tests:
// finding the server binaries and starting a throwaway server.
package benchtest
