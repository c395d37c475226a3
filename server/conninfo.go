package server

// Connection returns a snapshot of the connected client cid (as in
// Connections), and false when no such client is connected. Cheap enough
// for one lookup per event (JetStream's API audit advisory).
func (s *Server) Connection(cid uint64) (ConnInfo, bool) {
	s.mu.Lock()
	c := s.mu.clients[cid]
	s.mu.Unlock()
	if c == nil {
		return ConnInfo{}, false
	}
	return c.info(), true
}
