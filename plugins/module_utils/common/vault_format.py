# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Encryption in ansible-vault's 1.1 format (AES256), so that what the collection encrypts with a passphrase of the
inventory opens with `ansible-vault view` and that passphrase, and nothing else is needed to read it.

The format: PBKDF2-HMAC-SHA256 (10000 iterations, a random 32-byte salt) derives 80 bytes - the AES-256 key, the
HMAC-SHA256 key and the CTR counter block; the plaintext, PKCS#7-padded, is encrypted with AES-256-CTR and the
ciphertext authenticated with HMAC-SHA256; the envelope is the header line and the hex of "<salt hex>\\n<hmac
hex>\\n<ciphertext hex>" in lines of 80 characters. Modules cannot import ansible.parsing.vault, so the format lives
here, on the `cryptography` package ansible-core itself requires.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
from binascii import hexlify, unhexlify, Error as HexError

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.backends import default_backend
    from cryptography.hazmat.primitives import hashes, hmac, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    IMPORT_ERROR = None
except ImportError as error:  # pragma: no cover - ansible-core requires cryptography
    IMPORT_ERROR = error

HEADER = b"$ANSIBLE_VAULT;1.1;AES256"
ITERATIONS = 10000
LINE = 80


class VaultFormatError(Exception):
    """Not an AES256 vault, or a passphrase that does not open it."""


def _to_bytes(value):
    return value if isinstance(value, bytes) else value.encode("utf-8")


def _derived(passphrase, salt):
    """(AES key, HMAC key, counter block) of the passphrase and salt."""
    derived = PBKDF2HMAC(algorithm=hashes.SHA256(), length=80, salt=salt, iterations=ITERATIONS,
                         backend=default_backend()).derive(_to_bytes(passphrase))
    return derived[:32], derived[32:64], derived[64:]


def _mac(key, data):
    mac = hmac.HMAC(key, hashes.SHA256(), backend=default_backend())
    mac.update(data)
    return mac


def encrypt(plaintext, passphrase, salt=None):
    """The vault text (bytes, ending in a newline) of plaintext (bytes or str)."""
    salt = salt or os.urandom(32)
    key, mac_key, counter = _derived(passphrase, salt)
    padder = padding.PKCS7(algorithms.AES.block_size).padder()
    padded = padder.update(_to_bytes(plaintext)) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CTR(counter), backend=default_backend()).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    body = hexlify(b"\n".join([hexlify(salt), hexlify(_mac(mac_key, ciphertext).finalize()), hexlify(ciphertext)]))
    return b"\n".join([HEADER] + [body[i:i + LINE] for i in range(0, len(body), LINE)]) + b"\n"


def decrypt(vaulttext, passphrase):
    """The plaintext (bytes) of a vault text of format 1.1 or 1.2 with AES256; VaultFormatError when it is none, or
    when the passphrase does not open it (the HMAC does not match)."""
    lines = _to_bytes(vaulttext).strip().splitlines()
    header = lines[0].strip().split(b";") if lines else []
    if len(header) < 3 or header[0] != b"$ANSIBLE_VAULT" or header[1] not in (b"1.1", b"1.2") \
            or header[2].strip() != b"AES256":
        raise VaultFormatError("not an ansible-vault text of format 1.1 or 1.2 with AES256")
    try:
        salt, mac, ciphertext = unhexlify(b"".join(line.strip() for line in lines[1:])).split(b"\n", 2)
        salt, mac, ciphertext = unhexlify(salt), unhexlify(mac), unhexlify(ciphertext)
    except (HexError, ValueError):
        raise VaultFormatError("the vault text is damaged (not hex, or not salt, HMAC and ciphertext)")
    key, mac_key, counter = _derived(passphrase, salt)
    try:
        _mac(mac_key, ciphertext).verify(mac)
    except InvalidSignature:
        raise VaultFormatError("the passphrase does not open it (its HMAC does not match)")
    decryptor = Cipher(algorithms.AES(key), modes.CTR(counter), backend=default_backend()).decryptor()
    padded = decryptor.update(ciphertext) + decryptor.finalize()
    unpadder = padding.PKCS7(algorithms.AES.block_size).unpadder()
    return unpadder.update(padded) + unpadder.finalize()
