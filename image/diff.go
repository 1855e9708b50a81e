package image

import (
	"bytes"
	"fmt"
	"iter"
	"reflect"
	"slices"
)

// Diff lists how two images' content differs, one line per difference (nil
// when equal): what a snapshot carries, so an image and the image loaded
// from its snapshot compare equal. Provenance, registration offsets and the
// indexes (which follow from the content) are left out. At most limit lines
// (0: all).
func Diff(a, b *Image, limit int) []string {
	d := differ{limit: limit}
	if a.st.mv != b.st.mv {
		d.add("metadata.version %d != %d", a.st.mv, b.st.mv)
	}
	diffMaps(&d, "feature", a.Features(), b.Features(), func(x, y int16) bool { return x == y })
	diffMaps(&d, "broker", byKey(a.Brokers(), brokerID), byKey(b.Brokers(), brokerID), sameBroker)
	diffMaps(&d, "controller", byKey(a.Controllers(), controllerID), byKey(b.Controllers(), controllerID),
		func(x, y *Controller) bool { return reflect.DeepEqual(x, y) })
	diffMaps(&d, "topic", byKey(a.Topics(), topicID), byKey(b.Topics(), topicID), func(x, y *Topic) bool {
		if x.name != y.name {
			d.add("topic %v: name %q != %q", x.id, x.name, y.name)
		}
		diffMaps(&d, fmt.Sprintf("topic %q partition", x.name), x.Partitions(), y.Partitions(), Partition.Equal)
		return true
	})
	diffMaps(&d, "config", byKey(a.AllConfigs(), configOf), byKey(b.AllConfigs(), configOf),
		func(x, y ConfigEntry) bool { return x == y })
	diffMaps(&d, "client quota", byKey(a.ClientQuotas(), quotaOf), byKey(b.ClientQuotas(), quotaOf),
		func(x, y ClientQuota) bool { return x.Value == y.Value })
	if a.NextProducerID() != b.NextProducerID() {
		d.add("next producer id %d != %d", a.NextProducerID(), b.NextProducerID())
	}
	diffMaps(&d, "ACL", byKey(a.ACLs(), aclID), byKey(b.ACLs(), aclID), func(x, y *ACL) bool { return *x == *y })
	diffMaps(&d, "SCRAM credential", byKey(a.ScramCredentials(), scramOf), byKey(b.ScramCredentials(), scramOf), sameScram)
	diffMaps(&d, "delegation token", byKey(a.DelegationTokens(), tokenID), byKey(b.DelegationTokens(), tokenID), sameToken)
	return d.lines
}

type differ struct {
	lines []string
	limit int
}

func (d *differ) add(format string, args ...any) {
	if d.limit == 0 || len(d.lines) < d.limit {
		d.lines = append(d.lines, fmt.Sprintf(format, args...))
	}
}

// diffMaps compares two sequences sorted by key.
func diffMaps[K comparable, V any](d *differ, what string, a, b iter.Seq2[K, V], same func(V, V) bool) {
	am, bm := map[K]V{}, map[K]V{}
	var order []K
	for k, v := range a {
		am[k] = v
		order = append(order, k)
	}
	for k, v := range b {
		bm[k] = v
		if _, ok := am[k]; !ok {
			order = append(order, k)
		}
	}
	for _, k := range order {
		x, inA := am[k]
		y, inB := bm[k]
		switch {
		case !inA:
			d.add("%s %v: only in the second image", what, k)
		case !inB:
			d.add("%s %v: only in the first image", what, k)
		case !same(x, y):
			d.add("%s %v: %+v != %+v", what, k, x, y)
		}
	}
}

func byKey[K comparable, V any](s iter.Seq[V], key func(V) K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for v := range s {
			if !yield(key(v), v) {
				return
			}
		}
	}
}

func brokerID(b *Broker) int32         { return b.ID }
func controllerID(c *Controller) int32 { return c.ID }
func topicID(t *Topic) string          { return t.id.String() }
func aclID(a *ACL) string              { return a.ID.String() }
func tokenID(t *DelegationToken) string {
	return t.TokenID
}
func configOf(c ConfigEntry) string {
	return fmt.Sprintf("%d/%q/%q", c.ResourceType, c.ResourceName, c.Name)
}
func quotaOf(q ClientQuota) string {
	s := ""
	for _, p := range q.Entity {
		if p.Name == nil {
			s += fmt.Sprintf("%q=<default>,", p.Type)
		} else {
			s += fmt.Sprintf("%q=%q,", p.Type, *p.Name)
		}
	}
	return s + fmt.Sprintf("%q", q.Key)
}
func scramOf(c *ScramCredential) string { return fmt.Sprintf("%d/%q", c.Mechanism, c.Name) }

func sameBroker(x, y *Broker) bool {
	a, b := *x, *y
	a.RegistrationOffset, b.RegistrationOffset = 0, 0
	return reflect.DeepEqual(a, b)
}

func sameScram(x, y *ScramCredential) bool {
	return x.Name == y.Name && x.Mechanism == y.Mechanism && x.Iterations == y.Iterations &&
		bytes.Equal(x.Salt, y.Salt) && bytes.Equal(x.StoredKey, y.StoredKey) && bytes.Equal(x.ServerKey, y.ServerKey)
}

func sameToken(x, y *DelegationToken) bool {
	return x.TokenID == y.TokenID && x.Owner == y.Owner && x.Requester == y.Requester &&
		slices.Equal(x.Renewers, y.Renewers) && x.IssueTimestamp == y.IssueTimestamp &&
		x.MaxTimestamp == y.MaxTimestamp && x.ExpirationTimestamp == y.ExpirationTimestamp
}
