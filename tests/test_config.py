"""The config file: passwords kept outside it, in the environment or a file;
and every key means what it says, or is one line naming it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import referee.config as config_module
from referee.config import ConfigError, as_written, load_config
from referee.problems import EX_CONFIG

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


@pytest.mark.parametrize(("written", "meant"), [
    ('"3d"', timedelta(days=3)),
    ('"1d12h"', timedelta(hours=36)),
    ('"2w"', timedelta(weeks=2)),
    ('"90m"', timedelta(minutes=90)),
    ('" 12 h "', timedelta(hours=12)),
])
def test_a_duration_with_its_unit_is_what_it_says(tmp_path: Path, written: str,
                                                   meant: timedelta) -> None:
    config = load_config(_write(tmp_path, f"[smtp]\ngive_up_after = {written}\n"))
    assert config.smtp.give_up_after == meant


@pytest.mark.parametrize(("written", "said"), [
    ("3", 'smtp.give_up_after: 3 needs a unit; write "3d" (days), "3h" (hours), "3m" '
          '(minutes) or "3s" (seconds)'),
    ("3.0", 'smtp.give_up_after: 3 needs a unit; write "3d" (days)'),
    ('"3"', 'smtp.give_up_after: 3 needs a unit; write "3d" (days)'),
    ("0.5", 'smtp.give_up_after: 0.5 needs a unit, in whole numbers; write e.g. "1d12h"'),
    ("-1", "smtp.give_up_after: -1 is less than nothing; write a duration with its unit"),
    ("true", 'smtp.give_up_after: True is not a duration; write e.g. "3d"'),
    ("2026-01-01", "smtp.give_up_after: datetime.date(2026, 1, 1) is not a duration"),
    ('"3 days"', "smtp.give_up_after: '3 days' is not a duration; write e.g. 3d, 12h"),
    ('"0s"', "smtp.give_up_after: '0s' must be more than nothing and at most 366 days"),
    ('"400d"', "smtp.give_up_after: '400d' must be more than nothing and at most 366 days"),
])
def test_a_duration_that_is_not_one_with_its_unit_names_the_key(
        tmp_path: Path, written: str, said: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, f"[smtp]\ngive_up_after = {written}\n"))
    assert said in str(e.value)
    assert e.value.exit_code == EX_CONFIG


def test_every_duration_key_needs_its_unit(tmp_path: Path) -> None:
    """Each key the file documents as a duration, at once: one line names all."""
    keys = {"mailbox": ["poll_interval", "idle_timeout"], "smtp": ["give_up_after"],
            "deadlines": ["default", "reminder", "away_max"]}
    text = "".join(f"[{section}]\n" + "".join(f"{k} = 2\n" for k in names)
                   for section, names in keys.items())
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, text))
    said = str(e.value)
    assert said.count("\n") == 0
    for section, names in keys.items():
        for key in names:
            assert f'{section}.{key}: 2 needs a unit; write "2d" (days)' in said


@pytest.mark.parametrize(("written", "seconds", "warned"), [
    ('"90s"', 90.0, False), ('"2m"', 120.0, False), ("30", 30.0, True), ("7.5", 7.5, True)])
def test_the_smtp_timeout_takes_its_unit_and_a_bare_number_is_seconds_with_a_warning(
        tmp_path: Path, written: str, seconds: float, warned: bool) -> None:
    config = load_config(_write(tmp_path, f"[smtp]\ntimeout = {written}\n"))
    assert config.smtp.timeout == seconds
    assert [w for w in config.warnings if "smtp.timeout" in w] == (
        [f"{tmp_path / 'referee.toml'}: smtp.timeout: {written} has no unit and is read as "
         f'seconds; write timeout = "{round(seconds)}s"'] if warned else [])


def test_no_player_may_ask_to_be_away_when_away_max_is_nothing(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, '[deadlines]\naway_max = "0s"\n')
                       ).deadlines.away_max == timedelta(0)


@pytest.mark.parametrize(("deadlines", "fine"), [
    ('default = "2d"\nreminder = "1d"', True),
    ('default = "1h"\nreminder = "59m"', True),
    ('default = "1d"', False),  # the default reminder, 1d
    ('default = "1d"\nreminder = "2d"', False),
])
def test_a_reminder_comes_before_its_deadline(tmp_path: Path, deadlines: str,
                                              fine: bool) -> None:
    path = _write(tmp_path, f"[deadlines]\n{deadlines}\n")
    if fine:
        load_config(path)
        return
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "[deadlines]: reminder = " in str(e.value)
    assert "the reminder would go out as each turn opens" in str(e.value)


def test_a_duration_reads_back_as_written() -> None:
    assert [as_written(d) for d in (timedelta(days=1, hours=12), timedelta(minutes=20),
                                    timedelta(days=2) / 3, timedelta(0))] == [
        "1d12h", "20m", "16h", "0s"]


def _referee_keys(tmp_path: Path, keys: str) -> Path:
    """A config whose [referee] section holds ``keys`` too."""
    path = tmp_path / "referee.toml"
    path.write_text(BASE + keys, encoding="utf-8")
    return path


def test_several_workers_need_postgresql(tmp_path: Path) -> None:
    """On SQLite "many" was "one" in silence: a second poll found the lock
    taken (75), a second daemon stopped."""
    pg = 'database = "postgresql+psycopg://referee@db.club.test/referee"\n'
    assert load_config(_referee_keys(tmp_path, f'workers = "many"\n{pg}')
                       ).referee.workers == "many"
    for database in ("", 'database = "sqlite:////var/lib/referee/referee.db"\n'):
        with pytest.raises(ConfigError) as e:
            load_config(_referee_keys(tmp_path, f'workers = "many"\n{database}'))
        assert '[referee]: workers = "many" needs PostgreSQL' in str(e.value)


@pytest.mark.parametrize("mode", [0o600, 0o400, 0o640, 0o440])
def test_a_password_file_of_its_owner_or_group_is_read(tmp_path: Path, mode: int) -> None:
    (tmp_path / "pw").write_text("pass\n", encoding="utf-8")
    (tmp_path / "pw").chmod(mode)
    assert load_config(_write(tmp_path, '[smtp]\npassword_file = "pw"\n')
                       ).smtp.password == "pass"


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o444, 0o666])
def test_a_password_file_every_user_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    (tmp_path / "pw").write_text("pass\n", encoding="utf-8")
    (tmp_path / "pw").chmod(mode)
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, '[smtp]\npassword_file = "pw"\n'))
    assert str(e.value).endswith(
        f"[smtp]: password_file: every user of this machine may read {tmp_path}/pw (mode "
        f"{mode:04o}); chmod 600 {tmp_path}/pw (or 640, with the referee's user in its group)")
    assert "pass" not in str(e.value).replace("password", "")
    assert e.value.exit_code == EX_CONFIG


def test_a_docker_secret_is_read_as_docker_makes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Docker mounts secrets 0444 in a tmpfs of the container's own."""
    secrets = tmp_path / "run-secrets"
    secrets.mkdir()
    (secrets / "smtp-password").write_text("pass", encoding="utf-8")
    (secrets / "smtp-password").chmod(0o444)
    monkeypatch.setattr(config_module, "DOCKER_SECRETS", secrets)
    assert load_config(_write(tmp_path, f'[smtp]\npassword_file = "{secrets}/smtp-password"\n'
                              )).smtp.password == "pass"


