package transform

import (
	"errors"
	"strings"
	"testing"
)

// cases are src, dest, a subject, and what nats-server v2.15.2 gives for
// them: the transformed subject, then the errors of its mapping check
// (ValidateMapping), of compiling the transform and of matching the subject
// ("" for none). The table was produced by running nats-server's own
// functions over these inputs.
var cases = []struct {
	src, dest, subj, want string
	validateErr, newErr   string
	matchErr              string
}{
	{"foo.*", "bar.$1", "foo.x", "bar.x", "", "", ""},
	{"foo.*.*", "bar.{{wildcard(2)}}.{{wildcard(1)}}", "foo.a.b", "bar.b.a", "", "", ""},
	{"foo.*.*", "bar.{{ Wildcard( 2 ) }}.$1", "foo.a.b", "bar.b.a", "", "", ""},
	{"foo.>", "bar.>", "foo.a.b.c", "bar.a.b.c", "", "", ""},
	{"foo.*.>", "bar.$1.>", "foo.a.b.c", "bar.a.b.c", "", "", ""},
	{">", ">", "any.thing", "any.thing", "", "", ""},
	{"", "baz.>", "any.thing", "baz.any.thing", "", "", ""},
	{"foo", "bar", "foo", "bar", "", "", ""},
	{"foo", "bar", "other", "", "", "", "no matching transforms available"},
	{"foo.*", "bar.$1", "other.x", "", "", "", "no matching transforms available"},
	{"foo.*", "bar.$1", "foo.*", "", "", "", "invalid subject"},
	{"foo.*", "bar.{{partition(10,1)}}", "foo.customer42", "bar.3", "", "", ""},
	{"foo.*.*", "bar.{{partition(7,1,2)}}.$2", "foo.ab.cd", "bar.3.cd", "", "", ""},
	{"foo.*", "bar.{{partition(5)}}", "foo.customer42", "bar.2", "", "", ""},
	{"foo", "bar.{{partition(3)}}", "foo", "bar.0", "", "", ""},
	{"foo.*", "{{splitFromLeft(1,3)}}", "foo.abcdef", "abc.def", "", "", ""},
	{"foo.*", "{{SplitFromRight(1,2)}}", "foo.abcdef", "abcd.ef", "", "", ""},
	{"foo.*", "{{sliceFromLeft(1,2)}}", "foo.abcde", "ab.cd.e", "", "", ""},
	{"foo.*", "{{sliceFromRight(1,2)}}", "foo.abcde", "a.bc.de", "", "", ""},
	{"foo.*", "{{sliceFromLeft(1,10)}}", "foo.abcde", "abcde", "", "", ""},
	{"foo.*", "x.{{split(1,-)}}", "foo.a--b-c-", "x.a.b.c", "", "", ""},
	{"foo.*", "x.{{split(1,-)}}", "foo.-a-b", "x.a.b", "", "", ""},
	{"foo.*", "{{left(1,2)}}.{{right(1,2)}}", "foo.abcdef", "ab.ef", "", "", ""},
	{"foo.*", "{{left(1,20)}}", "foo.abcdef", "abcdef", "", "", ""},
	{"foo.*", "bar.$2", "foo.x", "", "invalid mapping destination: wildcard index out of range in $2: [2]", "invalid mapping destination: wildcard index out of range in $2: [2]", ""},
	{"foo.*", "bar.{{wildcard(2)}}", "foo.x", "", "invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]", "invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]", ""},
	{"foo.*", "bar.{{wildcard()}}", "foo.x", "", "invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}", "invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}", ""},
	{"foo.*", "bar.{{wildcard(1,2)}}", "foo.x", "", "invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}", "invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}", ""},
	{"foo.*", "bar.{{wildcard(x)}}", "foo.x", "", "invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(x)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(x)}}", ""},
	{"foo.*", "bar.{{unknown(1)}}", "foo.x", "", "invalid mapping destination: unknown function in {{unknown(1)}}", "invalid mapping destination: unknown function in {{unknown(1)}}", ""},
	{"foo.*", "bar.{{splitFromLeft(1)}}", "foo.x", "", "invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}", "invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}", ""},
	{"foo.*", "bar.{{splitFromLeft(1,2,3)}}", "foo.x", "", "invalid mapping destination: too many arguments passed to the function in {{splitFromLeft(1,2,3)}}", "invalid mapping destination: too many arguments passed to the function in {{splitFromLeft(1,2,3)}}", ""},
	{"foo.*", "bar.{{split(1,a b)}}", "foo.x", "", "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}", ""},
	{"foo.*", "bar.{{split(1,.)}}", "foo.x", "bar.{{split(1,.)}}", "", "", ""},
	{"foo.*", "bar.*", "foo.x", "", "invalid subject", "invalid subject", ""},
	{"foo.>", "bar", "foo.x", "", "invalid subject", "invalid subject", ""},
	{"foo", "bar.>", "foo", "", "invalid subject", "invalid subject", ""},
	{"foo..bar", "bar", "foo", "", "invalid subject", "invalid subject", ""},
	{"foo.*", "bar..x", "foo.x", "", "invalid mapping destination: invalid transform", "invalid subject", ""},
	{"foo.*", "bar. x", "foo.x", "bar. x", "invalid mapping destination: invalid transform", "", ""},
	{"foo", "bar.$1", "foo", "", "invalid mapping destination: wildcard index out of range in $1", "invalid mapping destination: wildcard index out of range in $1", ""},
	{"foo", "bar.{{wildcard(1)}}", "foo", "", "invalid mapping destination: wildcard index out of range in {{wildcard(1)}}", "invalid mapping destination: wildcard index out of range in {{wildcard(1)}}", ""},
	{"foo.*", "bar.$x", "foo.q", "bar.$x", "", "", ""},
	{"foo.*", "bar.{{random(0)}}", "foo.q", "bar.0", "", "", ""},
	{"foo.*", "bar.{{partition(0,1)}}", "foo.q", "bar.0", "", "", ""},
	{"foo.*", "bar.{{wildcard(0)}}", "foo.q", "bar.foo", "", "", ""},
	{"foo.*", "bar.{{partition(a,1)}}", "foo.q", "", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(a,1)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(a,1)}}", ""},
	{"foo.*", "bar.{{partition(3,x)}}", "foo.q", "", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(3,x)}}", "invalid mapping destination: function argument is invalid or in the wrong format in {{partition(3,x)}}", ""},
	{"foo.*", "bar.{{partition(3,2)}}", "foo.q", "", "invalid mapping destination: wildcard index out of range in {{partition(3,2)}}: [2]", "invalid mapping destination: wildcard index out of range in {{partition(3,2)}}: [2]", ""},
	{"foo.*", "bar.{{random(1,2)}}", "foo.q", "", "invalid mapping destination: not enough arguments passed to the function in {{random(1,2)}}", "invalid mapping destination: not enough arguments passed to the function in {{random(1,2)}}", ""},
	{"foo.*", "bar.>.x", "foo.q", "", "invalid mapping destination: invalid transform in x", "invalid subject", ""},
	{"foo.*", "{{wildcard(1)}", "foo.q", "{{wildcard(1)}", "", "", ""},
	{"foo.*", "bar.{{}}", "foo.q", "bar.{{}}", "", "", ""},
	{"foo.*", "bar.{{wildcard 1}}", "foo.q", "", "invalid mapping destination: unknown function in {{wildcard 1}}", "invalid mapping destination: unknown function in {{wildcard 1}}", ""},
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestAgainstNatsServer(t *testing.T) {
	for _, c := range cases {
		name := c.src + " -> " + c.dest + " on " + c.subj
		if got := errText(Validate(c.src, c.dest)); got != c.validateErr {
			t.Errorf("%s: Validate = %q, want %q", name, got, c.validateErr)
		}
		tr, err := New(c.src, c.dest)
		if got := errText(err); got != c.newErr {
			t.Errorf("%s: New = %q, want %q", name, got, c.newErr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadSubject) && !errors.Is(err, ErrInvalidDestination) {
				t.Errorf("%s: error %v is neither ErrBadSubject nor ErrInvalidDestination", name, err)
			}
			continue
		}
		got, err := tr.Match(c.subj)
		if got != c.want || errText(err) != c.matchErr {
			t.Errorf("%s: Match = %q, %v; want %q, %q", name, got, err, c.want, c.matchErr)
		}
	}
}

