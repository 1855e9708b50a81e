package configs

import "testing"

func TestEffectivePrecedence(t *testing.T) {
	l := Layers{
		Static:  map[string]string{"log.retention.hours": "2", "log.cleanup.policy": "compact", "min.insync.replicas": "2"},
		Cluster: map[string]string{"log.retention.minutes": "3", "min.insync.replicas": "3"},
		Node:    map[string]string{"log.retention.ms": "7"},
		Topic:   map[string]string{"cleanup.policy": " delete "},
	}
	for _, c := range []struct {
		key, value string
		src        Source
	}{
		{"retention.ms", "7", SourceDynamicBroker},
		{"cleanup.policy", " delete ", SourceTopic}, // stored text, not normalised
		{"min.insync.replicas", "3", SourceDynamicDefaultBroker},
		{"segment.ms", "604800000", SourceDefault},
	} {
		e, ok := Effective(c.key, l)
		if !ok || e.Value == nil || *e.Value != c.value || e.Source != c.src {
			t.Errorf("%s: %+v, want %q from %d", c.key, e, c.value, c.src)
		}
	}
	// Synonyms are tried in order within a layer, units converted.
	e, _ := Effective("retention.ms", Layers{Cluster: map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"}})
	if *e.Value != "120000" {
		t.Errorf("minutes before hours: %q", *e.Value)
	}
	e, _ = Effective("segment.ms", Layers{Static: map[string]string{"log.roll.hours": " x "}})
	if *e.Value != "0" || e.Source != SourceStaticBroker {
		t.Errorf("an unparseable hours value converts to 0: %+v", e)
	}
}

func TestEffectiveAllAndCreateTopicsConfigs(t *testing.T) {
	all := EffectiveAll(Layers{})
	if len(all) != len(topicKeys)-1 {
		t.Fatalf("%d entries, want every key but the internal one", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("not sorted at %s", all[i].Name)
		}
	}
	cfgs := CreateTopicsConfigs(Layers{Topic: map[string]string{"internal.segment.bytes": "1048576"}})
	if len(cfgs) != len(topicKeys) {
		t.Fatalf("a set internal key is included: %d entries", len(cfgs))
	}
	for _, c := range cfgs {
		if c.Name == "leader.replication.throttled.replicas" && (c.Value == nil || *c.Value != "" || c.Source != int8(SourceDefault)) {
			t.Errorf("empty-list default: %+v", c)
		}
		if c.Name == "internal.segment.bytes" && c.Source != int8(SourceTopic) {
			t.Errorf("internal key: %+v", c)
		}
		if c.ReadOnly || c.IsSensitive {
			t.Errorf("%s: read-only or sensitive", c.Name)
		}
	}
}

func TestTypedGetters(t *testing.T) {
	if n, ok := MinInsyncReplicas(Layers{}); !ok || n != 1 {
		t.Errorf("default min ISR %d %v", n, ok)
	}
	if n, ok := MinInsyncReplicas(Layers{Topic: map[string]string{"min.insync.replicas": "2"}}); !ok || n != 2 {
		t.Errorf("topic min ISR %d %v", n, ok)
	}
	// Integer.parseInt does not trim, so Kafka's controller fails on this.
	if _, ok := MinInsyncReplicas(Layers{Topic: map[string]string{"min.insync.replicas": " 2"}}); ok {
		t.Error("untrimmed min ISR parsed")
	}
	if n, ok := EffectiveMinIsr(Layers{Topic: map[string]string{"min.insync.replicas": "3"}}, 2); !ok || n != 2 {
		t.Errorf("min ISR capped at RF: %d %v", n, ok)
	}
	if !UncleanLeaderElection(Layers{Cluster: map[string]string{"unclean.leader.election.enable": "TRUE"}}) {
		t.Error("TRUE is true")
	}
	if UncleanLeaderElection(Layers{Topic: map[string]string{"unclean.leader.election.enable": " true"}}) {
		t.Error("Boolean.parseBoolean does not trim")
	}
	if n, ok := StaticMinInsyncReplicas(map[string]string{"min.insync.replicas": " 3 "}); !ok || n != 3 {
		t.Errorf("static min ISR %d %v", n, ok)
	}
}

func TestServerLogConfigFromStatic(t *testing.T) {
	s := ServerLogConfigFromStatic(map[string]string{"log.retention.hours": "2", "log.roll.ms": "5", "log.roll.hours": "1", "message.max.bytes": "100"})
	want := ServerLogConfig{"retention.ms": "7200000", "segment.ms": "5", "max.message.bytes": "100"}
	if len(s) != len(want) {
		t.Fatalf("got %v", s)
	}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %q, want %q", k, s[k], v)
		}
	}
}

func TestTopicNameRules(t *testing.T) {
	for name, ok := range map[string]bool{"a": true, "a.b_c-D9": true, "": false, ".": false, "..": false, "a b": false,
		string(make([]byte, 249)): false} {
		if got := ValidateTopicName(name) == nil; got != ok {
			t.Errorf("ValidateTopicName(%q) ok=%v, want %v", name, got, ok)
		}
	}
	long := ""
	for range 250 {
		long += "x"
	}
	if err := ValidateTopicName(long); err == nil || err.Message != "Topic name is invalid: the length of '"+long+"' is longer than the max allowed length 249" {
		t.Errorf("long name: %v", err)
	}
}

func TestCheckExists(t *testing.T) {
	topics := func(n string) bool { return n == "t" }
	nodes := func(id int32) bool { return id == 1 }
	for _, c := range []struct {
		typ  int8
		name string
		msg  string
	}{
		{TopicResource, "t", ""},
		{TopicResource, "u", "The topic 'u' does not exist."},
		{BrokerResource, "", ""},
		{BrokerResource, "1", ""},
		{BrokerResource, "+1", ""},
		{BrokerResource, "2", "No node with id 2 found."},
		{BrokerResource, "x", "Invalid broker name x"},
	} {
		got := ""
		if err := CheckExists(c.typ, c.name, topics, nodes); err != nil {
			got = err.Message
		}
		if got != c.msg {
			t.Errorf("%d %q: %q, want %q", c.typ, c.name, got, c.msg)
		}
	}
}
