package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/stats"
	"github.com/envsched/envsched/storage"
)

// Source is what a scrape reads; *storage.DB is one.
type Source interface {
	Counters() (storage.Counters, error)
	Envs() (map[string]stats.Env, error)
	Files() ([]storage.FileState, error)
	Calibration(lastAnswers int) (ledger.Ledger, error)
	PredictorState() ([]byte, error)
	Path() string
}

// Metrics is the registry of one daemon and its collectors.
type Metrics struct {
	reg     *prometheus.Registry
	latency prometheus.Histogram
	log     *slog.Logger
}

// LatencyBuckets are the request latency histogram's upper bounds, in seconds.
var LatencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns the metrics of the database src serving the exchange directory dir. logger may
// be nil.
func New(src Source, dir string, logger *slog.Logger) *Metrics {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: logger}
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "envsched_request_duration_seconds",
		Help:    "Time from noticing a batch request to publishing its answer (barrier ingest included).",
		Buckets: LatencyBuckets,
	})
	m.reg.MustRegister(m.latency, newCollector(src, dir), newCalibCollector(src), newCorrCollector(src),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveRequest records the latency of one answered request. Safe from any goroutine.
func (m *Metrics) ObserveRequest(d time.Duration) { m.latency.Observe(d.Seconds()) }

// Handler serves the metrics in Prometheus' exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn)})
}

// Gatherer is the registry, for tests and for embedding in another handler.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// CheckAddr reports whether addr has the form Listen accepts ("HOST:PORT", HOST optional),
// without opening it: for checking flags before anything starts.
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("metrics address %q: want HOST:PORT, such as 127.0.0.1:9464: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("metrics address %q: want HOST:PORT with a port from 0 to 65535: %w", addr, err)
	}
	return nil
}

// Listen opens the metrics address "HOST:PORT". An empty host means loopback (127.0.0.1):
// metrics are exposed beyond the machine only when the user names a host.
func Listen(addr string) (net.Listener, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves /metrics on ln until ctx is done, then shuts the server down and returns nil.
// It closes ln.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "envsched serves its metrics at /metrics", http.StatusNotFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: IOTimeout,
		WriteTimeout: IOTimeout, IdleTimeout: IdleTimeout}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limitConns(ln, MaxConns)) }()
	m.log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	select {
	case err := <-done:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// dbSize is the size of the database file; 0 when it cannot be read.
func dbSize(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size())
}
