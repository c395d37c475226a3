package apiserver

import "testing"

func TestRoute(t *testing.T) {
	s := &Server{handlers: map[string]Handler{}}
	for _, op := range []string{"INFO", "STREAM.INFO", "STREAM.MSG.GET", "DIRECT.GET"} {
		s.handlers[op] = Handler{}
	}
	cases := []struct{ subj, op, args string }{
		{"$JS.API.INFO", "INFO", ""},
		{"$JS.API.STREAM.INFO.S", "STREAM.INFO", "S"},
		{"$JS.API.STREAM.MSG.GET.S", "STREAM.MSG.GET", "S"},
		{"$JS.API.DIRECT.GET.S.a.b.c", "DIRECT.GET", "S.a.b.c"},
		{"$JS.API.NOPE", "", ""},
		{"$JS.API.STREAM.NOPE.S", "", ""},
		{"other", "", ""},
	}
	for _, c := range cases {
		_, args, ok := s.Route(c.subj)
		if ok != (c.op != "") || args != c.args {
			t.Errorf("%s: ok=%v args=%q", c.subj, ok, args)
		}
	}
}
