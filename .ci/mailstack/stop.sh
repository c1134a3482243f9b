#!/bin/bash
# Stop the private Postfix + Dovecot started by .ci/mailstack/start.sh DIR.
#
#   .ci/mailstack/stop.sh DIR [all|dovecot|postfix] [TERM|KILL]
#
# Stops by pid, never by name: each master pid is checked to belong to this DIR
# (Dovecot: "-c DIR/dovecot/dovecot.conf" on its command line; Postfix:
# MAIL_CONFIG=DIR/postfix/etc in its environment), its descendants are collected from
# /proc, the signal goes to the master and every descendant at once (as systemd does
# to a service's control group: with TERM, Dovecot's imap processes say BYE to their
# clients; with KILL, a crash, the clients just see the connection close), and all of
# them are waited for (SIGKILL after a few seconds).  Default: both servers, TERM.
# Safe to run when nothing is running.  The files in DIR are left in place.
set -uo pipefail

[ $# -ge 1 ] && [ $# -le 3 ] || { echo "usage: $0 DIR [all|dovecot|postfix] [TERM|KILL]" >&2; exit 2; }
WHICH=${2:-all}
SIGNAL=${3:-TERM}
case "$WHICH" in all|dovecot|postfix) ;; *) echo "$0: unknown server: $WHICH" >&2; exit 2 ;; esac
case "$SIGNAL" in TERM|KILL) ;; *) echo "$0: signal must be TERM or KILL: $SIGNAL" >&2; exit 2 ;; esac
[ -d "$1" ] || exit 0
DIR=$(realpath -e -- "$1")
PF_PID_FILE="$DIR/postfix/queue/pid/master.pid"
DC_PID_FILE="$DIR/dovecot/run/master.pid"

read_pid() {
    local pid=""
    [ -r "$1" ] && read -r pid < "$1" 2>/dev/null
    pid=${pid//[[:space:]]/}
    [[ "$pid" =~ ^[0-9]+$ ]] && [ "$pid" -gt 1 ] && echo "$pid"
}

# Is this pid a live (not zombie) process?  With "pid:starttime", also the same process
# (not a later one that reused the pid).
alive() {
    local pid=${1%%:*} start="" stat rest fields
    [[ "$1" == *:* ]] && start=${1#*:}
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    rest=${stat##*) }
    read -r -a fields <<<"$rest"
    [ "${fields[0]}" != Z ] || return 1
    # fields[0] is stat field 3 (state), so starttime (field 22) is fields[19].
    [ -z "$start" ] || [ "${fields[19]}" = "$start" ]
}

is_our_dovecot() {
    local args
    args=$(tr '\0' '\n' < "/proc/$1/cmdline" 2>/dev/null) || return 1
    # The master keeps its argv; children rewrite theirs for the process title.
    grep -qxF -- "$DIR/dovecot/dovecot.conf" <<<"$args" && grep -qxF -- "-c" <<<"$args"
}

is_our_postfix() {
    tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null \
        | grep -qxF -- "MAIL_CONFIG=$DIR/postfix/etc"
}

# Print "pid:starttime" for pid and all its descendants (one snapshot of /proc/*/stat).
descendants() {
    local root=$1 f stat rest pid fields
    declare -A kids=() starts=()
    for f in /proc/[0-9]*/stat; do
        stat=$(cat "$f" 2>/dev/null) || continue
        pid=${stat%% *}
        rest=${stat##*) }      # "S ppid pgrp ..." (comm may hold spaces and parens)
        read -r -a fields <<<"$rest"
        kids[${fields[1]}]+="$pid "
        starts[$pid]=${fields[19]}
    done
    local queue=("$root") out=() p c
    while [ ${#queue[@]} -gt 0 ]; do
        p=${queue[0]}; queue=("${queue[@]:1}")
        [ -n "${starts[$p]:-}" ] && out+=("$p:${starts[$p]}")
        for c in ${kids[$p]:-}; do queue+=("$c"); done
    done
    echo "${out[@]}"
}

pids=()
masters=()
pid_files=()
if [ "$WHICH" != postfix ]; then
    pid_files+=("$DC_PID_FILE")
    if pid=$(read_pid "$DC_PID_FILE") && alive "$pid" && is_our_dovecot "$pid"; then
        masters+=("$pid")
        read -r -a d <<<"$(descendants "$pid")"; pids+=("${d[@]}")
    fi
fi
if [ "$WHICH" != dovecot ]; then
    pid_files+=("$PF_PID_FILE")
    if pid=$(read_pid "$PF_PID_FILE") && alive "$pid" && is_our_postfix "$pid"; then
        masters+=("$pid")
        read -r -a d <<<"$(descendants "$pid")"; pids+=("${d[@]}")
    fi
fi

if [ ${#masters[@]} -eq 0 ]; then
    rm -f "${pid_files[@]}"   # stale: nothing of this DIR is running
    exit 0
fi

# The masters first, so that none of them starts a replacement for a child it sees die.
kill "-$SIGNAL" "${masters[@]}" 2>/dev/null || true
for p in "${pids[@]}"; do
    alive "$p" && { kill "-$SIGNAL" "${p%%:*}" 2>/dev/null || true; }
done

remaining() {
    local p still=()
    for p in "${pids[@]}"; do alive "$p" && still+=("$p"); done
    echo "${still[@]:-}"
}

# Dovecot's master takes about 1 s to exit; allow 5 s in all.
for _ in $(seq 1 100); do
    left=$(remaining)
    [ -z "$left" ] && break
    sleep 0.05
done
left=$(remaining)
if [ -n "$left" ]; then
    echo "mailstack stop: still running after SIGTERM, killing (pid:start): $left" >&2
    for p in $left; do kill -KILL "${p%%:*}" 2>/dev/null || true; done
    sleep 0.2
fi
rm -f "${pid_files[@]}"
exit 0
