package config

// Cluster is the cluster block: routes to the other servers of a cluster
// (nats-server's cluster { name, listen (or host and port), routes }).
type Cluster struct {
	Name   string
	Host   string
	Port   int
	Routes []string // nats://host:port URLs
	// Username and Password (authorization { user, password }) are asked
	// of incoming routes and sent on routes learned by gossip.
	Username, Password string
	NoAdvertise        bool
}

func (c *Config) applyCluster(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	cl := &c.Cluster
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "name":
			cl.Name, err = v.str(n)
		case "listen":
			var h string
			h, cl.Port, err = listen(v, n)
			if h != "" {
				cl.Host = h
			}
		case "host", "net":
			cl.Host, err = v.str(n)
		case "port":
			var p int64
			p, err = v.integer(n, 0, 65535)
			cl.Port = int(p)
		case "routes":
			cl.Routes, err = v.strings(n)
		case "no_advertise":
			cl.NoAdvertise, err = v.boolean(n)
		case "authorization":
			var am map[string]any
			if am, err = v.block(n); err != nil {
				return err
			}
			return eachKey(am, v.pos, func(k string, v value) error {
				var err error
				switch lower(k) {
				case "user", "username":
					cl.Username, err = v.str(n + "." + k)
				case "password", "pass":
					cl.Password, err = v.str(n + "." + k)
				default:
					c.warn(v, "field %q is not supported by jetwal; ignored", n+"."+k)
				}
				return err
			})
		default:
			c.warn(v, "field %q is not supported by jetwal; ignored", n)
		}
		return err
	})
}
