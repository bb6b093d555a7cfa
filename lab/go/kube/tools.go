//go:build tools

// Package tools pins the upstream commands the lab builds: kube-apiserver,
// kube-controller-manager, kube-scheduler, kubectl and etcd. Nothing here is our own code.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
