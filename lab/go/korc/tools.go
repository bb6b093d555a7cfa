//go:build tools

// Package tools pins the K-ORC manager the lab runs. It lives in a module of
// its own so K-ORC keeps its own dependency versions (k8s v0.34 line).
package tools

import (
	_ "github.com/k-orc/openstack-resource-controller/v2/cmd/manager"
)
