// Command redfish answers for the lab's BMCs: one metal-operator Redfish mock (bmc/mock/server of
// github.com/ironcore-dev/metal-operator, authentication on) per BMC, each on its own address.
//
// The lab writes -config: every BMC's address, its login and the Redfish fields that make it the lab's
// machine (PATCHed into the mock as a client would). The mock's own accounts are removed, so only the
// BMC's login is accepted and a wrong password is answered 401, as a BMC answers it. Each system's
// PowerState is kept in -state across restarts, as a machine keeps its power when its BMC restarts.
// -ready is written once every BMC answers with its facts.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/ironcore-dev/metal-operator/bmc/mock/server"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// The mock's built-in administrator, used once to add the BMC's login.
const (
	builtinUser     = "admin"
	builtinPassword = "adminpass"
	accounts        = "/redfish/v1/AccountService/Accounts"
)

// The mock's built-in accounts (data/AccountService/Accounts/1 and 2), removed after seeding.
var builtinAccounts = []string{accounts + "/1", accounts + "/2"}

type bmcConfig struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Username string `json:"username"`
	Password string `json:"password"`
	// System is the Redfish path of the machine's system; its PowerState is persisted.
	System string `json:"system"`
	// Patches: Redfish path -> fields merged into that resource.
	Patches map[string]map[string]any `json:"patches"`
}

type labConfig struct {
	BMCs []bmcConfig `json:"bmcs"`
}

type mock struct {
	bmcConfig
	client *http.Client
}

func (m *mock) url(path string) string { return "http://" + m.Address + path }

func (m *mock) do(method, path, user, password string, body any) (int, []byte, error) {
	var reader *bytes.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		reader = bytes.NewReader(data)
	} else {
		reader = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, m.url(path), reader)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close() //nolint:errcheck
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes(), nil
}

func (m *mock) must(method, path, user, password string, body any, want ...int) error {
	code, out, err := m.do(method, path, user, password, body)
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", m.Name, method, path, err)
	}
	for _, ok := range want {
		if code == ok {
			return nil
		}
	}
	return fmt.Errorf("%s %s %s: HTTP %d: %s", m.Name, method, path, code, out)
}

// seed adds the BMC's login, makes the mock the lab's machine and removes the built-in accounts.
func (m *mock) seed(power string) error {
	account := map[string]any{"UserName": m.Username, "Password": m.Password, "RoleId": "Administrator",
		"Enabled": true}
	if err := m.must(http.MethodPost, accounts, builtinUser, builtinPassword, account, http.StatusCreated); err != nil {
		return err
	}
	for path, fields := range m.Patches {
		if path == m.System && power != "" {
			fields["PowerState"] = power
		}
		if err := m.must(http.MethodPatch, path, m.Username, m.Password, fields, http.StatusNoContent); err != nil {
			return err
		}
	}
	for _, path := range builtinAccounts {
		if err := m.must(http.MethodDelete, path, m.Username, m.Password, nil, http.StatusNoContent); err != nil {
			return err
		}
	}
	return nil
}

func (m *mock) power() string {
	code, out, err := m.do(http.MethodGet, m.System, m.Username, m.Password, nil)
	if err != nil || code != http.StatusOK {
		return ""
	}
	var system struct {
		PowerState string `json:"PowerState"`
	}
	if json.Unmarshal(out, &system) != nil {
		return ""
	}
	return system.PowerState
}

// quietReads drops the mock's log line for each GET (the power poll and the operator's reads would
// fill the log); changes (POST, PATCH, DELETE) are still logged.
type quietReads struct{ logr.LogSink }

func (q quietReads) Info(level int, msg string, kv ...any) {
	if msg == "Received request" {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == "method" && kv[i+1] == http.MethodGet {
				return
			}
		}
	}
	q.LogSink.Info(level, msg, kv...)
}

func (q quietReads) WithValues(kv ...any) logr.LogSink {
	return quietReads{q.LogSink.WithValues(kv...)}
}

func (q quietReads) WithName(name string) logr.LogSink { return quietReads{q.LogSink.WithName(name)} }

func waitListening(address string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", address, 200*time.Millisecond)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readJSON(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func writeJSON(path string, value any) error {
	data, err := json.MarshalIndent(value, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// keepPower records every system's PowerState in statePath when it changes.
func keepPower(ctx context.Context, log logr.Logger, mocks []*mock, powers map[string]string, statePath string) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		changed := false
		for _, m := range mocks {
			if now := m.power(); now != "" && now != powers[m.Name] {
				powers[m.Name] = now
				changed = true
			}
		}
		if changed {
			if err := writeJSON(statePath, powers); err != nil {
				log.Error(err, "Failed to record power states")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func main() {
	var configPath, statePath, readyPath string
	flag.StringVar(&configPath, "config", "", "The lab's BMCs (JSON).")
	flag.StringVar(&statePath, "state", "", "Where the systems' power states are kept.")
	flag.StringVar(&readyPath, "ready", "", "Written once every BMC is seeded.")
	// The configuration's digest, unused: a changed configuration changes the command line, and the lab
	// restarts the BMCs (processes.ensure).
	flag.String("digest", "", "Digest of the configuration.")
	flag.Parse()

	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	log := ctrl.Log.WithName("lab-redfish")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var cfg labConfig
	if err := readJSON(configPath, &cfg); err != nil {
		log.Error(err, "Failed to read the configuration")
		os.Exit(1)
	}
	powers := map[string]string{}
	if err := readJSON(statePath, &powers); err != nil && !os.IsNotExist(err) {
		log.Error(err, "Failed to read the power states, starting from the configuration")
	}
	_ = os.Remove(readyPath)

	var wg sync.WaitGroup
	mocks := make([]*mock, 0, len(cfg.BMCs))
	for _, bmc := range cfg.BMCs {
		m := &mock{bmcConfig: bmc, client: &http.Client{Timeout: 5 * time.Second}}
		mocks = append(mocks, m)
		mockLog := logr.New(quietReads{log.GetSink()}).WithValues("bmc", bmc.Name)
		srv := server.NewMockServer(mockLog, bmc.Address, server.WithAuth())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Start(ctx); err != nil {
				log.Error(err, "Mock server failed", "bmc", bmc.Name)
			}
		}()
	}
	for _, m := range mocks {
		if err := waitListening(m.Address, 10*time.Second); err != nil {
			log.Error(err, "Mock server does not listen", "bmc", m.Name, "address", m.Address)
			os.Exit(1)
		}
		if err := m.seed(powers[m.Name]); err != nil {
			log.Error(err, "Failed to seed the mock", "bmc", m.Name)
			os.Exit(1)
		}
		log.Info("BMC ready", "bmc", m.Name, "address", m.Address)
	}
	if err := os.WriteFile(readyPath, []byte("ready\n"), 0o600); err != nil {
		log.Error(err, "Failed to write the ready file")
		os.Exit(1)
	}
	keepPower(ctx, log, mocks, powers, statePath)
	wg.Wait()
}