def test_an_empty_path_is_none_where_none_is_meant(tmp_path: Path) -> None:
    """``[web] path = ""`` wrote the pages into the config's own folder, and
    ``password_file = ""`` tried to read that folder."""
    config = load_config(_write(tmp_path, '[web]\npath = ""\n[smtp]\npassword_file = ""\n'))
    assert (config.web.path, config.smtp.password_file, config.smtp.password) == (
        None, None, "")
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, '[mailbox]\npath = " "\n'))
    assert "mailbox.path: is empty (it would be the config's own folder)" in str(e.value)


@pytest.mark.parametrize(("keys", "said"), [
    ('[mailbox]\nkind = "imap"\nusername = "ref"\nhost = ""\n',
     '[mailbox]: host is empty; name the IMAP server (kind = "imap"), like mail.example.org'),
    ('[smtp]\nkind = "smtp"\nhost = " "\n',
     '[smtp]: host is empty; name the SMTP server (kind = "smtp"), like mail.example.org'),
    ('[smtp]\nhost = "smtp://relay.club.test:25"\n',
     "smtp.host: 'smtp://relay.club.test:25' is not a host name"),
    ('[mailbox]\nhost = "imap.club.test:993"\n',
     "mailbox.host: 'imap.club.test:993' holds a port; write host = 'imap.club.test' and "
     "port = 993"),
    ('[mailbox]\nhost = "imap club.test"\n', "mailbox.host: 'imap club.test' is not a host"),
])
def test_a_host_is_a_name_alone(tmp_path: Path, keys: str, said: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, keys))
    assert said in str(e.value)


