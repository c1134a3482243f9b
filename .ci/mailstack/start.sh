#!/bin/bash
# Start a private Postfix (SMTP) + Dovecot (IMAP, LMTP) on 127.0.0.1 with all state in DIR.
#
#   .ci/mailstack/start.sh DIR
#
# Run as root, after .ci/mailstack/install.sh.  Ports are picked free unless given as
# MAILSTACK_SMTP_PORT / MAILSTACK_IMAP_PORT / MAILSTACK_LMTP_PORT.  On success it prints
# KEY=VALUE lines on stdout (and writes them to DIR/ports.env):
#   MAILSTACK_DIR, MAIL_HOST, SMTP_PORT, IMAP_PORT, LMTP_PORT, MAIL_DOMAIN, MAIL_PASSWORD,
#   MAIL_USERS
# Everything else goes to stderr.  Domain example.test; every user's password is "secret";
# players@example.test expands to every player and the referee; other domains are refused
# at RCPT.  Stop with .ci/mailstack/stop.sh DIR.  Background: shared/MAILSTACK.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DOMAIN=example.test
PASSWORD=secret
PLAYERS=(alice bob carol dave erin frank)
USERS=(referee "${PLAYERS[@]}" list-owner)
LIST=players

die() { echo "mailstack start: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 DIR"
[ "$(id -u)" -eq 0 ] || die "must run as root (Dovecot switches to the vmail user)"
if ! command -v dovecot >/dev/null || [ ! -x /usr/sbin/postfix ]; then
    die "Postfix/Dovecot not installed: run .ci/mailstack/install.sh as root"
fi
getent passwd vmail >/dev/null || die "no system user vmail: run .ci/mailstack/install.sh"

DIR=$(realpath -m -- "$1")
# Dovecot binds unix sockets by absolute path (max 107 bytes); the longest is
# DIR/dovecot/run/token-login/imap-urlauth (MAILSTACK.md pitfall 10).
[ ${#DIR} -le 70 ] || die "DIR path too long (${#DIR} > 70 chars): $DIR"
case "$DIR" in *[[:space:]]*) die "DIR path must not contain white space: $DIR" ;; esac
mkdir -p -- "$DIR"
DIR=$(realpath -e -- "$DIR")
chmod 0755 "$DIR"
# The daemons' users (postfix, dovecot, vmail) must be able to walk down to DIR: a 0700
# parent such as /root or /tmp/pytest-of-root cannot be fixed from below (pitfall 9).
runuser -u vmail -- test -x "$DIR/." \
    || die "DIR is not reachable by unprivileged users (a parent directory is not" \
           "world-searchable, e.g. mode 0700): $DIR"

# A previous run may have left daemons in this DIR: stop them first.
if [ -e "$DIR/postfix/queue/pid/master.pid" ] || [ -e "$DIR/dovecot/run/master.pid" ]; then
    bash "$HERE/stop.sh" "$DIR" >&2 || true
fi

VMAIL_UID=$(id -u vmail)
VMAIL_GID=$(id -g vmail)

pick_ports() {
    # Bind all three at once so they differ; a small race with other programs remains,
    # handled by retrying the start when ports were not given explicitly.
    python3 - <<'PY'
import socket
socks = []
for _ in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
PY
}

write_configs() {
    local pf="$DIR/postfix" dc="$DIR/dovecot" u
    rm -rf "${pf:?}/etc" "${dc:?}/dovecot.conf" "$dc/passwd"
    mkdir -p "$pf/etc" "$pf/queue" "$pf/data" "$dc/run" "$dc/state" "$DIR/mail/$DOMAIN"
    chown root:root "$pf" "$pf/etc" "$pf/queue"
    chmod 0755 "$pf" "$pf/etc" "$pf/queue" "$dc"
    chown postfix: "$pf/data"
    chmod 0700 "$pf/data"
    chown "$VMAIL_UID:$VMAIL_GID" "$DIR/mail" "$DIR/mail/$DOMAIN"
    chmod 0750 "$DIR/mail" "$DIR/mail/$DOMAIN"

    # ---- Postfix -------------------------------------------------------------------
    cat > "$pf/etc/main.cf" <<EOF
# Private test instance written by .ci/mailstack/start.sh: do not edit, it is rewritten.
compatibility_level = 3.6
config_directory = $pf/etc
queue_directory = $pf/queue
data_directory = $pf/data
command_directory = /usr/sbin
daemon_directory = /usr/lib/postfix/sbin
meta_directory = /etc/postfix
shlib_directory = /usr/lib/postfix
mail_owner = postfix
setgid_group = postdrop
maillog_file = $pf/postfix.log
maillog_file_prefixes = $pf
syslog_name = postfix-mailstack

myhostname = mail.$DOMAIN
mydomain = $DOMAIN
myorigin = \$mydomain
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_banner = \$myhostname ESMTP mailstack
biff = no
append_dot_mydomain = no
alias_maps =
alias_database =
local_recipient_maps =
smtputf8_enable = yes
message_size_limit = 52428800

virtual_mailbox_domains = $DOMAIN
virtual_mailbox_maps = texthash:$pf/etc/vmailbox
virtual_alias_maps = texthash:$pf/etc/virtual
virtual_transport = lmtp:inet:127.0.0.1:$LMTP_PORT
recipient_delimiter = +

# Nothing leaves the machine: no relaying, and every non-local transport is an error.
relay_domains =
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_recipient_restrictions = reject_unauth_destination
default_transport = error:5.7.1 mailstack delivers only to $DOMAIN
relay_transport = error:5.7.1 mailstack delivers only to $DOMAIN
local_transport = error:5.1.1 mailstack has no local delivery
unknown_virtual_mailbox_reject_code = 550

# A test stack: no artificial delays, quick retries.
smtpd_error_sleep_time = 0
smtpd_soft_error_limit = 100
smtpd_hard_error_limit = 200
in_flow_delay = 0
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 5s
delay_warning_time = 0
lmtp_connection_cache_on_demand = yes
EOF

    # Chroot column "n" everywhere (pitfall 4); no smtp/relay client at all.
    cat > "$pf/etc/master.cf" <<EOF
# service type  private unpriv  chroot  wakeup  maxproc command + args
127.0.0.1:$SMTP_PORT inet n -   n       -       -       smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF

    : > "$pf/etc/vmailbox"
    for u in "${USERS[@]}"; do
        printf '%s@%s\t%s/%s/\n' "$u" "$DOMAIN" "$DOMAIN" "$u" >> "$pf/etc/vmailbox"
    done
    {
        printf '%s@%s\t' "$LIST" "$DOMAIN"
        local sep=""
        for u in "${PLAYERS[@]}" referee; do printf '%s%s@%s' "$sep" "$u" "$DOMAIN"; sep=", "; done
        printf '\n'
        # An address that is accepted at RCPT and then fails in delivery, so
        # that Postfix mails a real delivery status notification (RFC 3464)
        # to the envelope sender.
        printf 'ghost@%s\tghost@nowhere.invalid\n' "$DOMAIN"
    } > "$pf/etc/virtual"
    chmod 0644 "$pf/etc/"*

    # ---- Dovecot -------------------------------------------------------------------
    : > "$dc/passwd"
    for u in "${USERS[@]}"; do
        printf '%s:{PLAIN}%s::::::\n' "$u" "$PASSWORD" >> "$dc/passwd"
    done
    chown root:dovecot "$dc/passwd"
    chmod 0640 "$dc/passwd"

    cat > "$dc/dovecot.conf" <<EOF
# Private test instance written by .ci/mailstack/start.sh: do not edit, it is rewritten.
base_dir = $dc/run
state_dir = $dc/state
instance_name = mailstack
log_path = $dc/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
shutdown_clients = yes
verbose_proctitle = no
default_login_user = dovenull
default_internal_user = dovecot
first_valid_uid = $VMAIL_UID
last_valid_uid = $VMAIL_UID
first_valid_gid = $VMAIL_GID
last_valid_gid = $VMAIL_GID
mail_location = maildir:~/Maildir
mail_fsync = never
recipient_delimiter = +
lmtp_save_to_detail_mailbox = no
postmaster_address = postmaster@$DOMAIN
# Dovecot's keepalive during IDLE ("* OK Still here", every 2 min by default)
# would wake a client that missed the news of a mail: later than any test
# waits (tests/mailstack.py GIVE_UP), so that a missed mail is a failure.
imap_idle_notify_interval = 30 mins
hostname = mail.$DOMAIN

namespace inbox {
  inbox = yes
  separator = /
}

# Log in as "alice" or "alice@$DOMAIN": %n drops the domain.
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%n $dc/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%n $dc/passwd
  default_fields = uid=$VMAIL_UID gid=$VMAIL_GID home=$DIR/mail/$DOMAIN/%n
}

service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $LMTP_PORT
  }
}
EOF
    chmod 0644 "$dc/dovecot.conf"

    # Postfix ignores files changed within the last ~1 s and re-polls every 300 ms
    # (pitfall 2): back-date them so the start is immediate.
    touch -d '-1 minute' "$pf/etc/"* "$dc/dovecot.conf" "$dc/passwd"
}

