package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiFiles names the certificate and key files the API server is started with. They are kept in
// <dir>/pki and reused on a restart, so kubeconfigs written earlier stay valid.
type pkiFiles struct {
	caCert, caKey           string
	servingCert, servingKey string
	saPrivate, saPublic     string
	caPEM                   []byte
}

func ensurePKI(dir string) (*pkiFiles, error) {
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return nil, err
	}
	p := &pkiFiles{
		caCert:      filepath.Join(pkiDir, "ca.crt"),
		caKey:       filepath.Join(pkiDir, "ca.key"),
		servingCert: filepath.Join(pkiDir, "apiserver.crt"),
		servingKey:  filepath.Join(pkiDir, "apiserver.key"),
		saPrivate:   filepath.Join(pkiDir, "sa.key"),
		saPublic:    filepath.Join(pkiDir, "sa.pub"),
	}
	if caPEM, err := os.ReadFile(p.caCert); err == nil {
		if _, err := os.Stat(p.saPublic); err == nil {
			p.caPEM = caPEM
			return p, nil
		}
	}
	if err := p.generate(); err != nil {
		return nil, fmt.Errorf("generate certificates in %q: %w", pkiDir, err)
	}
	return p, nil
}

func (p *pkiFiles) generate() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubelet-pods-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}

	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	writes := []struct {
		path  string
		block *pem.Block
	}{
		{p.caCert, &pem.Block{Type: "CERTIFICATE", Bytes: caDER}},
		{p.caKey, ecKeyBlock(caKey)},
		{p.servingCert, &pem.Block{Type: "CERTIFICATE", Bytes: servingDER}},
		{p.servingKey, ecKeyBlock(servingKey)},
		{p.saPrivate, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}},
		{p.saPublic, &pem.Block{Type: "PUBLIC KEY", Bytes: saPub}},
	}
	for _, w := range writes {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(w.block), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func ecKeyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for unsupported curves; P-256 is supported
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}
