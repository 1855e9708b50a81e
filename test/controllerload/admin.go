package controllerload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Op is a kind of admin request sent straight to the active controller, as
// Kafka's admin client does with --bootstrap-controller.
type Op struct {
	Name string
	// Request builds the n-th request (n from 0) and says how many
	// partitions it creates or deletes when it succeeds.
	Request func(n int, timeout time.Duration) (req kmsg.Request, parts int)
	// Code is the answer's error code (a topic's when the answer has one per
	// topic: the first failing one).
	Code func(kmsg.Response) int16
}

// TopicName is the name of the n-th topic of a CreateTopics op with prefix.
func TopicName(prefix string, n int) string { return fmt.Sprintf("%s-%d", prefix, n) }

// CreateTopics creates one topic per request, TopicName(prefix, n), with
// partitions partitions of rf replicas placed by the controller.
func CreateTopics(prefix string, partitions int32, rf int16) Op {
	return Op{
		Name: fmt.Sprintf("CreateTopics %d partitions RF %d", partitions, rf),
		Request: func(n int, timeout time.Duration) (kmsg.Request, int) {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.TimeoutMillis = int32(timeout.Milliseconds())
			t := kmsg.NewCreateTopicsRequestTopic()
			t.Topic, t.NumPartitions, t.ReplicationFactor = TopicName(prefix, n), partitions, rf
			req.Topics = append(req.Topics, t)
			return req, int(partitions)
		},
		Code: func(r kmsg.Response) int16 {
			for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
				if t.ErrorCode != 0 {
					return t.ErrorCode
				}
			}
			return 0
		},
	}
}

// DeleteTopics deletes one topic per request, TopicName(prefix, n), of
// partitions partitions each.
func DeleteTopics(prefix string, partitions int) Op {
	return Op{
		Name: "DeleteTopics",
		Request: func(n int, timeout time.Duration) (kmsg.Request, int) {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.TimeoutMillis = int32(timeout.Milliseconds())
			name := TopicName(prefix, n)
			t := kmsg.NewDeleteTopicsRequestTopic()
			t.Topic = &name
			req.Topics = append(req.Topics, t)
			req.TopicNames = append(req.TopicNames, name)
			return req, partitions
		},
		Code: func(r kmsg.Response) int16 {
			for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
				if t.ErrorCode != 0 {
					return t.ErrorCode
				}
			}
			return 0
		},
	}
}

// LoadConfig says how an admin load offers its requests.
type LoadConfig struct {
	// Rate is requests per second, an open loop: each request falls due on
	// schedule whether or not earlier ones were answered, waits for a free
	// connection, and its latency runs from its due time. 0: a closed loop,
	// each connection sending its next request when the last is answered.
	Rate float64
	// Conns is how many connections (each one request in flight) the load
	// uses (0: 8).
	Conns int
	// Timeout bounds each request and is its TimeoutMillis (0: 30 s).
	Timeout time.Duration
	// Retry sends a failed request again (the same n, 20 ms later) until it
	// succeeds; an answer that the topic already exists (or does not exist,
	// for a delete) then counts as success, an earlier attempt having done it.
	Retry bool
	// Count stops the load after this many requests succeeded or were given
	// up (0: until ctx ends).
	Count int
	// First is the first request's n.
	First int
}

// Load is a running admin load.
type Load struct {
	Recorder
	cfg    LoadConfig
	op     Op
	finder *Finder
	start  time.Time
	issued atomic.Int64 // next n of a closed loop
	wg     sync.WaitGroup
	cancel context.CancelFunc
	done   chan struct{}
}

type job struct {
	n   int
	due time.Time
}