# Probe a TCP server: connect, expect a greeting starting with $2, say $3 and leave.
probe() (
    port=$1 expect=$2 bye=$3 line=""
    exec 2>/dev/null 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    if IFS= read -r -t 2 line <&3 && [[ "$line" == "$expect"* ]]; then
        printf '%s\r\n' "$bye" >&3 2>/dev/null || true
        exit 0
    fi
    exit 1
)

wait_ready() {
    local deadline=$((SECONDS + 60)) ok  # a hang guard: a busy machine is slow to start
    while [ $SECONDS -lt $deadline ]; do
        ok=1
        probe "$SMTP_PORT" "220 " QUIT || ok=0
        [ $ok = 1 ] && { probe "$IMAP_PORT" "* OK" "a LOGOUT" || ok=0; }
        [ $ok = 1 ] && { probe "$LMTP_PORT" "220 " QUIT || ok=0; }
        [ $ok = 1 ] && return 0
        sleep 0.05
    done
    return 1
}

diagnostics() {
    local pf="$DIR/postfix" dc="$DIR/dovecot"
    {
        echo "==== mailstack start failed in $DIR (ports smtp=$SMTP_PORT imap=$IMAP_PORT lmtp=$LMTP_PORT)"
        echo "---- postfix start output";  cat "$DIR/postfix-start.out" 2>/dev/null || true
        echo "---- dovecot start output";  cat "$DIR/dovecot-start.out" 2>/dev/null || true
        echo "---- postfix check (under script(1): postfix prints only to a terminal)"
        script -qec "/usr/sbin/postfix -c $pf/etc check" /dev/null 2>&1 || true
        echo "---- doveconf check"
        doveconf -c "$dc/dovecot.conf" -n >/dev/null 2>&1 || doveconf -c "$dc/dovecot.conf" -n 2>&1 | tail -5
        echo "---- tail $pf/postfix.log"; tail -n 30 "$pf/postfix.log" 2>/dev/null || true
        echo "---- tail $dc/dovecot.log"; tail -n 30 "$dc/dovecot.log" 2>/dev/null || true
        if command -v ss >/dev/null; then
            echo "---- listeners on the chosen ports"
            ss -Hltnp 2>/dev/null | grep -E ":($SMTP_PORT|$IMAP_PORT|$LMTP_PORT)\b" || echo "(none)"
        fi
    } >&2
}

