//go:build interophostile

package interop

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/internal/hostile"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// activeHostileRSSBound is the active kraftd controller's peak RSS allowed while every
// controller api hits it with hostile values: the idle node uses about 30 MiB; a decoded
// request body of 1 MiB costs up to ~32 MiB, and one request is handled at a time per
// connection, sequentially here.
const activeHostileRSSBound = 160 << 20

// unknownServerErrorApis may answer UNKNOWN_SERVER_ERROR, as Kafka 4.4 does: it lists the
// first two and handles them nowhere, and a ControllerRegistration it cannot record (an
// unknown security protocol, port 0) fails with an unexpected exception.
var unknownServerErrorApis = map[string]bool{
	kmsg.DescribeDelegationToken.Name(): true, kmsg.DescribeUserSCRAMCredentials.Name(): true,
	kmsg.ControllerRegistration.Name(): true,
}

// TestHostileControllerApisActive sends every controller api, at every version, with
// maximal, minimal, array-filled and corrupted bodies (hostile.ControllerApis) to an
// active kraftd controller: every answer decodes as the api's response, carries a Kafka
// error code where it refuses (never UNKNOWN_SERVER_ERROR but where Kafka gives it, never
// NOT_CONTROLLER), comes within the read timeout or is a closed connection; kraftd does
// not crash or panic, its peak RSS stays under activeHostileRSSBound, and it is still the
// active controller afterwards (DescribeCluster lists it; a validate-only UpdateFeatures
// succeeds). The same attack against an active Kafka 4.4.0 controller is logged as the
// reference.
func TestHostileControllerApisActive(t *testing.T) {
	env := kafkatest.Require(t)
	kafkatest.BuildKraftd(t)
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1, Props: kafkatest.Props{config.ActiveControllerKey: "true"}})
	if err := waitActiveRegistered(k.Addr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	rep, peak := attackControllerApis(t, k.Process, k.Addr)
	t.Logf("kraftd: %v; peak RSS %.1f MiB\n%s", rep, mib(peak), codeTable(rep))
	if rep.Requests == 0 || rep.Answered == 0 {
		t.Fatalf("the attack sent %d requests, %d answered", rep.Requests, rep.Answered)
	}
	for _, u := range rep.Undecodable {
		t.Errorf("answer that does not decode: %s", u)
	}
	for _, s := range rep.Silent {
		t.Errorf("no answer within the timeout and no close: %s", s)
	}
	for api, codes := range rep.Codes {
		if codes[kerr.UnknownServerError.Code] > 0 && !unknownServerErrorApis[api] {
			t.Errorf("%s: %d UNKNOWN_SERVER_ERROR answers", api, codes[kerr.UnknownServerError.Code])
		}
		if n := codes[kerr.NotController.Code]; n > 0 {
			t.Errorf("%s: %d NOT_CONTROLLER answers from the active controller", api, n)
		}
	}
	if peak > activeHostileRSSBound {
		t.Errorf("peak RSS %.1f MiB, bound %.0f MiB", mib(peak), mib(activeHostileRSSBound))
	}
	if exited, err := k.Exited(); exited {
		t.Fatalf("kraftd exited: %v", err)
	}
	if log := k.Log(); strings.Contains(log, "panic") {
		t.Errorf("kraftd's log shows a panic:\n%s", hostileTail(log, 40))
	}
	if err := waitActiveRegistered(k.Addr, 10*time.Second); err != nil {
		t.Errorf("after the attack: %v", err)
	}
	uf := updateFeaturesReq(true, false, upd{"metadata.version", 33, 1})(2, "")
	uf.SetVersion(2)
	if resp, err := roundTrip(k.Addr, uf); err != nil || resp.(*kmsg.UpdateFeaturesResponse).ErrorCode != 0 {
		t.Errorf("validate-only UpdateFeatures after the attack: %+v %v", resp, err)
	}

	j := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	if err := waitActiveRegistered(j.Addr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	jrep, jpeak := attackControllerApis(t, j.Process, j.Addr)
	exited, _ := j.Exited()
	t.Logf("Kafka %s (reference): %v; peak RSS %.1f MiB; exited %v\n%s", kafkatest.KafkaVersion, jrep, mib(jpeak), exited, codeTable(jrep))
}

// attackControllerApis runs hostile.ControllerApis against addr and returns its report
// and p's peak RSS during it.
func attackControllerApis(t *testing.T, p *kafkatest.Process, addr string) (hostile.ControllerApisReport, int64) {
	t.Helper()
	if err := p.ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	sampled := sampleRSS(p)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := hostile.ControllerApis(ctx, addr, hostile.ControllerApisParams{Malformed: 8, Seed: 1})
	peak := sampled()
	if u, uerr := p.Usage(); uerr == nil {
		peak = max(peak, u.PeakRSS)
	}
	if err != nil {
		t.Fatalf("the attack did not run: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the attack did not finish within its bound")
	}
	return rep, peak
}

// codeTable lists, per api, the error codes of the answers and their counts.
func codeTable(rep hostile.ControllerApisReport) string {
	var apis []string
	for api := range rep.Codes {
		apis = append(apis, api)
	}
	sort.Strings(apis)
	var b strings.Builder
	for _, api := range apis {
		var codes []int16
		for c := range rep.Codes[api] {
			codes = append(codes, c)
		}
		sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
		fmt.Fprintf(&b, "  %-30s", api)
		for _, c := range codes {
			fmt.Fprintf(&b, " %s=%d", hostile.CodeName(c), rep.Codes[api][c])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func hostileTail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
