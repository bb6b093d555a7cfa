"""common/vault_format: what it encrypts opens with ansible-vault (VaultLib) and the same passphrase, and the other
way round; a wrong passphrase, or a damaged text, is refused."""

import pytest

from ansible.parsing.vault import VaultLib, VaultSecret

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import vault_format

PASSPHRASE = "correct horse battery staple"


def vault(passphrase=PASSPHRASE):
    return VaultLib([("default", VaultSecret(passphrase.encode()))])


@pytest.mark.parametrize("plaintext", [b"", b"x", b"sixteen bytes!!!", "keys: {0: \u00e4}\n".encode() * 40])
def test_ansible_vault_opens_what_it_encrypts(plaintext):
    text = vault_format.encrypt(plaintext, PASSPHRASE)
    assert text.startswith(b"$ANSIBLE_VAULT;1.1;AES256\n") and all(len(line) <= 80 for line in text.splitlines())
    assert vault().decrypt(text) == plaintext
    assert vault_format.decrypt(text, PASSPHRASE) == plaintext


def test_it_opens_what_ansible_vault_encrypts_also_with_a_vault_id_label():
    assert vault_format.decrypt(vault().encrypt(b"fernet"), PASSPHRASE) == b"fernet"
    labelled = vault().encrypt(b"fernet", vault_id="region")
    assert labelled.startswith(b"$ANSIBLE_VAULT;1.2;AES256;region")
    assert vault_format.decrypt(labelled, PASSPHRASE) == b"fernet"


def test_each_encryption_has_its_own_salt():
    assert vault_format.encrypt(b"same", PASSPHRASE) != vault_format.encrypt(b"same", PASSPHRASE)


def test_a_wrong_passphrase_or_a_damaged_text_is_refused():
    text = vault_format.encrypt(b"credential keys", PASSPHRASE)
    with pytest.raises(vault_format.VaultFormatError, match="passphrase does not open it"):
        vault_format.decrypt(text, "another passphrase")
    lines = text.splitlines()
    flipped = lines[-1][:-1] + (b"0" if lines[-1][-1:] != b"0" else b"1")
    with pytest.raises(vault_format.VaultFormatError):
        vault_format.decrypt(b"\n".join(lines[:-1] + [flipped]), PASSPHRASE)
    with pytest.raises(vault_format.VaultFormatError, match="not an ansible-vault text"):
        vault_format.decrypt(b"plain text", PASSPHRASE)
    with pytest.raises(vault_format.VaultFormatError, match="damaged"):
        vault_format.decrypt(b"$ANSIBLE_VAULT;1.1;AES256\nzz", PASSPHRASE)