def test_an_ipv6_address_is_a_host(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, '[smtp]\nhost = "::1"\n')).smtp.host == "::1"


def test_a_list_id_is_the_lists_own(tmp_path: Path) -> None:
    lists = 'public_list = "players@club.test"\n'
    for given in ("players.club.test", "<players.club.test>"):
        config = load_config(_referee_keys(tmp_path, f'{lists}list_id = "{given}"\n'))
        assert config.referee.list_id == given
    for wrong in ("players@club.test", "players", "players club.test"):
        with pytest.raises(ConfigError) as e:
            load_config(_referee_keys(tmp_path, f'{lists}list_id = "{wrong}"\n'))
        assert f"[referee]: list_id: {wrong!r} is no List-Id (RFC 2919" in str(e.value)


def test_the_authserv_id_is_one_word(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, '[auth]\nauthserv_id = " mx.club.test "\n')
                       ).auth.authserv_id == "mx.club.test"
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, '[auth]\nauthserv_id = "mx.club.test; spf=pass"\n'))
    assert "[auth]: authserv_id: 'mx.club.test; spf=pass' is more than an authserv-id" in str(
        e.value)


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    path = _write(tmp_path, '[deadlines]\ndefault = "2d"\n')
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_config(path).deadlines.default == timedelta(days=2)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_says_to_save_as_utf8(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "referee.toml"
    path.write_bytes(BASE.encode(encoding))
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value) == (f'{path}: UTF-16 text (what Notepad calls "Unicode"), not UTF-8; '
                            "save it as UTF-8")


def test_a_byte_order_mark_does_not_shift_where_a_bad_byte_is(tmp_path: Path) -> None:
    path = tmp_path / "referee.toml"
    path.write_bytes(b"\xef\xbb\xbf# caf\xe9\n" + BASE.encode())
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value) == f"{path}: not UTF-8 text (byte 0xe9 at offset 8); save it as UTF-8"


def test_the_club_section_has_its_defaults(tmp_path: Path) -> None:
    club = load_config(_write(tmp_path, "")).club
    assert (club.open_tables, club.table_days, club.invites_per_day,
            club.tables_per_member) == ("members", 14, 10, 3)
    club = load_config(_write(tmp_path, '[club]\nopen_tables = "anyone"\ntable_days = 3\n'
                                        "invites_per_day = 0\ntables_per_member = 1\n")).club
    assert (club.open_tables, club.table_days, club.invites_per_day,
            club.tables_per_member) == ("anyone", 3, 0, 1)


@pytest.mark.parametrize(("keys", "message"), [
    ('open_tables = "everyone"',
     "club.open_tables: Input should be 'anyone', 'members' or 'operator'"),
    ("table_days = 0", "club.table_days: Input should be greater than or equal to 1"),
    ("table_days = 400", "club.table_days: Input should be less than or equal to 366"),
    ("invites_per_day = -1",
     "club.invites_per_day: Input should be greater than or equal to 0"),
    ("tables_per_member = 0",
     "club.tables_per_member: Input should be greater than or equal to 1"),
    ("tables = 3", "club.tables: unknown key (see config.example.toml for the keys)"),
    ('season = "month"', "club.season: Input should be 'quarter', 'year' or 'none'"),
    ('standings = "maybe"', "club.standings: Input should be a valid boolean"),
])
def test_a_bad_club_key_is_one_line_naming_it(tmp_path: Path, keys: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, f"[club]\n{keys}\n"))
    assert message in str(e.value) and "\n" not in str(e.value)
    assert e.value.exit_code == EX_CONFIG


def test_the_club_keeps_no_standings_unless_asked(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, ""))
    assert (config.club.standings, config.club.season) == (False, "none")
    config = load_config(_write(tmp_path, '[club]\nstandings = true\nseason = "quarter"\n'))
    assert (config.club.standings, config.club.season) == (True, "quarter")


def test_check_says_what_the_standings_keys_do(tmp_path: Path) -> None:
    from referee.check import check_standings

    assert check_standings(load_config(_write(tmp_path, ""))) == []
    (line,) = check_standings(load_config(_write(tmp_path, '[club]\nseason = "year"\n')))
    assert (line.verdict, line.text) == ("WARN", '[club] season = "year" does nothing while '
                                         "[club] standings = false; set standings = true to "
                                         "keep standings")
    (line,) = check_standings(load_config(_write(
        tmp_path, '[club]\nstandings = true\nseason = "quarter"\n')))
    assert line.verdict == "OK"
    assert line.text.startswith("[club] standings on: tables of all time and by quarter "
                                "(openskill 6.")
