package config

import "strings"

// The keys of the node's identity and roles.
const (
	NodeIDKey       = "node.id"
	ProcessRolesKey = "process.roles"
)

// roleKeys are the keys of the node's identity and roles.
var roleKeys = []string{NodeIDKey, ProcessRolesKey}

// IsController reports whether process.roles holds "controller".
func (c *Config) IsController() bool {
	for _, r := range c.ProcessRoles {
		if r == "controller" {
			return true
		}
	}
	return false
}

// readRoles reads node.id and process.roles.
func (c *Config) readRoles(r *reader, forceController bool) {
	nodeID := r.int(NodeIDKey, -1, -1)
	if nodeID > 1<<31-1 {
		r.bad("node.id: %d is larger than an int32", nodeID)
		nodeID = -1
	}
	c.NodeID = int32(nodeID)
	if forceController {
		c.ProcessRoles = []string{"controller"}
	} else {
		c.readProcessRoles(r)
	}
	if c.NodeID < 0 {
		r.bad("node.id: required and must be >= 0 in KRaft mode, got %d", c.NodeID)
	}
}

func (c *Config) readProcessRoles(r *reader) {
	seen := map[string]bool{}
	for _, role := range SplitList(r.get(ProcessRolesKey, "")) {
		role = strings.ToLower(role)
		if role != "broker" && role != "controller" {
			r.bad("process.roles: unknown role %q (want broker and/or controller)", role)
			continue
		}
		if seen[role] {
			r.bad("process.roles: duplicate role %q", role)
		}
		seen[role] = true
		c.ProcessRoles = append(c.ProcessRoles, role)
	}
	if len(c.ProcessRoles) == 0 {
		r.bad("process.roles: required (controller for a quorum node, broker for an observer)")
	} else if len(c.ProcessRoles) > 1 {
		c.Warnings = append(c.Warnings, "process.roles: kraftd serves only the controller side of combined mode; the broker role is ignored")
	}
}
