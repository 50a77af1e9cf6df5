package dashboard

import (
	"crypto/rand"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/platform/clientaddr"
	"github.com/revops/revops/models"
)

// Device tokens are OWASP's "device cookies" (Slow Down Online Guessing Attacks with
// Device Cookies): a browser that signs in gets a random token, remembered for the user
// it signed in as. A later login naming that user from that browser is a client of its
// own to the throttle and the hash gate (CONTRACT §17), not one of the many that may share
// its address (a NAT, an office, a /64): those can spend their address's budget and guess
// the owner's password from it, and the owner's browser still signs in. A browser without
// a token (or whose token is another user's) counts as its address, as before.
//
// A token opens nothing: it only chooses which budget a login counts against, and the
// password is checked as always. Only its SHA-256 is stored; the cookie is HttpOnly and
// sent to the login page alone.
const (
	deviceCookie = "revops_device"
	deviceTTL    = 90 * 24 * time.Hour // renewed at each login from the browser
	devicePath   = "/dashboard/login"
)

// loginClient is who presents a login, as the throttle and the hash gate count it.
type loginClient struct {
	scope string   // the throttle's key: "device:<id>" or "ip:<address or /64>"
	seat  gateSeat // the hash gate's share
	// device is the id (SHA-256) of the browser's token when it is known for the email
	// named, with the token itself, renewed when the login succeeds.
	device, token string
}

// loginClient is the browser presenting a login of email: its device when its token is
// one of email's user, else its address.
func (h *handler) loginClient(c *gin.Context, email string) (loginClient, error) {
	who := addressClient(clientaddr.Of(c.Request, h.cfg.TrustedProxies))
	token, err := c.Cookie(deviceCookie)
	if err != nil || token == "" || len(token) > 128 || email == "" {
		return who, nil
	}
	id := hashToken(token)
	known, err := h.store.KnownDevice(c.Request.Context(), id, email, h.now().UTC())
	if err != nil || !known {
		return who, err
	}
	return loginClient{scope: "device:" + id, seat: gateSeat{share: "device:" + id, trusted: true}, device: id, token: token}, nil
}

// addressClient is an unknown browser at ip: the throttle counts it by its address (an
// IPv6 client by its /64), the hash gate by its address or IPv6 /48 (gateShare).
func addressClient(ip netip.Addr) loginClient {
	return loginClient{scope: clientScope(ip), seat: gateSeat{share: gateShare(ip)}}
}

// gateShare is an unknown browser's share of the hash gate: its IPv4 address, or its IPv6
// /48, the block one site is given. Whoever holds a /48 has 65,536 /64s, each a client of
// its own to the throttle; to the gate, where they compete for the same cores, they are one.
func gateShare(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		return "ip:" + netip.PrefixFrom(ip, 48).Masked().String()
	}
	return clientScope(ip)
}

// rememberDevice keeps the browser that just signed in as u: its token renewed when it was
// already u's, else a new one.
func (h *handler) rememberDevice(c *gin.Context, u models.OrganizationUser, who loginClient) error {
	token, id := who.token, who.device
	if id == "" {
		token = rand.Text() + rand.Text()
		id = hashToken(token)
	}
	now := h.now().UTC()
	dev := models.LoginDevice{ID: id, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(deviceTTL)}
	if err := sessions.RememberDevice(c.Request.Context(), h.store, u.OrganizationID, dev); err != nil {
		return err
	}
	h.setCookie(c, deviceCookie, token, devicePath, int(deviceTTL.Seconds()))
	return nil
}
