package config

import (
	"strings"
	"time"

	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/server/auth"
)

// eachKey walks a block in file order, skipping used variables.
func eachKey(m map[string]any, at pos, fn func(k string, v value) error) error {
	keys := sortedKeys(m)
	vals := make(map[string]value, len(keys))
	for _, k := range keys {
		vals[k] = unwrap(m[k], at)
	}
	sortByPos(keys, vals)
	for _, k := range keys {
		if t, ok := m[k].(token); ok && t.IsUsedVariable() {
			continue
		}
		if err := fn(k, vals[k]); err != nil {
			return err
		}
	}
	return nil
}

func sortByPos(keys []string, vals map[string]value) {
	less := func(a, b string) bool {
		pa, pb := vals[a].pos, vals[b].pos
		if pa.file != pb.file {
			return pa.file < pb.file
		}
		if pa.line != pb.line {
			return pa.line < pb.line
		}
		return pa.col < pb.col
	}
	for i := 1; i < len(keys); i++ { // insertion sort: blocks are small
		for j := i; j > 0 && less(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

func (c *Config) applyJetStream(name string, v value) error {
	js := &c.JetStream
	switch x := v.v.(type) {
	case bool:
		js.Enabled = x
		return nil
	case string:
		b, err := v.boolean(name)
		js.Enabled = b
		return err
	}
	m, err := v.block(name)
	if err != nil {
		return err
	}
	js.Enabled = true
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "enabled", "enable":
			js.Enabled, err = v.boolean(n)
		case "disabled", "disable":
			var d bool
			d, err = v.boolean(n)
			js.Enabled = !d
		case "store", "store_dir", "storedir":
			js.StoreDir, err = v.str(n)
		case "max_memory_store", "max_mem_store", "max_mem":
			js.MaxMemory, err = v.size(n)
		case "max_file_store", "max_file":
			js.MaxStore, err = v.size(n)
		case "sync", "sync_interval":
			if s, ok := v.v.(string); ok && strings.EqualFold(s, "always") {
				js.Sync = &durable.Policy{Mode: durable.Always}
				return nil
			}
			var d time.Duration
			d, err = v.duration(n)
			if err == nil && d == 0 {
				err = v.errorf("%s: want \"always\" or a positive duration", n)
			}
			if err == nil {
				js.Sync = &durable.Policy{Mode: durable.Interval, Interval: d}
			}
		case "domain":
			js.Domain, err = v.str(n)
		case "unique_tag":
			var t string
			t, err = v.str(n)
			js.UniqueTag = strings.ToLower(strings.TrimSpace(t))
		default: // encryption (encryption.go) and the rest
			var known bool
			if known, err = c.applyEncryption(k, n, v); known {
				return err
			}
			if known, err = c.unsupported(secJetStream, k, n, v); !known {
				err = unknownField(n, v)
			}
		}
		return err
	})
}

func (c *Config) applyAuthorization(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	a := &c.Auth
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "user", "username":
			a.Username, err = v.str(n)
		case "pass", "password":
			a.Password, err = v.str(n)
		case "token":
			a.Token, err = v.str(n)
		case "timeout":
			c.AuthTimeout, err = v.duration(n)
		case "users":
			err = c.applyUsers(n, v)
		case "default_permission", "default_permissions", "permissions":
			a.Permissions, err = permissions(n, v)
		default:
			var known bool
			if known, err = c.unsupported(secAuth, k, n, v); !known {
				err = v.errorf("%s: unknown authorization field", n)
			}
		}
		return err
	})
}