start_once() {
    write_configs
    rm -f "$DIR/postfix/postfix.log" "$DIR/dovecot/dovecot.log"
    # Never let a daemon inherit our stdout/stderr: a caller reading our output through a
    # pipe would wait for the daemons to exit.
    if ! dovecot -c "$DIR/dovecot/dovecot.conf" </dev/null >"$DIR/dovecot-start.out" 2>&1; then
        return 1
    fi
    if ! /usr/sbin/postfix -c "$DIR/postfix/etc" start \
            </dev/null >"$DIR/postfix-start.out" 2>&1; then
        return 1
    fi
    wait_ready
}

explicit_ports=0
if [ -n "${MAILSTACK_SMTP_PORT:-}${MAILSTACK_IMAP_PORT:-}${MAILSTACK_LMTP_PORT:-}" ]; then
    explicit_ports=1
fi

attempt=1
while :; do
    read -r p1 p2 p3 < <(pick_ports)
    SMTP_PORT=${MAILSTACK_SMTP_PORT:-$p1}
    IMAP_PORT=${MAILSTACK_IMAP_PORT:-$p2}
    LMTP_PORT=${MAILSTACK_LMTP_PORT:-$p3}
    if start_once; then
        break
    fi
    in_use=0
    grep -qsi "address already in use" "$DIR/postfix/postfix.log" "$DIR/dovecot/dovecot.log" \
        "$DIR/postfix-start.out" "$DIR/dovecot-start.out" && in_use=1
    diagnostics
    bash "$HERE/stop.sh" "$DIR" >&2 || true
    if [ $explicit_ports = 0 ] && [ $in_use = 1 ] && [ $attempt -lt 3 ]; then
        attempt=$((attempt + 1))
        echo "mailstack start: a port was taken meanwhile, retrying with new ports" >&2
        continue
    fi
    exit 1
done

users_csv=$(IFS=,; echo "${USERS[*]}")
cat > "$DIR/ports.env" <<EOF
MAILSTACK_DIR=$DIR
MAIL_HOST=127.0.0.1
SMTP_PORT=$SMTP_PORT
IMAP_PORT=$IMAP_PORT
LMTP_PORT=$LMTP_PORT
MAIL_DOMAIN=$DOMAIN
MAIL_PASSWORD=$PASSWORD
MAIL_USERS=$users_csv
EOF
chmod 0644 "$DIR/ports.env"
cat "$DIR/ports.env"
