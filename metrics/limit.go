package metrics

import (
	"net"
	"sync"
	"time"
)

// MaxConns is how many connections the metrics server holds open at once; further ones wait
// in the listener's backlog until one closes. A scraper needs one. Without a bound, idle
// keep-alive connections (a client that opens a new one per scrape and never closes it, or
// anyone on the loopback) took a descriptor each for good, until the daemon could open no file:
// it stopped ("too many open files" writing status.json), or refused its trainer's requests.
const MaxConns = 16

// Connection deadlines of the metrics server: a connection idle between requests is closed
// after IdleTimeout, and one whose request or response is not through within IOTimeout
// (a client that does not read) is cut, so the bounded connections come free.
const (
	IdleTimeout = 30 * time.Second
	IOTimeout   = time.Minute
)

// limitListener accepts at most n connections at once: Accept waits while n are open.
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func limitConns(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
