package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/crypto/bcrypt"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

const (
	sessionCookie = "revops_session"
	loginCookie   = "revops_login_csrf" // double-submit token of the login form (no session yet)
	sessionTTL    = 12 * time.Hour

	maxEmailLength = 254 // RFC 5321's limit on a forward path
)

// viewer is the signed-in user of a request.
type viewer struct {
	SessionID string
	UserID    string
	Email     string
	OrgID     string
	OrgName   string
	Env       string // live or sandbox
	CSRF      string
}

type viewerKey struct{}

func currentViewer(c *gin.Context) *viewer {
	v, _ := c.Get(viewerKey{})
	vw, _ := v.(*viewer)
	return vw
}

// env resolves the viewer's selected environment for store calls.
func (h *handler) env(c *gin.Context) (models.Env, error) {
	v := currentViewer(c)
	return h.store.Environment(c.Request.Context(), v.OrgID, v.Env)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// requireSession sends anyone without a valid session to the login page.
func (h *handler) requireSession(c *gin.Context) {
	token, err := c.Cookie(sessionCookie)
	if err == nil && token != "" {
		v, err := h.loadViewer(c.Request.Context(), hashToken(token))
		if err == nil {
			c.Set(viewerKey{}, v)
			c.Next()
			return
		}
		if !errors.Is(err, apperr.ErrNotFound) {
			h.fail(c, err)
			c.Abort()
			return
		}
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/login")
	c.Abort()
}

func (h *handler) loadViewer(ctx context.Context, id string) (*viewer, error) {
	sess, err := h.store.Session(ctx, id, h.now().UTC())
	if err != nil {
		return nil, err
	}
	u, err := h.store.User(ctx, sess.UserID)
	if err != nil {
		return nil, err
	}
	org, err := h.store.Organization(ctx, sess.OrganizationID)
	if err != nil {
		return nil, err
	}
	return &viewer{SessionID: sess.ID, UserID: u.ID, Email: u.Email, OrgID: org.ID, OrgName: org.Name,
		Env: sess.Environment, CSRF: sess.CSRFToken}, nil
}

// checkCSRF refuses every POST whose form does not carry the session's CSRF token.
func (h *handler) checkCSRF(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	if !sameToken(c.PostForm("csrf_token"), currentViewer(c).CSRF) {
		h.forbidden(c)
		return
	}
	c.Next()
}

func sameToken(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (h *handler) forbidden(c *gin.Context) {
	h.render(c, http.StatusForbidden, "error", view{Title: "Forbidden",
		Error: "This form has expired or did not come from this dashboard. Go back, reload the page and try again."})
	c.Abort()
}

// setCookie writes an HttpOnly, SameSite=Lax cookie, Secure whenever the dashboard is
// reached over TLS (directly or through a proxy).
func (h *handler) setCookie(c *gin.Context, name, value, path string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true,
		Secure: c.Request.TLS != nil || h.cfg.TLS == "proxy", SameSite: http.SameSiteLaxMode,
	})
}

type loginData struct {
	Email string
	CSRF  string
}

func (h *handler) loginForm(c *gin.Context) {
	if token, err := c.Cookie(sessionCookie); err == nil {
		if _, err := h.store.Session(c.Request.Context(), hashToken(token), h.now().UTC()); err == nil {
			c.Redirect(http.StatusSeeOther, "/dashboard/api-keys")
			return
		}
	}
	h.showLogin(c, http.StatusOK, "", "")
}

// showLogin renders the login form with a fresh double-submit CSRF token.
func (h *handler) showLogin(c *gin.Context, status int, email, msg string) {
	token := rand.Text()
	h.setCookie(c, loginCookie, token, "/dashboard/login", 3600)
	h.render(c, status, "login", view{Title: "Sign in", Error: msg, Data: loginData{Email: email, CSRF: token}})
}

func (h *handler) login(c *gin.Context) {
	cookie, _ := c.Cookie(loginCookie)
	if !sameToken(c.PostForm("csrf_token"), cookie) {
		h.forbidden(c)
		return
	}
	email := strings.ToLower(strings.TrimSpace(c.PostForm("email")))
	if len(email) > maxEmailLength {
		h.showLogin(c, http.StatusBadRequest, "", fmt.Sprintf("An email address has at most %d characters.", maxEmailLength))
		return
	}
	ctx := c.Request.Context()
	who, err := h.loginClient(c, email)
	if err != nil {
		h.fail(c, err)
		return
	}
	refused, err := h.throttle.attempt(ctx, email, who)
	if err != nil {
		h.fail(c, err)
		return
	}
	if refused.wait > 0 {
		h.refuseLogin(c, email, who, refused)
		return
	}
	if !h.hashes.enter(ctx, who.seat) {
		c.Header("Retry-After", "1")
		h.showLogin(c, http.StatusTooManyRequests, email, "Too many people are signing in right now. Try again in a moment.")
		return
	}
	u, err := h.checkPassword(ctx, email, c.PostForm("password"))
	h.hashes.leave(who.seat)
	if errors.Is(err, errBadCredentials) {
		h.showLogin(c, http.StatusUnauthorized, email, "Incorrect email or password.")
		return
	}
	if err == nil {
		err = h.throttle.succeeded(ctx, email, who)
	}
	if err == nil {
		err = h.startSession(c, u)
	}
	if err == nil {
		err = h.rememberDevice(c, u, who)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.setCookie(c, loginCookie, "", "/dashboard/login", -1)
	c.Redirect(http.StatusSeeOther, "/dashboard/api-keys")
}

// refuseLogin answers a login over its client's limits: 429 with Retry-After, saying
// which limit (CONTRACT §17).
func (h *handler) refuseLogin(c *gin.Context, email string, who loginClient, r refusal) {
	secs := int(r.wait.Seconds() + 0.999)
	from := "your address"
	if who.device != "" {
		from = "this browser"
	}
	msg := fmt.Sprintf("Too many failed attempts for this email from %s. Try again in %d seconds.", from, secs)
	if r.overall {
		msg = fmt.Sprintf("Too many sign-in attempts from %s. Try again in %d seconds.", from, secs)
	}
	c.Header("Retry-After", strconv.Itoa(secs))
	h.showLogin(c, http.StatusTooManyRequests, email, msg)
}

var errBadCredentials = errors.New("bad credentials")

// dummyHash is compared against when the email is unknown, so the response time does not
// tell which emails have accounts.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a password"), bcrypt.DefaultCost)

func (h *handler) checkPassword(ctx context.Context, email, password string) (models.OrganizationUser, error) {
	u, err := h.store.UserByEmail(ctx, email)
	if errors.Is(err, apperr.ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return u, errBadCredentials
	}
	if err != nil {
		return u, err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		return u, errBadCredentials
	}
	return u, nil
}

// startSession stores a new session (sandbox first: the safe default) and sets its cookie.
func (h *handler) startSession(c *gin.Context, u models.OrganizationUser) error {
	token := rand.Text() + rand.Text()
	now := h.now().UTC()
	sess := models.DashboardSession{
		ID: hashToken(token), UserID: u.ID, OrganizationID: u.OrganizationID, Environment: models.EnvSandbox,
		CSRFToken: rand.Text(), CreatedAt: now, ExpiresAt: now.Add(sessionTTL),
	}
	if err := sessions.Create(c.Request.Context(), h.store, &sess); err != nil {
		return err
	}
	h.setCookie(c, sessionCookie, token, "/dashboard", int(sessionTTL.Seconds()))
	return nil
}

func (h *handler) logout(c *gin.Context) {
	v := currentViewer(c)
	if err := sessions.End(c.Request.Context(), h.store, v.OrgID, v.SessionID); err != nil {
		h.fail(c, err)
		return
	}
	h.setCookie(c, sessionCookie, "", "/dashboard", -1)
	c.Redirect(http.StatusSeeOther, "/dashboard/login")
}

// choice is the posted field name when it is one of allowed; otherwise the page answers
// 400 with msg under the field, and ok is false.
func (h *handler) choice(c *gin.Context, name, msg string, allowed ...string) (v string, ok bool) {
	v = c.PostForm(name)
	if !slices.Contains(allowed, v) {
		h.fail(c, httperr.Request(http.StatusBadRequest, apperr.CodeParameterInvalid, name, "%s", msg))
		return v, false
	}
	return v, true
}

func (h *handler) switchEnvironment(c *gin.Context) {
	env, ok := h.choice(c, "environment", "Choose live or sandbox.", models.EnvLive, models.EnvSandbox)
	if !ok {
		return
	}
	v := currentViewer(c)
	if err := sessions.SwitchEnvironment(c.Request.Context(), h.store, v.OrgID, v.SessionID, env); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, safeNext(c.PostForm("next")))
}

// safeNext keeps redirects inside the dashboard (no open redirect through "next") and goes
// back to the section's top page: an object of one environment is not found in the other.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		return "/dashboard/api-keys"
	}
	section, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/dashboard/"), "/")
	switch section {
	case "webhooks", "usage", "deliveries":
		return "/dashboard/" + section
	}
	return "/dashboard/api-keys"
}
