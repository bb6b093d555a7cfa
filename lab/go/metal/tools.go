//go:build tools

// Package tools pins IronCore's metal-operator: its manager (cmd) runs on the lab's IronCore
// cluster, and its Redfish mock (bmc/mock/server) answers for the lab's BMCs (./redfish).
package tools

import (
	_ "github.com/ironcore-dev/metal-operator/cmd"
)
