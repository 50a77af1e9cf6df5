// Command otlpsink receives OTLP traces over gRPC and HTTP and writes each span as a JSON
// line: the trace backend of Revops's tests, run as its own process.
//
//	otlpsink -grpc 127.0.0.1:4317 -http 127.0.0.1:4318 -out spans.jsonl
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/revops/revops/internal/testkit/otlpsink"
)

func main() {
	grpcAddr := flag.String("grpc", "127.0.0.1:4317", "OTLP/gRPC address")
	httpAddr := flag.String("http", "127.0.0.1:4318", "OTLP/HTTP address")
	out := flag.String("out", "", "file the spans are appended to, one JSON object a line (default: standard output)")
	flag.Parse()
	w := os.Stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "otlpsink:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	srv, err := otlpsink.Listen(*grpcAddr, *httpAddr, &otlpsink.Sink{Out: w})
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
	// The addresses, for whoever started it with port 0.
	fmt.Fprintf(os.Stderr, "otlpsink listening grpc=%s http=%s\n", srv.GRPCAddr, srv.HTTPAddr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Close()
}
