package controllerload

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FleetConfig describes simulated brokers.
type FleetConfig struct {
	Brokers int   // how many
	FirstID int32 // their ids are FirstID, FirstID+1, ... (0: 100, above the controllers' usual ids)
	// HeartbeatInterval is broker.heartbeat.interval.ms (0: Kafka's 2 s). A
	// broker heartbeats again this long after each answer, as Kafka's
	// BrokerLifecycleManager does.
	HeartbeatInterval time.Duration
	// RequestTimeout bounds one registration or heartbeat (0: 5 s).
	RequestTimeout time.Duration
	// Racks, when above 0, puts broker id in rack "rack-<id mod Racks>".
	Racks int
	// Seed spreads the brokers' first heartbeats over an interval.
	Seed uint64
}

// Fleet is a set of simulated brokers. Each holds a connection of its own to
// the active controller, as a Kafka broker does: a controller answers one
// request per connection at a time, so brokers sharing a connection would
// queue behind each other and count that wait as the controller's.
type Fleet struct {
	cfg     FleetConfig
	finder  *Finder
	brokers []*Broker
	// Heartbeats and Registrations record every attempt's answer.
	Heartbeats    Recorder
	Registrations Recorder
	cancel        context.CancelFunc
	wg            sync.WaitGroup
}

// Broker is one simulated broker.
type Broker struct {
	ID          int32
	Incarnation [16]byte
	Dir         [16]byte // its one log directory
	fleet       *Fleet

	epoch    atomic.Int64 // broker epoch; -1 until registered
	fenced   atomic.Bool  // as the last heartbeat answer said
	answered atomic.Int64 // unix nanos of the last heartbeat answered without an error
	stop     chan struct{}
	stopOnce sync.Once
}