func (c *Config) applyUsers(name string, v value) error {
	list, err := v.array(name)
	if err != nil {
		return err
	}
	for i, e := range list {
		ev := unwrap(e, v.pos)
		m, err := ev.block(name)
		if err != nil {
			return err
		}
		var u auth.User
		var nkey string
		err = eachKey(m, ev.pos, func(k string, v value) error {
			n := name + "[" + itoa(i) + "]." + k
			var err error
			switch lower(k) {
			case "user", "username":
				u.Username, err = v.str(n)
			case "pass", "password":
				u.Password, err = v.str(n)
			case "nkey":
				nkey, err = v.str(n)
			case "permission", "permissions", "authorization":
				u.Permissions, err = permissions(n, v)
			case "allowed_connection_types", "connection_types", "clients":
				u.ConnectionTypes, err = connectionTypes(n, v)
			default:
				var known bool
				if known, err = c.unsupported(secUser, k, n, v); !known {
					err = v.errorf("%s: unknown user field", n)
				}
			}
			return err
		})
		if err != nil {
			return err
		}
		switch {
		case nkey != "" && (u.Username != "" || u.Password != ""):
			return ev.errorf("%s[%d]: a user has either an nkey or a user name and password", name, i)
		case nkey != "":
			if err := c.noteUser(nkey, ev, "nkey user"); err != nil {
				return err
			}
			c.Auth.Nkeys = append(c.Auth.Nkeys, auth.NkeyUser{Nkey: nkey, Permissions: u.Permissions, ConnectionTypes: u.ConnectionTypes})
		case u.Username == "":
			return ev.errorf("%s[%d]: user has no name", name, i)
		default:
			if err := c.noteUser(u.Username, ev, "user"); err != nil {
				return err
			}
			c.Auth.Users = append(c.Auth.Users, u)
		}
	}
	return nil
}

// permissions parses a permissions block.
func permissions(name string, v value) (*auth.Permissions, error) {
	m, err := v.block(name)
	if err != nil {
		return nil, err
	}
	p := &auth.Permissions{}
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "pub", "publish", "import":
			p.Publish, err = subjectPermission(n, v)
		case "sub", "subscribe", "export":
			p.Subscribe, err = subjectPermission(n, v)
		case "publish_allow_responses", "allow_responses":
			p.Response, err = allowResponses(n, v)
		default:
			err = v.errorf("%s: unknown permissions field", n)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, v.errorf("%s: %v", name, err)
	}
	return p, nil
}

// subjectPermission parses "subj", ["a", "b"] or { allow: ..., deny: ... }.
func subjectPermission(name string, v value) (*auth.SubjectPermission, error) {
	if m, ok := v.v.(map[string]any); ok {
		sp := &auth.SubjectPermission{}
		err := eachKey(m, v.pos, func(k string, v value) error {
			n := name + "." + k
			var err error
			switch lower(k) {
			case "allow":
				sp.Allow, err = v.strings(n)
			case "deny":
				sp.Deny, err = v.strings(n)
			default:
				err = v.errorf("%s: expected allow or deny", n)
			}
			return err
		})
		return sp, err
	}
	allow, err := v.strings(name)
	if err != nil {
		return nil, err
	}
	return &auth.SubjectPermission{Allow: allow}, nil
}

// allowResponses parses true/false or { max: N, expires: "1m" }.
func allowResponses(name string, v value) (*auth.ResponsePermission, error) {
	rp := &auth.ResponsePermission{MaxMsgs: auth.DefaultResponseMaxMsgs, Expires: auth.DefaultResponseExpires}
	if b, ok := v.v.(bool); ok {
		if !b {
			return nil, nil
		}
		return rp, nil
	}
	m, err := v.block(name)
	if err != nil {
		return nil, v.errorf("%s: expected true, false or { max, expires }", name)
	}
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		switch lower(k) {
		case "max", "max_msgs", "max_messages", "max_responses":
			x, err := v.integer(n, 0, 1<<31-1)
			if x > 0 {
				rp.MaxMsgs = int(x)
			}
			return err
		case "expires", "expiration", "ttl":
			s, err := v.str(n)
			if err != nil {
				return err
			}
			d, err := time.ParseDuration(s)
			if err != nil {
				return v.errorf("%s: %q is not a duration", n, s)
			}
			switch {
			case d < 0:
				rp.Expires = 0 // never
			case d > 0:
				rp.Expires = d
			}
			return nil
		}
		return v.errorf("%s: expected max or expires", n)
	})
	return rp, err
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
