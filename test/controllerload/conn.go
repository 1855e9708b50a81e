package controllerload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// clientID names the harness's requests in the controllers' logs.
var clientID = "kraftd-controllerload"

// Conn is one connection to a controller. Requests on it go one at a time:
// a Kafka server (and kraftd) reads no further request from a connection
// until it has answered the one before (Kafka mutes the channel), so a
// pipelined second request would only wait in the socket, with its latency
// counted from the wrong moment.
type Conn struct {
	Addr string

	mu       sync.Mutex
	c        net.Conn
	corr     int32
	buf      []byte          // the request being written (a response gets its own: kmsg byte fields alias it)
	versions map[int16]int16 // api key -> highest version both sides speak
	// Features are the controller's ApiVersions features.
	Supported []kmsg.ApiVersionsResponseSupportedFeature
	Finalized []kmsg.ApiVersionsResponseFinalizedFeature
}

// ErrUnsupported is a request of an api the controller does not advertise.
var ErrUnsupported = errors.New("controllerload: api not advertised by the controller")

// Dial connects to addr and exchanges ApiVersions, so every later request
// goes at the highest version both kmsg and the controller speak.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Conn{Addr: addr, c: nc}
	req := kmsg.NewPtrApiVersionsRequest()
	// v4: below it Kafka (and kraftd) leave out the supported features whose
	// range starts at 0, which a broker's registration must name.
	req.Version = 4
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kraftd-controllerload", "1"
	resp, err := c.do(ctx, req)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("controllerload: ApiVersions to %s: %w", addr, err)
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 {
		nc.Close()
		return nil, fmt.Errorf("controllerload: ApiVersions to %s: error code %d", addr, av.ErrorCode)
	}
	c.versions = make(map[int16]int16, len(av.ApiKeys))
	for _, k := range av.ApiKeys {
		if r := kmsg.RequestForKey(k.ApiKey); r != nil && k.MinVersion <= r.MaxVersion() {
			c.versions[k.ApiKey] = min(k.MaxVersion, r.MaxVersion())
		}
	}
	c.Supported, c.Finalized = av.SupportedFeatures, av.FinalizedFeatures
	return c, nil
}

// Do sends req at the highest version both sides speak and waits for its
// answer (ctx bounds the whole exchange). A connection that failed is closed
// and every later request on it fails.
func (c *Conn) Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	v, ok := c.versions[req.Key()]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, kmsg.NameForKey(req.Key()))
	}
	req.SetVersion(v)
	return c.do(ctx, req)
}

func (c *Conn) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, net.ErrClosed
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	if err := c.c.SetDeadline(deadline); err != nil {
		return nil, c.fail(err)
	}
	c.corr++
	c.buf = protocol.AppendRequest(c.buf[:0], c.corr, &clientID, req)
	if _, err := c.c.Write(c.buf); err != nil {
		return nil, c.fail(err)
	}
	frame, err := protocol.ReadFrame(c.c, protocol.DefaultMaxFrameSize, nil)
	if err != nil {
		return nil, c.fail(err)
	}
	if corr, err := protocol.ResponseCorrelationID(frame); err != nil || corr != c.corr {
		return nil, c.fail(fmt.Errorf("controllerload: response correlation id %d (%v), want %d", corr, err, c.corr))
	}
	resp, err := protocol.ParseResponse(frame, req.Key(), req.GetVersion())
	if err != nil {
		return nil, c.fail(err)
	}
	return resp, nil
}

func (c *Conn) fail(err error) error {
	c.c.Close()
	c.c = nil
	return err
}

// Close closes the connection.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// Broken reports whether the connection failed or was closed.
func (c *Conn) Broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c == nil
}
