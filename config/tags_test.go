package config

import (
	"slices"
	"strings"
	"testing"
)

// TestServerTags: server_tags as a list or one string, kept as nats-server
// keeps them (trimmed, lower-cased, once each); anything else is refused
// with the file and line.
func TestServerTags(t *testing.T) {
	if c := load(t, "a.conf", `server_tags: ["SSD", " az:1 ", "ssd", ""]`); !slices.Equal(c.Tags, []string{"ssd", "az:1"}) {
		t.Fatalf("list: %q", c.Tags)
	}
	if c := load(t, "b.conf", `server_tags: "Region:EU"`); !slices.Equal(c.Tags, []string{"region:eu"}) {
		t.Fatalf("string: %q", c.Tags)
	}
	_, err := Load(write(t, "c.conf", "\nserver_tags: 5"))
	if err == nil || !strings.Contains(err.Error(), "c.conf:2") || !strings.Contains(err.Error(), "server_tags") {
		t.Fatalf("a number: %v", err)
	}
}
