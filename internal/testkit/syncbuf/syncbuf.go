// Package syncbuf is the buffer a test hands to a logger that several goroutines write
// (a server's, a monitor's, a consumer's), read back once they are done or while they run.
package syncbuf

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines is what was written so far, one line an element.
func (b *Buffer) Lines() []string {
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}
