package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"
)

func newHTTPClient(caPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
}

// readyz is true once every readiness check of the API server passes (etcd reachable,
// RBAC bootstrap roles and priority levels in place).
func readyz(ctx context.Context, client *http.Client, server, token string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+"/readyz", nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
