#!/bin/bash
# Stop, crash, start or restart ONE server of a stack started by .ci/mailstack/start.sh DIR,
# on the ports it was given (DIR/ports.env), for outage tests.
#
#   .ci/mailstack/service.sh DIR stop|kill|start|restart|crash-restart dovecot|postfix
#
#   stop           SIGTERM to the server's processes (Dovecot's imap processes say BYE)
#   kill           SIGKILL to them: a crash; clients see the connection close, nothing more
#   start          start it again with the configs in DIR; returns once it answers
#                  (Dovecot: then Postfix flushes its queue, if it runs)
#   restart        stop, then start
#   crash-restart  kill, then start
#
# Run as root.  Stopping and killing go through stop.sh (by pid, checked to be this DIR's).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "mailstack service: $*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: $0 DIR stop|kill|start|restart|crash-restart dovecot|postfix"
DIR=$(realpath -e -- "$1") || die "no such directory: $1"
ACTION=$2
SERVER=$3
case "$SERVER" in dovecot|postfix) ;; *) die "unknown server: $SERVER" ;; esac
[ -r "$DIR/ports.env" ] || die "no $DIR/ports.env: start the stack with start.sh first"
# shellcheck disable=SC1091
. "$DIR/ports.env"

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

ready() {
    if [ "$SERVER" = dovecot ]; then
        probe "$IMAP_PORT" "* OK" "a LOGOUT" && probe "$LMTP_PORT" "220 " QUIT
    else
        probe "$SMTP_PORT" "220 " QUIT
    fi
}

do_stop() { bash "$HERE/stop.sh" "$DIR" "$SERVER" "$1"; }

do_start() {
    if [ "$SERVER" = dovecot ]; then
        dovecot -c "$DIR/dovecot/dovecot.conf" </dev/null >>"$DIR/dovecot-start.out" 2>&1 \
            || { cat "$DIR/dovecot-start.out" >&2; die "dovecot did not start"; }
    else
        /usr/sbin/postfix -c "$DIR/postfix/etc" start </dev/null >>"$DIR/postfix-start.out" 2>&1 \
            || { tail -n 20 "$DIR/postfix/postfix.log" >&2; die "postfix did not start"; }
    fi
    local deadline=$((SECONDS + 60))  # a hang guard: a busy machine is slow to start
    until ready; do
        [ $SECONDS -lt $deadline ] || die "$SERVER does not answer 60 s after its start"
        sleep 0.05
    done
    if [ "$SERVER" = dovecot ]; then
        # Mail Postfix deferred while LMTP was away goes now, as an operator would have
        # it, not at Postfix's next retry: after a refused connection its queue manager
        # sometimes held the message past 20 s ("skipped, still being delivered").
        /usr/sbin/postfix -c "$DIR/postfix/etc" flush </dev/null >/dev/null 2>&1 || true
    fi
}

case "$ACTION" in
    stop) do_stop TERM ;;
    kill) do_stop KILL ;;
    start) do_start ;;
    restart) do_stop TERM; do_start ;;
    crash-restart) do_stop KILL; do_start ;;
    *) die "unknown action: $ACTION" ;;
esac
