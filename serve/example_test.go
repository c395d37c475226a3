package serve_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/serve"
	"github.com/jetwal/jetwal/server"
)

// Example runs a jetwal server with JetStream inside this program, on a
// random port and a temporary store, and uses it with nats.go: what a test
// that embedded nats-server (server.NewServer, Start, ReadyForConnections,
// ClientURL, Shutdown) does with jetwal.
func Example() {
	dir, err := os.MkdirTemp("", "jetwal-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	s, err := serve.New(serve.Options{
		Server:    server.Options{Host: "127.0.0.1", Port: -1},
		JetStream: true,
		Store:     serve.Store{Dir: dir},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer s.Shutdown(context.Background())
	if !s.ReadyForConnections(10 * time.Second) {
		fmt.Println("not ready")
		return
	}

	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		fmt.Println(err)
		return
	}
	ack, err := js.Publish(ctx, "orders.new", []byte("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ack.Stream, ack.Sequence)
	// Output: ORDERS 1
}
