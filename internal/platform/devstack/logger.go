package devstack

import (
	"context"
	"log/slog"
	"strings"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// minLevelHandler drops records below min before they reach the wrapped
// handler. The Temporal server is very chatty at info level; in dev we only
// want to hear about problems unless the user asked for verbose output.
type minLevelHandler struct {
	min slog.Leveler
	h   slog.Handler
}

func (m minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min.Level() && m.h.Enabled(ctx, l)
}

func (m minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return m.h.Handle(ctx, r)
}

func (m minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{min: m.min, h: m.h.WithAttrs(attrs)}
}

func (m minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{min: m.min, h: m.h.WithGroup(name)}
}

// quietLogger returns base filtered to warn+ (or debug+ when verbose). The
// level can be raised later, e.g. to silence shutdown noise.
func quietLogger(base *slog.Logger, verbose bool) (*slog.Logger, *slog.LevelVar) {
	level := new(slog.LevelVar)
	level.Set(slog.LevelWarn)
	if verbose {
		level.Set(slog.LevelDebug)
	}
	return slog.New(minLevelHandler{min: level, h: base.Handler()}), level
}

// benignWarnings are prefixes of server warnings that describe a deliberate
// choice of this dev stack; they are demoted to info so they only show when
// verbose.
var benignWarnings = []string{
	// The HTTP API is off on purpose (one port less; the UI and SDKs use gRPC).
	"HTTP API port has not been set.",
}

func isBenignWarning(msg string) bool {
	for _, p := range benignWarnings {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// serverLogger adapts slog to Temporal's log.Logger interface.
type serverLogger struct {
	l *slog.Logger
}

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
)

func (s serverLogger) Debug(msg string, tags ...tag.Tag) { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)  { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag) {
	if isBenignWarning(msg) {
		s.log(slog.LevelInfo, msg, tags)
		return
	}
	s.log(slog.LevelWarn, msg, tags)
}
func (s serverLogger) Error(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// DPanic, Panic and Fatal are logged as errors: an embedded server must never
// exit or panic the host process. Fatal paths we can predict (busy ports) are
// checked before the server starts.
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Fatal(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }

// With lets Temporal pre-bind tags cheaply instead of re-sending them per call.
func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{l: s.l.With(tagsToArgs(tags)...)}
}

// SLog hands Temporal components that want slog the same filtered logger.
func (s serverLogger) SLog() *slog.Logger { return s.l }

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !s.l.Enabled(ctx, level) {
		return // skip converting tags for records that would be dropped
	}
	s.l.Log(ctx, level, msg, tagsToArgs(tags)...)
}

func tagsToArgs(tags []tag.Tag) []any {
	args := make([]any, len(tags))
	for i, t := range tags {
		args[i] = slog.Any(t.Key(), t.Value())
	}
	return args
}
