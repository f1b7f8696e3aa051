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
	// kubeletClientCert/Key: the identity the API server presents to kubelets (node proxy,
	// pods/log), kube-apiserver-kubelet-client in system:masters, as kubeadm sets it up.
	kubeletClientCert, kubeletClientKey string
	// frontProxyClientCert/Key: the identity the aggregator presents to extension API servers
	// (metrics-server), which trust the user it names in request headers.
	frontProxyClientCert, frontProxyClientKey string
	caPEM                                     []byte
	// extraIPs are further addresses the serving certificate must name (--extra-address).
	extraIPs []net.IP
}

func ensurePKI(dir string, extraIPs []net.IP) (*pkiFiles, error) {
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return nil, err
	}
	p := &pkiFiles{
		caCert:               filepath.Join(pkiDir, "ca.crt"),
		caKey:                filepath.Join(pkiDir, "ca.key"),
		servingCert:          filepath.Join(pkiDir, "apiserver.crt"),
		servingKey:           filepath.Join(pkiDir, "apiserver.key"),
		saPrivate:            filepath.Join(pkiDir, "sa.key"),
		saPublic:             filepath.Join(pkiDir, "sa.pub"),
		kubeletClientCert:    filepath.Join(pkiDir, "apiserver-kubelet-client.crt"),
		kubeletClientKey:     filepath.Join(pkiDir, "apiserver-kubelet-client.key"),
		frontProxyClientCert: filepath.Join(pkiDir, "front-proxy-client.crt"),
		frontProxyClientKey:  filepath.Join(pkiDir, "front-proxy-client.key"),
		extraIPs:             extraIPs,
	}
	if caPEM, err := os.ReadFile(p.caCert); err == nil {
		if _, err := os.Stat(p.saPublic); err == nil {
			p.caPEM = caPEM
			// A directory from an older version, or a start with another --extra-address:
			// add what is missing, signed by the CA already there.
			if err := p.completeLeaves(); err != nil {
				return nil, fmt.Errorf("complete certificates in %q: %w", pkiDir, err)
			}
			return p, nil
		}
	}
	if err := p.generate(); err != nil {
		return nil, fmt.Errorf("generate certificates in %q: %w", pkiDir, err)
	}
	return p, nil
}

// completeLeaves makes the kubelet client certificate if it is missing, and the serving
// certificate again if it does not name every extra address.
func (p *pkiFiles) completeLeaves() error {
	ca, caKey, err := p.loadCA()
	if err != nil {
		return err
	}
	if _, err := os.Stat(p.kubeletClientCert); err != nil {
		if err := p.writeLeaf(ca, caKey, p.kubeletClientCert, p.kubeletClientKey, kubeletClientTemplate()); err != nil {
			return err
		}
	}
	if _, err := os.Stat(p.frontProxyClientCert); err != nil {
		if err := p.writeLeaf(ca, caKey, p.frontProxyClientCert, p.frontProxyClientKey, frontProxyClientTemplate()); err != nil {
			return err
		}
	}
	if servingPEM, err := os.ReadFile(p.servingCert); err == nil {
		if block, _ := pem.Decode(servingPEM); block != nil {
			if cert, err := x509.ParseCertificate(block.Bytes); err == nil && namesAll(cert, p.extraIPs) {
				return nil
			}
		}
	}
	return p.writeLeaf(ca, caKey, p.servingCert, p.servingKey, p.servingTemplate())
}

func namesAll(cert *x509.Certificate, ips []net.IP) bool {
	for _, ip := range ips {
		found := false
		for _, have := range cert.IPAddresses {
			found = found || have.Equal(ip)
		}
		if !found {
			return false
		}
	}
	return true
}

func (p *pkiFiles) loadCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(p.caPEM)
	if block == nil {
		return nil, nil, fmt.Errorf("%s: no PEM certificate", p.caCert)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyBlock, _ := pem.Decode(keyPEM)
	if keyBlock == nil {
		return nil, nil, fmt.Errorf("%s: no PEM key", p.caKey)
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	return ca, key, err
}

// writeLeaf makes a key and a certificate from template signed by the CA, and writes both.
func (p *pkiFiles) writeLeaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string, template *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	template.SerialNumber = serial.Add(serial, big.NewInt(16))
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyPath, pem.EncodeToMemory(ecKeyBlock(key)), 0o600)
}

func (p *pkiFiles) servingTemplate() *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: append([]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")}, p.extraIPs...),
	}
}

func kubeletClientTemplate() *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// frontProxyClientTemplate is kubeadm's front-proxy-client, signed here by the cluster CA
// (kubeadm has a CA of its own for it): --requestheader-allowed-names admits only this name.
func frontProxyClientTemplate() *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: "front-proxy-client"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
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
		{p.saPrivate, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}},
		{p.saPublic, &pem.Block{Type: "PUBLIC KEY", Bytes: saPub}},
	}
	for _, w := range writes {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(w.block), 0o600); err != nil {
			return err
		}
	}
	if err := p.writeLeaf(caCert, caKey, p.servingCert, p.servingKey, p.servingTemplate()); err != nil {
		return err
	}
	if err := p.writeLeaf(caCert, caKey, p.kubeletClientCert, p.kubeletClientKey, kubeletClientTemplate()); err != nil {
		return err
	}
	return p.writeLeaf(caCert, caKey, p.frontProxyClientCert, p.frontProxyClientKey, frontProxyClientTemplate())
}

func ecKeyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for unsupported curves; P-256 is supported
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}