// StartLoad offers op's requests to the active controller until ctx ends,
// Stop, or cfg.Count requests are done.
func StartLoad(ctx context.Context, finder *Finder, op Op, cfg LoadConfig) *Load {
	if cfg.Conns == 0 {
		cfg.Conns = 8
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Load{cfg: cfg, op: op, finder: finder, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	l.issued.Store(int64(cfg.First))
	var jobs chan job
	if cfg.Rate > 0 {
		jobs = make(chan job, cfg.Conns)
		l.wg.Go(func() { l.schedule(ctx, jobs) })
	}
	for range cfg.Conns {
		l.wg.Go(func() { l.work(ctx, jobs) })
	}
	go func() {
		l.wg.Wait()
		cancel()
		close(l.done)
	}()
	return l
}

// Stop ends the load and waits for its requests in flight.
func (l *Load) Stop() {
	l.cancel()
	<-l.done
}

// Done is closed once the load has ended.
func (l *Load) Done() <-chan struct{} { return l.done }

// schedule hands out requests as they fall due. A request that finds every
// connection busy waits in the channel and the scheduler with it; its due
// time is already fixed, so the wait shows in its latency.
func (l *Load) schedule(ctx context.Context, jobs chan<- job) {
	defer close(jobs)
	for i := 0; l.cfg.Count == 0 || i < l.cfg.Count; i++ {
		due := l.start.Add(time.Duration(float64(i) / l.cfg.Rate * float64(time.Second)))
		select {
		case <-time.After(time.Until(due)):
		case <-ctx.Done():
			return
		}
		select {
		case jobs <- job{n: l.cfg.First + i, due: due}:
		case <-ctx.Done():
			return
		}
	}
}

func (l *Load) work(ctx context.Context, jobs <-chan job) {
	var conn *Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		var j job
		if jobs != nil {
			var ok bool
			select {
			case j, ok = <-jobs:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
		} else {
			n := int(l.issued.Add(1) - 1)
			if l.cfg.Count > 0 && n >= l.cfg.First+l.cfg.Count {
				return
			}
			j = job{n: n, due: time.Now()}
		}
		for {
			var ok bool
			conn, ok = l.attempt(ctx, conn, j)
			if ok || !l.cfg.Retry || ctx.Err() != nil {
				break
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// attempt sends j once and records the outcome; it returns the connection
// to use next and whether j is done.
func (l *Load) attempt(ctx context.Context, conn *Conn, j job) (*Conn, bool) {
	s := Sample{ID: -1, Due: j.due, Start: time.Now(), Code: -1}
	addr, _, err := l.finder.Active(ctx)
	if err != nil {
		return conn, false
	}
	if conn != nil && (conn.Addr != addr || conn.Broken()) {
		conn.Close()
		conn = nil
	}
	if conn == nil {
		if conn, err = Dial(ctx, addr); err != nil {
			l.finder.Wrong(addr)
			s.End = time.Now()
			l.keep(ctx, s)
			return nil, false
		}
	}
	req, parts := l.op.Request(j.n, l.cfg.Timeout)
	rctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout+5*time.Second)
	defer cancel()
	resp, err := conn.Do(rctx, req)
	s.End = time.Now()
	if err != nil {
		l.finder.Wrong(addr)
		conn.Close()
		l.keep(ctx, s)
		return nil, false
	}
	s.Code = l.op.Code(resp)
	if l.cfg.Retry && (s.Code == kerr.TopicAlreadyExists.Code || s.Code == kerr.UnknownTopicOrPartition.Code) {
		s.Code = 0
	}
	if s.Code == kerr.NotController.Code {
		l.finder.Wrong(addr)
	}
	if s.Code == 0 {
		s.Parts = parts
	}
	l.keep(ctx, s)
	return conn, s.Code == 0 || !retriable(s.Code)
}

// retriable codes are worth the same request again.
func retriable(code int16) bool {
	err := kerr.ErrorForCode(code)
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Retriable
}

// keep records s unless the load was stopped under it (a request cut short
// by Stop is no answer of the controller's).
func (l *Load) keep(ctx context.Context, s Sample) {
	if ctx.Err() == nil {
		l.Add(s)
	}
}