// NewFleet makes the brokers; Start runs them.
func NewFleet(cfg FleetConfig, finder *Finder) *Fleet {
	if cfg.FirstID == 0 {
		cfg.FirstID = 100
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 2 * time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	f := &Fleet{cfg: cfg, finder: finder}
	for i := range cfg.Brokers {
		b := &Broker{ID: cfg.FirstID + int32(i), fleet: f, stop: make(chan struct{})}
		_, _ = rand.Read(b.Incarnation[:])
		_, _ = rand.Read(b.Dir[:])
		b.Dir[0] |= 0x40 // Kafka's reserved directory ids all have a zero high half
		b.epoch.Store(-1)
		b.fenced.Store(true)
		f.brokers = append(f.brokers, b)
	}
	return f
}

// Brokers are the fleet's brokers.
func (f *Fleet) Brokers() []*Broker { return f.brokers }

// Start runs every broker until Close: register, then heartbeat.
func (f *Fleet) Start(ctx context.Context) {
	ctx, f.cancel = context.WithCancel(ctx)
	rng := mrand.New(mrand.NewPCG(f.cfg.Seed, 1))
	for _, b := range f.brokers {
		phase := time.Duration(rng.Int64N(int64(f.cfg.HeartbeatInterval)))
		f.wg.Go(func() { b.run(ctx, phase) })
	}
}

// Close stops every broker and waits for them.
func (f *Fleet) Close() {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
}

// Unfenced counts the brokers whose last heartbeat answer said unfenced.
func (f *Fleet) Unfenced() int {
	n := 0
	for _, b := range f.brokers {
		if !b.fenced.Load() {
			n++
		}
	}
	return n
}

// WaitUnfenced waits until at least n brokers are unfenced.
func (f *Fleet) WaitUnfenced(ctx context.Context, n int) error {
	for f.Unfenced() < n {
		select {
		case <-ctx.Done():
			far := time.Now().Add(time.Hour)
			reg, hb := f.Registrations.Summarize(time.Time{}, far), f.Heartbeats.Summarize(time.Time{}, far)
			return fmt.Errorf("controllerload: %d of %d brokers unfenced, waiting for %d (registrations: %d answered, errors by code %v; heartbeats: %d answered, errors by code %v): %w",
				f.Unfenced(), len(f.brokers), n, reg.OK, reg.Errors, hb.OK, hb.Errors, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Stop makes broker b stop heartbeating and close its connection at once,
// as a broker killed with SIGKILL does; it stays registered.
func (b *Broker) Stop() { b.stopOnce.Do(func() { close(b.stop) }) }

// Stopped reports whether Stop was called.
func (b *Broker) Stopped() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// Epoch is the broker epoch (-1 before registration).
func (b *Broker) Epoch() int64 { return b.epoch.Load() }

// LastAnswered is when the broker's latest heartbeat was answered without
// an error (zero: never).
func (b *Broker) LastAnswered() time.Time {
	if n := b.answered.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// backoff is Kafka's broker retry pattern after a failed request: from
// 50 ms, doubling, at most the heartbeat interval.
func (b *Broker) backoff(failures int) time.Duration {
	d := 50 * time.Millisecond << min(failures, 10)
	return min(d, b.fleet.cfg.HeartbeatInterval)
}

func (b *Broker) run(ctx context.Context, phase time.Duration) {
	var conn *Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	next := time.Now().Add(phase)
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.stop:
			return
		case <-time.After(time.Until(next)):
		}
		var err error
		registering := b.epoch.Load() < 0
		conn, err = b.connect(ctx, conn)
		if err == nil {
			if registering {
				err = b.register(ctx, conn)
			} else {
				err = b.heartbeat(ctx, conn)
			}
		}
		if err == nil {
			failures = 0
			next = time.Now().Add(b.fleet.cfg.HeartbeatInterval)
			if registering {
				next = time.Now() // a Kafka broker heartbeats at once once registered
			}
			continue
		}
		if conn != nil && (conn.Broken() || errors.Is(err, kerr.NotController)) {
			b.fleet.finder.Wrong(conn.Addr)
			conn.Close()
			conn = nil
		}
		if errors.Is(err, kerr.StaleBrokerEpoch) {
			// The controller lost the registration (a new incarnation replaced it,
			// or a controller that never saw it is active): register again.
			b.epoch.Store(-1)
		}
		next = time.Now().Add(b.backoff(failures))
		failures++
	}
}

// connect returns a connection to the active controller: conn when it still
// points there, else a new one.
func (b *Broker) connect(ctx context.Context, conn *Conn) (*Conn, error) {
	addr, _, err := b.fleet.finder.Active(ctx)
	if err != nil {
		return conn, err
	}
	if conn != nil && conn.Addr == addr && !conn.Broken() {
		return conn, nil
	}
	if conn != nil {
		conn.Close()
	}
	dctx, cancel := context.WithTimeout(ctx, b.fleet.cfg.RequestTimeout)
	defer cancel()
	c, err := Dial(dctx, addr)
	if err != nil {
		b.fleet.finder.Wrong(addr)
		return nil, err
	}
	return c, nil
}

// features are what the broker supports: every feature the controller
// supports, at the controller's ranges (the same release on both sides).
func features(c *Conn) []kmsg.BrokerRegistrationRequestFeature {
	var out []kmsg.BrokerRegistrationRequestFeature
	for _, s := range c.Supported {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = s.Name, s.MinVersion, s.MaxVersion
		out = append(out, f)
	}
	return out
}

func (b *Broker) register(ctx context.Context, c *Conn) error {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = b.ID, b.fleet.finder.ClusterID(), b.Incarnation
	ln := kmsg.NewBrokerRegistrationRequestListener()
	// A fake endpoint: a controller never connects to its brokers.
	ln.Name, ln.Host, ln.Port, ln.SecurityProtocol = "PLAINTEXT", "localhost", uint16(40000+int(b.ID)%20000), 0
	req.Listeners = []kmsg.BrokerRegistrationRequestListener{ln}
	req.Features = features(c)
	if n := b.fleet.cfg.Racks; n > 0 {
		rack := fmt.Sprintf("rack-%d", int(b.ID)%n)
		req.Rack = &rack
	}
	req.LogDirs = [][16]byte{b.Dir}
	req.PreviousBrokerEpoch = -1
	s := Sample{ID: b.ID, Start: time.Now()}
	s.Due = s.Start
	rctx, cancel := context.WithTimeout(ctx, b.fleet.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Do(rctx, req)
	s.End, s.Code = time.Now(), -1
	if err == nil {
		r := resp.(*kmsg.BrokerRegistrationResponse)
		s.Code = r.ErrorCode
		if r.ErrorCode == 0 {
			b.epoch.Store(r.BrokerEpoch)
		} else {
			err = kerr.ErrorForCode(r.ErrorCode)
		}
	}
	if ctx.Err() == nil {
		b.fleet.Registrations.Add(s)
	}
	return err
}

func (b *Broker) heartbeat(ctx context.Context, c *Conn) error {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	epoch := b.epoch.Load()
	req.BrokerID, req.BrokerEpoch = b.ID, epoch
	// Caught up: the registration's own record committed before it was
	// answered, and the high watermark polled since (Finder.PollHighWatermark).
	req.CurrentMetadataOffset = max(epoch, b.fleet.finder.HighWatermark())
	s := Sample{ID: b.ID, Start: time.Now()}
	s.Due = s.Start
	rctx, cancel := context.WithTimeout(ctx, b.fleet.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Do(rctx, req)
	s.End, s.Code = time.Now(), -1
	if err == nil {
		r := resp.(*kmsg.BrokerHeartbeatResponse)
		s.Code = r.ErrorCode
		if r.ErrorCode == 0 {
			b.fenced.Store(r.IsFenced)
			b.answered.Store(s.End.UnixNano())
		} else {
			err = kerr.ErrorForCode(r.ErrorCode)
		}
	}
	if ctx.Err() == nil && !b.Stopped() {
		b.fleet.Heartbeats.Add(s)
	}
	return err
}
