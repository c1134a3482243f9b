#!/bin/bash
# Install the packages of the private test mail stack (Postfix + Dovecot IMAP/LMTP)
# and the system user "vmail" that owns the Maildirs.  Idempotent; run as root on
# Debian 12.  No system daemon is started and no system-wide config is written:
# Postfix is preseeded "No configuration" and a temporary policy-rc.d (exit 101)
# blocks the package scripts' invoke-rc.d.  See shared/MAILSTACK.md.
set -euo pipefail

PKGS=(dovecot-imapd dovecot-lmtpd postfix)

have_all() {
    local p
    for p in "${PKGS[@]}"; do
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
    done
    command -v dovecot >/dev/null && [ -x /usr/sbin/postfix ]
}

ensure_vmail() {
    if ! getent passwd vmail >/dev/null; then
        # Dovecot refuses mail uids below first_valid_uid (500 by default) and root:
        # a --system user gets a uid in 100-999, start.sh pins first/last_valid_uid to it.
        useradd --system --user-group --home-dir /nonexistent --no-create-home \
            --shell /usr/sbin/nologin vmail
    fi
}

if have_all && getent passwd vmail >/dev/null; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: the mail stack packages are missing and this is not root;" \
         "run as root: $0" >&2
    exit 1
fi

if ! have_all; then
    created_policy=""
    cleanup() {
        if [ -n "$created_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
    }
    trap cleanup EXIT
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        created_policy=1
        printf '#!/bin/sh\n# temporary, from .ci/mailstack/install.sh\nexit 101\n' \
            > /usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
    fi

    export DEBIAN_FRONTEND=noninteractive
    echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
    echo "postfix postfix/mailname string mail.example.test" | debconf-set-selections

    apt_install() {
        apt-get install -y -q --no-install-recommends \
            -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
            "${PKGS[@]}"
    }
    # A fresh machine has no package lists (or stale ones): update, then retry once.
    if ! apt_install; then
        apt-get update -q
        apt_install
    fi
fi

ensure_vmail
have_all || { echo "install.sh: packages still missing after install" >&2; exit 1; }
