//go:build tools

// Package tools pins KWOK, which plays the kubelets of the lab's Nodes. It lives in a module of
// its own so KWOK keeps its own dependency versions (k8s v0.36 line).
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
