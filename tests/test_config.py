"""The config file: passwords kept outside it, in the environment or a file;
and every key means what it says, or is one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import ConfigError, load_config

BASE = '[referee]\naddress = "referee@club.test"\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "referee.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return path


def test_a_password_may_come_from_an_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLUB_IMAP_PASSWORD", "s3cret")
    config = load_config(_write(tmp_path, '[mailbox]\nkind = "imap"\nusername = "ref"\n'
                                          'password_env = "CLUB_IMAP_PASSWORD"\n'))
    assert config.mailbox.password == "s3cret"


def test_a_password_may_come_from_a_file_as_systemd_credentials_give_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = tmp_path / "credentials"
    creds.mkdir()
    (creds / "smtp-password").write_text("relay pass\n", encoding="utf-8")
    (creds / "smtp-password").chmod(0o400)  # as systemd's LoadCredential= makes it
    (tmp_path / "imap-password").write_text("imap pass", encoding="utf-8")
    (tmp_path / "imap-password").chmod(0o640)  # root's, read through the referee's group
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    config = load_config(_write(
        tmp_path, '[mailbox]\nkind = "imap"\nusername = "ref"\npassword_file = "imap-password"\n'
                  '[smtp]\npassword_file = "$CREDENTIALS_DIRECTORY/smtp-password"\n'))
    assert config.smtp.password == "relay pass"  # the trailing newline dropped
    assert config.mailbox.password == "imap pass"  # relative to the config's folder


@pytest.mark.parametrize(("keys", "message"), [
    ('password_env = "NOT_SET_ANYWHERE"',
     "[mailbox]: password_env: the environment variable NOT_SET_ANYWHERE is not set"),
    ('password_file = "missing"', "[mailbox]: password_file: cannot read "),
    ('password = "x"\npassword_file = "missing"',
     "[mailbox]: set one of password, password_file, not several"),
])
def test_a_password_that_cannot_be_had_names_the_key(
    tmp_path: Path, keys: str, message: str
) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, f'[mailbox]\nkind = "imap"\nusername = "ref"\n{keys}\n'))
    assert message in str(e.value)


def test_the_days_replies_to_strangers_are_a_count_of_mails(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, "")).limits.stranger_replies_per_day == 50
    assert load_config(_write(tmp_path, "[limits]\nstranger_replies_per_day = 0\n")
                       ).limits.stranger_replies_per_day == 0
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, "[limits]\nstranger_replies_per_day = -1\n"))
    assert "limits.stranger_replies_per_day: Input should be greater than or equal to 0" in str(
        e.value)
