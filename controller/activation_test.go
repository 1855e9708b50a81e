package controller

import (
	"strings"
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

func names(a activation) []string {
	var out []string
	for _, r := range a.records {
		n := r.Record.TypeName()
		if f, ok := r.Record.(*metadata.FeatureLevelRecord); ok {
			n += ":" + f.Name
		}
		out = append(out, n)
	}
	return out
}

// Kafka 4.4.0's activation records on each kind of log.
func TestActivationRecords(t *testing.T) {
	begin := &metadata.BeginTransactionRecord{Name: ptr("Bootstrap records")}
	mv := &metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33}

	// A fresh log: the default bootstrap in a transaction, the ELR config.
	l := image.NewLoader(image.Options{})
	a, err := activationRecords(l, "2")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names(a), ",")
	if !strings.HasPrefix(got, "BeginTransactionRecord,FeatureLevelRecord:metadata.version,") ||
		!strings.HasSuffix(got, "ConfigRecord,EndTransactionRecord") || a.atomic {
		t.Errorf("fresh log: %s (atomic %v)", got, a.atomic)
	}
	if c := a.records[len(a.records)-2].Record.(*metadata.ConfigRecord); c.Name != "min.insync.replicas" || *c.Value != "2" || c.ResourceType != 4 {
		t.Errorf("ELR config: %+v", c)
	}

	// A bootstrap transaction left open by an earlier leader: aborted, then again.
	l = image.NewLoader(image.Options{})
	if err := l.Replay(1, 1, []metadata.Record{begin, mv}, []int16{0, 0}); err != nil {
		t.Fatal(err)
	}
	a, err = activationRecords(l, "1")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(a), ","); !strings.HasPrefix(got, "AbortTransactionRecord,BeginTransactionRecord,FeatureLevelRecord:metadata.version") ||
		!strings.Contains(a.message, "Aborting partial bootstrap records transaction at offset 1.") {
		t.Errorf("open bootstrap: %s / %s", got, a.message)
	}

	// A log with a metadata.version and an open transaction: only the abort.
	l = image.NewLoader(image.Options{})
	if err := l.Replay(1, 1, []metadata.Record{mv}, []int16{0}); err != nil {
		t.Fatal(err)
	}
	if err := l.Replay(2, 1, []metadata.Record{&metadata.BeginTransactionRecord{}}, []int16{0}); err != nil {
		t.Fatal(err)
	}
	a, err = activationRecords(l, "1")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(a), ","); got != "AbortTransactionRecord" || !a.atomic {
		t.Errorf("open transaction: %s", got)
	}
	// Nothing open: nothing to write.
	l = image.NewLoader(image.Options{})
	if err := l.Replay(1, 1, []metadata.Record{mv}, []int16{0}); err != nil {
		t.Fatal(err)
	}
	if a, err = activationRecords(l, "1"); err != nil || len(a.records) != 0 {
		t.Errorf("quiet log: %v %v", names(a), err)
	}
	// An open transaction below 3.6-IV1 cannot be closed.
	if _, err := nonEmptyActivation(5, metadata.MinLevel); err == nil || !strings.Contains(err.Error(), "does not support transactions") {
		t.Errorf("old metadata.version with a transaction: %v", err)
	}
}
