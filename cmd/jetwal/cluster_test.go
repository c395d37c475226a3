package main

import (
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestClusterFlags: --cluster, --routes and --cluster_name as nats-server
// takes them, the cluster block of a config file, flags over the file, and
// the errors.
func TestClusterFlags(t *testing.T) {
	o, err := parseServeFlags([]string{"--cluster", "nats://127.0.0.1:6299", "--routes", "nats://127.0.0.1:6300, nats://10.0.0.2:6301",
		"--cluster_name", "C1", "-n", "a"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co := o.srv.Cluster
	if co == nil || co.Host != "127.0.0.1" || co.Port != 6299 || co.Name != "C1" || len(co.Routes) != 2 || co.Routes[1].Host != "10.0.0.2:6301" {
		t.Fatalf("cluster options %+v", co)
	}
	if o, err := parseServeFlags([]string{"-p", "4555"}, io.Discard); err != nil || o.srv.Cluster != nil {
		t.Fatalf("no cluster flags: %+v %v", o.srv.Cluster, err)
	}
	conf := writeConf(t, `
cluster {
  name: blue
  listen: "127.0.0.1:7000"
  routes: ["nats://127.0.0.1:7001", "nats://127.0.0.1:7002"]
  authorization { user: ru, password: rp }
}
`)
	o, err = parseServeFlags([]string{"-c", conf, "--cluster_name", "green"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co = o.srv.Cluster
	if co == nil || co.Name != "green" || co.Port != 7000 || len(co.Routes) != 2 || co.Username != "ru" || co.Password != "rp" {
		t.Fatalf("cluster from the file %+v", co)
	}
	for _, args := range [][]string{
		{"--routes", "nats://127.0.0.1:1"},
		{"--cluster", "nats://127.0.0.1:6299", "--routes", "http://x:1"},
		{"--cluster", "nats://127.0.0.1"},
		{"--cluster", "nats://127.0.0.1:99999"},
	} {
		if _, err := parseServeFlags(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

var routeListenRE = regexp.MustCompile(`Listening for route connections on (\S+)`)

// TestClusterServe: two `jetwal serve` with --cluster and --routes form a
// cluster: a client of one reaches a subscriber on the other.
func TestClusterServe(t *testing.T) {
	a := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "a", "--cluster", "nats://127.0.0.1:0", "--cluster_name", "C")
	m := routeListenRE.FindStringSubmatch(a.logs.String())
	if m == nil {
		t.Fatalf("no route listener in the log:\n%s", a.logs)
	}
	b := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "b", "--cluster", "nats://127.0.0.1:0", "--cluster_name", "C",
		"--routes", "nats://"+m[1])
	na, err := nats.Connect("nats://" + a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer na.Close()
	nb, err := nats.Connect("nats://" + b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	sub, err := nb.SubscribeSync("across")
	if err != nil {
		t.Fatal(err)
	}
	nb.Flush()
	deadline := time.Now().Add(30 * time.Second)
	for {
		na.Publish("across", []byte("hi"))
		if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
			if string(msg.Data) != "hi" {
				t.Fatalf("got %q", msg.Data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message across the route; logs of b:\n%s", b.logs)
		}
	}
}
