package ssrf

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		ip           string
		refused      bool // with allowPrivate false
		refusedAllow bool // with allowPrivate true
	}{
		{"8.8.8.8", false, false},
		{"1.1.1.1", false, false},
		{"2606:4700:4700::1111", false, false},
		{"127.0.0.1", true, false},
		{"127.9.9.9", true, false},
		{"::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"10.0.0.1", true, false},
		{"172.16.5.4", true, false},
		{"172.31.255.255", true, false},
		{"172.32.0.1", false, false},
		{"192.168.1.1", true, false},
		{"fc00::1", true, false},
		{"fd12:3456::1", true, false},
		{"169.254.1.1", true, false},
		{"fe80::1", true, false},
		{"100.64.0.1", true, false},
		{"100.127.255.254", true, false},
		{"100.128.0.1", false, false},
		{"0.0.0.0", true, false},
		{"::", true, false},
		{"224.0.0.1", true, false},
		{"ff02::1", true, false},
		{"255.255.255.255", true, false},
		{"169.254.169.254", true, true},
		{"::ffff:169.254.169.254", true, true},
		{"fd00:ec2::254", true, true},
		// More credential endpoints: ECS task role, EKS Pod Identity, Alibaba Cloud.
		{"169.254.170.2", true, true},
		{"169.254.170.23", true, true},
		{"fd00:ec2::23", true, true},
		{"100.100.100.200", true, true},
		{"::ffff:100.100.100.200", true, true},
		// Zones name an interface, not a host: they must not hide an address.
		{"fe80::1%eth0", true, false},
		{"fd00:ec2::254%eth0", true, true},
		{"fd00:ec2::23%en0", true, true},
		{"fd12:3456::1%1", true, false},
		{"ff02::1%eth0", true, false},
		{"2606:4700:4700::1111%eth0", false, false},
		// NAT64 (RFC 6052 well-known prefix) may translate to anything, private included.
		{"64:ff9b::a00:1", true, false},    // 10.0.0.1
		{"64:ff9b::7f00:1", true, false},   // 127.0.0.1
		{"64:ff9b::808:808", true, false},  // 8.8.8.8: still a translator in our network
		{"64:ff9b::a9fe:a9fe", true, true}, // 169.254.169.254
		{"64:ff9b::a9fe:aa02", true, true}, // 169.254.170.2
		{"64:ff9b::6464:64c8", true, true}, // 100.100.100.200
		{"64:ff9b:1::a00:1", true, false},  // local-use NAT64
		// Local-use NAT64 (RFC 8215) may use any RFC 6052 prefix length inside its /48;
		// the metadata address is refused in each layout.
		{"64:ff9b:1::a9fe:a9fe", true, true},       // /96
		{"64:ff9b:1:a9fe:a9:fe00::", true, true},   // /48: bits 48–63 and 72–87
		{"64:ff9b:1:a9:fe:a9fe::", true, true},     // /56: bits 56–63 and 72–95
		{"64:ff9b:1:0:a9:fea9:fe00:0", true, true}, // /64: bits 72–103
		{"64:ff9b:1:ffff::6464:64c8", true, true},  // /96 under another /64
		{"64:ff9b:1::808:808", true, false},        // 8.8.8.8: a translator in our network
		{"64:ff9b:1:808:8:800::", true, false},     // /48 layout of 8.8.8.8
		{"64:ff9b:2::a9fe:a9fe", false, false},     // outside the /48
		// SIIT IPv4-translated addresses (RFC 2765) carry IPv4 in their last 32 bits.
		{"::ffff:0:a00:1", true, false},   // 10.0.0.1
		{"::ffff:0:808:808", true, false}, // 8.8.8.8
		{"::ffff:0:a9fe:a9fe", true, true},
		{"::ffff:0:a9fe:aa17", true, true}, // 169.254.170.23
		// 6to4 tunnels to the IPv4 address in bits 16–47.
		{"2002:a00:1::1", true, false},    // 10.0.0.1
		{"2002:808:808::1", true, false},  // 8.8.8.8
		{"2002:a9fe:a9fe::1", true, true}, // 169.254.169.254
		{"2002:6464:64c8::", true, true},  // 100.100.100.200
		// IPv4-compatible (deprecated) addresses.
		{"::a00:1", true, false},         // 10.0.0.1
		{"::808:808", true, false},       // 8.8.8.8
		{"::a9fe:a9fe", true, true},      // 169.254.169.254
		{"::a9fe:a9fe%eth0", true, true}, // zoned, same address
		// Just outside the new ranges.
		{"64:ff9b::1:a00:1", false, false}, // outside the /96
		{"2003::1", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			if err := Check(ip, false); (err != nil) != tt.refused {
				t.Errorf("Check(%s, false) = %v, want refused=%v", tt.ip, err, tt.refused)
			} else if err != nil && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("error %v is not ErrNotAllowed", err)
			}
			if err := Check(ip, true); (err != nil) != tt.refusedAllow {
				t.Errorf("Check(%s, true) = %v, want refused=%v", tt.ip, err, tt.refusedAllow)
			}
		})
	}
}

// fakeResolver answers fixed addresses, as a rebinding DNS server would at save time.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range f[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

func TestCheckHost(t *testing.T) {
	r := fakeResolver{
		"public.test": {"93.184.216.34"},
		"mixed.test":  {"93.184.216.34", "10.1.2.3"},
		"local.test":  {"127.0.0.1"},
		"meta.test":   {"169.254.169.254"},
		"nat64.test":  {"64:ff9b::a00:1"},
	}
	tests := []struct {
		host         string
		allowPrivate bool
		want         error
	}{
		{"public.test", false, nil},
		{"mixed.test", false, ErrNotAllowed},
		{"mixed.test", true, nil},
		{"local.test", false, ErrNotAllowed},
		{"local.test", true, nil},
		{"meta.test", true, ErrNotAllowed},
		{"missing.test", false, ErrUnresolvable},
		{"10.0.0.8", false, ErrNotAllowed},
		{"8.8.4.4", false, nil},
		{"::1", false, ErrNotAllowed},
		{"fe80::1%eth0", false, ErrNotAllowed},
		{"fd00:ec2::254%eth0", true, ErrNotAllowed},
		{"64:ff9b::a9fe:a9fe", true, ErrNotAllowed},
		{"nat64.test", false, ErrNotAllowed},
		{"nat64.test", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			err := CheckHost(context.Background(), r, tt.host, tt.allowPrivate)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("CheckHost(%s, %v) = %v, want %v", tt.host, tt.allowPrivate, err, tt.want)
			}
		})
	}
}

// The dial-time guard refuses a loopback receiver that a hostname led to, and lets it
// through with allowPrivate.
func TestDialerRefusesAtDialTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url := "http://localhost:" + port + "/"
	for _, allow := range []bool{false, true} {
		client := &http.Client{Transport: &http.Transport{DialContext: NewDialer(allow).DialContext}}
		resp, err := client.Get(url)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if allow && err != nil {
			t.Errorf("allowPrivate: %v", err)
		}
		if !allow && !errors.Is(err, ErrNotAllowed) {
			t.Errorf("dial to localhost: err = %v, want ErrNotAllowed", err)
		}
	}
}
