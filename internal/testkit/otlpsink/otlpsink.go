// Package otlpsink is a small OTLP trace receiver for tests: the spans Revops exports
// leave the process over OTLP (gRPC or HTTP, as a collector or Jaeger would receive
// them) and arrive here, in another process (cmd/otlpsink) or in the test's own.
package otlpsink

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, flattened for tests: ids in hex, attribute values as text.
type Span struct {
	Service      string            `json:"service"`
	TraceID      string            `json:"trace_id"`
	SpanID       string            `json:"span_id"`
	ParentSpanID string            `json:"parent_span_id,omitempty"`
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	Attributes   map[string]string `json:"attributes,omitempty"`
	Links        []Link            `json:"links,omitempty"`
	Status       string            `json:"status,omitempty"`
	Events       []string          `json:"events,omitempty"`
	StartNano    uint64            `json:"start_unix_nano"`
	EndNano      uint64            `json:"end_unix_nano"`
}

// Link is a span's link to another trace.
type Link struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// Sink receives spans and keeps them; with Out set, it also writes each as a JSON line.
type Sink struct {
	coltracepb.UnimplementedTraceServiceServer

	mu    sync.Mutex
	spans []Span
	Out   io.Writer
}

// Spans are the spans received so far.
func (s *Sink) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

// Export is the OTLP gRPC trace service.
func (s *Sink) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := s.add(req); err != nil {
		return nil, err
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// ServeHTTP is OTLP over HTTP: POST /v1/traces, protobuf or JSON.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	if r.Header.Get("Content-Type") == "application/json" {
		err = protojson.Unmarshal(body, req)
	} else {
		err = proto.Unmarshal(body, req)
	}
	if err == nil {
		err = s.add(req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (s *Sink) add(req *coltracepb.ExportTraceServiceRequest) error {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := text(attrs(rs.GetResource().GetAttributes())["service.name"])
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				got = append(got, flatten(service, sp))
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, got...)
	if s.Out != nil {
		for _, sp := range got {
			line, err := json.Marshal(sp)
			if err != nil {
				return err
			}
			if _, err := s.Out.Write(append(line, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}

func flatten(service string, sp *tracepb.Span) Span {
	out := Span{Service: service, TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
		Name: sp.GetName(), Kind: sp.GetKind().String(), StartNano: sp.GetStartTimeUnixNano(), EndNano: sp.GetEndTimeUnixNano()}
	if p := sp.GetParentSpanId(); len(p) > 0 {
		out.ParentSpanID = hex.EncodeToString(p)
	}
	if a := attrs(sp.GetAttributes()); len(a) > 0 {
		out.Attributes = map[string]string{}
		for k, v := range a {
			out.Attributes[k] = text(v)
		}
	}
	for _, l := range sp.GetLinks() {
		out.Links = append(out.Links, Link{hex.EncodeToString(l.GetTraceId()), hex.EncodeToString(l.GetSpanId())})
	}
	if st := sp.GetStatus(); st != nil && st.GetCode() != tracepb.Status_STATUS_CODE_UNSET {
		out.Status = st.GetCode().String()
		if st.GetMessage() != "" {
			out.Status += ": " + st.GetMessage()
		}
	}
	for _, e := range sp.GetEvents() {
		ev := e.GetName()
		for k, v := range attrs(e.GetAttributes()) {
			ev += fmt.Sprintf(" %s=%s", k, text(v))
		}
		out.Events = append(out.Events, ev)
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := make(map[string]*commonpb.AnyValue, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// text is an attribute value as text.
func text(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case nil:
		return ""
	default:
		b, _ := protojson.Marshal(v)
		return string(b)
	}
}

// Server is a Sink listening for OTLP over gRPC and HTTP.
type Server struct {
	*Sink
	GRPCAddr, HTTPAddr string
	grpc               *grpc.Server
	http               *http.Server
}

// Listen starts a Sink on grpcAddr and httpAddr ("127.0.0.1:0" picks a port).
func Listen(grpcAddr, httpAddr string, sink *Sink) (*Server, error) {
	gl, err := net.Listen("tcp", grpcAddr)
	if err != nil {
		return nil, err
	}
	hl, err := net.Listen("tcp", httpAddr)
	if err != nil {
		gl.Close()
		return nil, err
	}
	s := &Server{Sink: sink, GRPCAddr: gl.Addr().String(), HTTPAddr: hl.Addr().String(), grpc: grpc.NewServer(),
		http: &http.Server{Handler: sink}}
	coltracepb.RegisterTraceServiceServer(s.grpc, sink)
	go func() { _ = s.grpc.Serve(gl) }()
	go func() { _ = s.http.Serve(hl) }()
	return s, nil
}

// Close stops both listeners.
func (s *Server) Close() {
	s.grpc.Stop()
	_ = s.http.Close()
}

// ReadFile reads the spans a sink wrote as JSON lines (cmd/otlpsink -out).
func ReadFile(path string) ([]Span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var sp Span
		if err := json.Unmarshal(sc.Bytes(), &sp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, sp)
	}
	return out, sc.Err()
}