func TestEmptyDestinationIsNoTransform(t *testing.T) {
	tr, err := New("foo.*", "")
	if tr != nil || err != nil {
		t.Fatalf("New with no destination: %v %v", tr, err)
	}
	if err := Validate("foo.*", ""); err != nil {
		t.Fatal(err)
	}
}

func TestRandomStaysInRange(t *testing.T) {
	tr, err := New("a.*", "b.{{random(3)}}.$1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := 0; i < 300; i++ {
		got, err := tr.Match("a.x")
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Split(got, ".")
		if len(p) != 3 || p[0] != "b" || p[2] != "x" || (p[1] != "0" && p[1] != "1" && p[1] != "2") {
			t.Fatalf("random: %q", got)
		}
		seen[p[1]] = true
	}
	if len(seen) < 2 {
		t.Errorf("300 draws gave only %v", seen)
	}
}

// FuzzTransform: no source, destination or subject panics, and an identity
// transform passes subjects through unchanged.
func FuzzTransform(f *testing.F) {
	for _, c := range cases {
		f.Add(c.src, c.dest, c.subj)
	}
	f.Fuzz(func(t *testing.T, src, dest, subj string) {
		_ = Validate(src, dest)
		tr, err := New(src, dest)
		if err != nil || tr == nil {
			return
		}
		out, err := tr.Match(subj)
		if err == nil && tr.identity && out != subj {
			t.Fatalf("%q -> %q on %q: identity gave %q", src, dest, subj, out)
		}
	})
}
