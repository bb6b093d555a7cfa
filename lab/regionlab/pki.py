"""Certificates for the lab's API servers: one CA per cluster, as real clusters have.

ECDSA P-256 keys keep generation instant. Files are written once and reused,
so kubeconfigs stay valid across lab restarts.
"""

import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VALIDITY = datetime.timedelta(days=3650)


def write_private(path: Path, data: bytes):
    """Write a file only its owner can read (keys, kubeconfigs, passwords)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A new file, renamed over the old one: the content is never readable under a wider mode.
    temp = path.with_name(".%s.tmp" % path.name)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(temp, 0o600)
    os.replace(temp, path)


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def _name(common_name, organization=None):
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attrs)


def _builder(subject, issuer, public_key):
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY))


def ensure_cluster_pki(directory: Path, cluster: str):
    """CA, serving certificate, admin client certificate and service-account keys."""
    if (directory / "admin.crt").exists():
        return
    ca_key = _key()
    ca_name = _name("%s-ca" % cluster)
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))

    server_key = _key()
    sans = [x509.DNSName("localhost"), x509.DNSName("kubernetes"), x509.DNSName("kubernetes.default"),
            x509.DNSName("kubernetes.default.svc"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("10.0.0.1"))]
    server = (_builder(_name("kube-apiserver"), ca_name, server_key.public_key())
              .add_extension(x509.SubjectAlternativeName(sans), critical=False)
              .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA256()))

    admin_key = _key()
    admin = (_builder(_name("lab-admin", "system:masters"), ca_name, admin_key.public_key())
             .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
             .sign(ca_key, hashes.SHA256()))

    sa_key = _key()
    directory.mkdir(parents=True, exist_ok=True)
    write_private(directory / "ca.key", _key_pem(ca_key))
    (directory / "ca.crt").write_bytes(_cert_pem(ca))
    write_private(directory / "server.key", _key_pem(server_key))
    (directory / "server.crt").write_bytes(_cert_pem(server))
    write_private(directory / "sa.key", _key_pem(sa_key))
    (directory / "sa.pub").write_bytes(sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    write_private(directory / "admin.key", _key_pem(admin_key))
    # Written last: its presence marks a complete set.
    (directory / "admin.crt").write_bytes(_cert_pem(admin))


def issue_client_certificate(directory: Path, common_name, organizations, seconds):
    """A fresh client certificate signed by the cluster CA in directory, valid for `seconds`.

    As gardener-apiserver's admin kubeconfigs: NotBefore one minute back (clock skew), NotAfter
    exactly now + seconds, client-auth only. The key is ECDSA P-256 (upstream: RSA 3072), which
    keeps a request instant. Returns (certificate PEM, key PEM, NotAfter).
    """
    ca_key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), password=None)
    ca = x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes())
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    not_after = now + datetime.timedelta(seconds=seconds)
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    key = _key()
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name(attrs)).issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1)).not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return _cert_pem(cert), _key_pem(key), not_after
