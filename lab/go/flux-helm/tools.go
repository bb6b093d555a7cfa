//go:build tools

// Package tools pins the Flux helm-controller the lab runs. A module of its
// own, so it keeps its own dependency versions apart from kube and K-ORC.
package tools

import (
	_ "github.com/fluxcd/helm-controller"
)
