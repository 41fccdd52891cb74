#!/bin/sh
# Install Fleetwatch's systemd deployment: users, groups, folders, config, units. Idempotent.
# It never overwrites an existing config file and starts nothing: it prints the next steps.
#
# Usage: deploy/install.sh [--root DIR] [--name NAME] [--python PATH] [--no-users]
#   --root DIR     put every file under DIR (a scratch root or a package's DESTDIR); paths
#                  written inside files stay the real ones (/etc/..., /var/lib/..., /run/...).
#   --name NAME    base name of users, groups, folders and units (default: fleetwatch).
#                  Users: NAME-executor, NAME-web, NAME-assistant; groups: NAME (the shared
#                  store: the executor and approval_web only), NAME-operators (people who may
#                  use the CLI and ask; the assistant is one), NAME-approvers (people who may
#                  read the approval page's secret; no service is one).
#   --python PATH  the interpreter that has Fleetwatch installed (default:
#                  /opt/NAME/venv/bin/python; make it with: python3 -m venv /opt/NAME/venv &&
#                  /opt/NAME/venv/bin/pip install /path/to/fleetwatch).
#   --no-users     create no users or groups and chown nothing (building a package).
#                  Without it, each service's user must be able to run --python (checked).
#   --uninstall    remove what install.sh and `fleetwatch up` made: the units, the tmpfiles
#                  entry, the wrapper, /etc/NAME, the runtime folders, the logs, the page
#                  secrets and the token slots (run `fleetwatch logout` and `logout --sandbox`
#                  first: removing a slot revokes nothing). It keeps the store
#                  (/var/lib/NAME/store), the services' own state beside it (audit keys, the
#                  watch's store) and the users and groups that own them; --purge removes
#                  those too. Refused while a service's user runs a process.
#   --purge        with --uninstall: /var/lib/NAME whole, the users and groups too.
#
# Who can reach what (see docs/deploy.md):
#   executor.sock  NAME-web only (group NAME-executor + SO_PEERCRED uid check)
#   approval.sock  NAME-assistant and NAME-operators (group + SO_PEERCRED uid/gid check)
#   sandbox token  NAME-executor only (0600 in /var/lib/NAME/executor, 0700)
#   read token     NAME-assistant only (0600 in /var/lib/NAME/assistant, 0700)
#   the store      NAME-executor and NAME-web only (group NAME; /var/lib/NAME/store 2770, the
#                  database and its -wal/-shm 0660); the assistant records through approval.sock
#   page secrets   the approval page's: NAME-approvers (/var/lib/NAME/approve 2750, the file 0640);
#                  the ask page's: NAME-operators (/var/lib/NAME/ask 2750, the file 0640)
#   root's files   supervisord's logs in /var/lib/NAME/logs (root, 0750): never in a folder a
#                  service's user can write
set -eu

ROOT=""
NAME="fleetwatch"
PYTHON=""
USERS=yes
UNINSTALL=no
PURGE=no
HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
SOURCE=$(dirname -- "$HERE")

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT=${2%/}; shift 2 ;;
        --name) NAME=$2; shift 2 ;;
        --python) PYTHON=$2; shift 2 ;;
        --no-users) USERS=no; shift ;;
        --uninstall) UNINSTALL=yes; shift ;;
        --purge) PURGE=yes; shift ;;
        -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$NAME" in
    *[!a-z0-9-]*|"") echo "install.sh: --name must be lower-case letters, digits, '-'" >&2; exit 2 ;;
esac
[ -n "$PYTHON" ] || PYTHON="/opt/$NAME/venv/bin/python"
if [ "$(id -u)" != 0 ] && [ "$USERS" = yes ]; then
    echo "install.sh: run as root (or with --root DIR --no-users to build a tree)" >&2
    exit 2
fi

EXECUTOR="$NAME-executor"
WEB="$NAME-web"
ASSISTANT="$NAME-assistant"
OPERATORS="$NAME-operators"
APPROVERS="$NAME-approvers"
STORE_GROUP="$NAME"

log() { printf '%s\n' "install.sh: $*"; }

# --- users and groups (real, even with --root: they are what the fence is made of) ---------

ensure_group() {
    getent group "$1" >/dev/null 2>&1 || { groupadd --system "$1"; log "group $1 created"; }
}

ensure_user() {  # name, primary group
    if ! getent passwd "$1" >/dev/null 2>&1; then
        useradd --system --gid "$2" --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin --comment "Fleetwatch service" "$1"
        log "user $1 created"
    fi
}

ensure_member() {  # user, group
    id -nG "$1" | tr ' ' '\n' | grep -qx "$2" || usermod -a -G "$2" "$1"
}

ensure_not_member() {  # user, group: an earlier install may have added it
    if id -nG "$1" | tr ' ' '\n' | grep -qx "$2"; then
        gpasswd -d "$1" "$2" >/dev/null
        log "user $1 removed from group $2"
    fi
}

create_users() {
    for group in "$STORE_GROUP" "$OPERATORS" "$APPROVERS" "$EXECUTOR" "$WEB" "$ASSISTANT"; do
        ensure_group "$group"
    done
    ensure_user "$EXECUTOR" "$EXECUTOR"
    ensure_user "$WEB" "$WEB"
    ensure_user "$ASSISTANT" "$ASSISTANT"
    ensure_member "$EXECUTOR" "$STORE_GROUP"
    ensure_member "$WEB" "$STORE_GROUP"
    ensure_member "$WEB" "$EXECUTOR"      # the one way to executor.sock
    ensure_not_member "$ASSISTANT" "$STORE_GROUP"  # it never opens the store
    ensure_member "$ASSISTANT" "$OPERATORS"  # approval.sock
    for user in "$EXECUTOR" "$WEB" "$ASSISTANT"; do
        ensure_not_member "$user" "$APPROVERS"  # the approval page's secret is for people only
    done
}

# The services' interpreter: there, and runnable by each service's user (a venv made from an
# interpreter under /root, say, is not: the services would fail at their first start).
check_python() {
    if [ ! -x "$PYTHON" ]; then
        echo "install.sh: --python $PYTHON: no such interpreter; make it first (see --help)" >&2
        exit 2
    fi
    for user in "$EXECUTOR" "$WEB" "$ASSISTANT"; do
        if ! (cd / && runuser -u "$user" -- "$PYTHON" -c 'import sys' </dev/null >/dev/null 2>&1); then
            echo "install.sh: $user cannot run $PYTHON (it, or a folder on its way or where its venv links to, is closed to that user); put the interpreter where every user may run it, e.g. python3 -m venv /opt/$NAME/venv" >&2
            exit 2
        fi
    done
}

# --- uninstall ------------------------------------------------------------------------------

# Removes what install.sh and `fleetwatch up` made; the store (with the services' own state and
# the users that own them) stays unless --purge. rm never follows a link inside what it removes, and each path
# removed is in a folder only root can write (a service's own folders go whole).
uninstall() {
    for user in "$EXECUTOR" "$WEB" "$ASSISTANT"; do
        if getent passwd "$user" >/dev/null 2>&1 && pgrep -u "$user" >/dev/null 2>&1; then
            echo "install.sh: $user still runs; stop the services first (systemctl stop $NAME.target, or $NAME down)" >&2
            exit 2
        fi
    done
    lib="$ROOT/var/lib/$NAME"
    for unit in executor approval-web assistant; do
        rm -f "$ROOT/etc/systemd/system/$NAME-$unit.service"
    done
    rm -f "$ROOT/etc/systemd/system/$NAME.target" "$ROOT/etc/tmpfiles.d/$NAME.conf" "$ROOT/usr/local/bin/$NAME"
    rm -rf "$ROOT/etc/$NAME" "$ROOT/run/$NAME" "$ROOT/run/$NAME-executor" "$ROOT/run/$NAME-web" \
        "$ROOT/run/$NAME-assistant"
    rm -rf "$lib/logs" "$lib/approve" "$lib/ask" "$lib/executor/tokens" "$lib/assistant/tokens"
    if [ "$PURGE" = yes ]; then
        rm -rf "$lib"
        if [ "$USERS" = yes ]; then
            for user in "$EXECUTOR" "$WEB" "$ASSISTANT"; do
                userdel "$user" >/dev/null 2>&1 || true
            done
            for group in "$STORE_GROUP" "$OPERATORS" "$APPROVERS" "$EXECUTOR" "$WEB" "$ASSISTANT"; do
                groupdel "$group" >/dev/null 2>&1 || true
            done
        fi
        log "removed $NAME: units, config, state, the store, users and groups"
    else
        log "removed $NAME's units, config, runtime folders, logs, page secrets and token slots"
        log "kept the store ($lib/store), the services' own state beside it (audit keys, the watch's store) and the users and groups that own them (--purge removes them)"
    fi
    [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1 && systemctl daemon-reload >/dev/null 2>&1
    return 0
}

# --- folders ------------------------------------------------------------------------------

# What a service's user can write (its own folders, the store) root makes and fixes only by
# descriptor, never following a link that user planted (issue 24: a re-run used to chmod and
# chown a symlink's target): shared/private_files.py's command line, the one place this is done.
# A planted symlink is refused, naming it, and nothing is changed.
private_files() {
    (cd / && PYTHONPATH="$SOURCE" "$py" -P -m shared.private_files --said-by install.sh "$@")
}

folder() {  # path, mode, owner, group: create if missing, then set mode and owner
    if [ "$USERS" = yes ]; then
        private_files folder "$ROOT$1" "$2" "$3" "$4"
    else
        private_files folder "$ROOT$1" "$2" - -
    fi
}

create_folders() {
    folder "/etc/$NAME" 0755 root root
    folder "/var/lib/$NAME" 0755 root root
    folder "/var/lib/$NAME/store" 2770 root "$STORE_GROUP"
    folder "/var/lib/$NAME/executor" 0700 "$EXECUTOR" "$EXECUTOR"
    folder "/var/lib/$NAME/executor/tokens" 0700 "$EXECUTOR" "$EXECUTOR"
    folder "/var/lib/$NAME/web" 0700 "$WEB" "$OPERATORS"
    folder "/var/lib/$NAME/assistant" 0700 "$ASSISTANT" "$OPERATORS"
    folder "/var/lib/$NAME/assistant/tokens" 0700 "$ASSISTANT" "$OPERATORS"
    # The page secrets, each in a setgid folder of its own: the service writes the file 0640,
    # the folder's group reads it. The approval page's for approvers (people), the ask page's
    # for operators.
    folder "/var/lib/$NAME/approve" 2750 "$WEB" "$APPROVERS"
    folder "/var/lib/$NAME/ask" 2750 "$ASSISTANT" "$OPERATORS"
    # supervisord's logs when it runs the services as root (fleetwatch up): root's own.
    folder "/var/lib/$NAME/logs" 0750 root root
    store_files
    return 0
}

# The store is made writable by its group (the executor and approval_web; never the assistant)
# before any service opens it: SQLite gives its -wal and -shm files the database file's mode,
# and the setgid folder gives them the store group. Run again, it puts an existing database and
# its -wal/-shm back to that. Those users can write the folder, so root touches each file only
# through a descriptor opened without following a symlink, and only a regular file with no
# other hard link (what `fleetwatch up` does too: shared/private_files.py fix_file).
store_files() {
    owner=root
    group=$STORE_GROUP
    [ "$USERS" = yes ] || { owner=-; group=-; }
    for name in fleetwatch.db fleetwatch.db-wal fleetwatch.db-shm; do
        create=""
        [ "$name" = fleetwatch.db ] && create=--create
        private_files file "$ROOT/var/lib/$NAME/store" "$name" 0660 "$owner" "$group" $create
    done
}

# --- config (never overwritten) ---------------------------------------------------------------

id_of() {  # user -> uid, or a placeholder without users
    if [ "$USERS" = yes ]; then id -u "$1"; else echo "UID_OF_$1"; fi
}

gid_of() {
    if [ "$USERS" = yes ]; then getent group "$1" | cut -d: -f3; else echo "GID_OF_$1"; fi
}

write_config() {
    env_file="$ROOT/etc/$NAME/$NAME.env"
    if [ -e "$env_file" ]; then
        log "kept $env_file (existing config is never overwritten)"
    else
        umask 027
        cat >"$env_file" <<EOF
# Fleetwatch settings shared by the three services and the CLI (no secrets here: secrets go in
# /etc/$NAME/<service>.env, readable by root only). Every variable: \`fleetwatch doctor\`.
# Do not set FLEETWATCH_HOME or FLEETWATCH_RUNTIME_DIR here: each unit sets its own.
FLEETWATCH_STATE_DIR=/var/lib/$NAME/store
FLEETWATCH_DB=/var/lib/$NAME/store/fleetwatch.db
FLEETWATCH_READ_TOKEN_FILE=/var/lib/$NAME/assistant/tokens/read.json
FLEETWATCH_SANDBOX_TOKEN_FILE=/var/lib/$NAME/executor/tokens/sandbox.json
FLEETWATCH_POLICY_DIR=/etc/$NAME/policy
# Epiphan Edge (North America; eu. or au. elsewhere). The lab: http://127.0.0.1:8770/mcp
FLEETWATCH_EPIPHAN_MCP_URL=https://go.epiphan.cloud/mcp
# The fence: the sandbox team's ID and/or the master IDs a change may target (comma-separated).
# With neither, nothing can be proposed or run.
FLEETWATCH_WRITE_TEAM_ID=
FLEETWATCH_WRITE_DEVICE_IDS=
# Who may connect to each socket (checked with SO_PEERCRED besides the socket's file mode).
# executor.sock: approval_web's user only.
FLEETWATCH_EXECUTOR_UIDS=$(id_of "$WEB")
# approval.sock: operators (root, and members of $OPERATORS) may use every admin command;
# the assistant's user (FLEETWATCH_ASSISTANT_UIDS) may only submit and follow proposals.
FLEETWATCH_APPROVAL_UIDS=0
FLEETWATCH_APPROVAL_GIDS=$(gid_of "$OPERATORS")
# assistant.sock: the assistant itself (its ask page) and members of $OPERATORS.
FLEETWATCH_ASSISTANT_UIDS=$(id_of "$ASSISTANT")
FLEETWATCH_ASSISTANT_GIDS=$(gid_of "$OPERATORS")
EOF
        umask 022
        chmod 0640 "$env_file"
        [ "$USERS" = yes ] && chown "root:$OPERATORS" "$env_file"
        log "wrote $env_file"
    fi
    for service in executor web assistant; do
        secret_file="$ROOT/etc/$NAME/$service.env"
        [ -e "$secret_file" ] && continue
        umask 077
        {
            echo "# Secrets of $NAME-$service only; read by systemd as root (mode 0600)."
            [ "$service" = assistant ] && {
                echo "# The model API key. Empty = the model is off (keyword answers, nothing sent to a model)."
                echo "FLEETWATCH_ANTHROPIC_API_KEY="
                echo "# Where the watch posts (empty = not there; the console always gets it)."
                echo "FLEETWATCH_SLACK_BOT_TOKEN="
                echo "FLEETWATCH_SLACK_CHANNEL="
                echo "FLEETWATCH_TEAMS_WEBHOOK_URL="
            }
        } >"$secret_file"
        umask 022
        chmod 0600 "$secret_file"
    done
    if [ ! -e "$ROOT/etc/$NAME/policy" ]; then
        mkdir -p "$ROOT/etc/$NAME/policy"
        cp "$SOURCE/policy/policy.yaml" "$SOURCE/policy/tool_policy.yaml" "$ROOT/etc/$NAME/policy/"
        chmod 0755 "$ROOT/etc/$NAME/policy"
        chmod 0644 "$ROOT/etc/$NAME/policy/"*.yaml
        log "copied the policy to /etc/$NAME/policy"
    fi
    return 0
}

# --- units and helpers (code, replaced on every run) ------------------------------------------

render() {  # template, destination, mode
    sed -e "s#/opt/fleetwatch/venv/bin/python#@PYTHON@#g" -e "s#fleetwatch#$NAME#g" \
        -e "s#@PYTHON@#$PYTHON#g" "$1" >"$2.tmp"
    chmod "$3" "$2.tmp"
    mv -f "$2.tmp" "$2"
}

install_units() {
    mkdir -p "$ROOT/etc/systemd/system" "$ROOT/etc/tmpfiles.d" "$ROOT/usr/local/bin"
    for unit in executor approval-web assistant; do
        render "$HERE/systemd/fleetwatch-$unit.service" "$ROOT/etc/systemd/system/$NAME-$unit.service" 0644
    done
    render "$HERE/systemd/fleetwatch.target" "$ROOT/etc/systemd/system/$NAME.target" 0644
    render "$HERE/systemd/fleetwatch.tmpfiles" "$ROOT/etc/tmpfiles.d/$NAME.conf" 0644
    cat >"$ROOT/usr/local/bin/$NAME.tmp" <<EOF
#!/bin/sh
# The fleetwatch CLI with the server's settings ($NAME.env) and the operators' socket folder.
set -a
. /etc/$NAME/$NAME.env
FLEETWATCH_RUNTIME_DIR=/run/$NAME
set +a
exec "$(dirname -- "$PYTHON")/fleetwatch" "\$@"
EOF
    chmod 0755 "$ROOT/usr/local/bin/$NAME.tmp"
    mv -f "$ROOT/usr/local/bin/$NAME.tmp" "$ROOT/usr/local/bin/$NAME"
}

# The catalogue's compiled twins beside its .po files in the installed package (what
# ./scripts/setup does in a checkout): each process then reads them with gettext instead of
# compiling the .po files at every start. Only for the interpreter that runs here (not with
# --root: a package's build host is not its target); without them the words are the same.
compile_catalogue() {
    [ -z "$ROOT" ] && [ -x "$PYTHON" ] || return 0
    if "$PYTHON" -m shared.text.catalogue; then
        log "compiled the catalogue's twins"
    else
        log "could not compile the catalogue's twins (each process compiles the .po files itself)"
    fi
}

# The interpreter that runs the folder and file steps: the one given, or the system's.
py=$PYTHON
[ -x "$py" ] || py=python3

if [ "$UNINSTALL" = yes ]; then
    uninstall
    exit 0
fi
[ "$PURGE" = no ] || { echo "install.sh: --purge goes with --uninstall" >&2; exit 2; }
[ "$USERS" = yes ] && create_users
[ "$USERS" = yes ] && check_python
create_folders
write_config
install_units
compile_catalogue

cat <<EOF
install.sh: done; nothing was started. Next:
  1. Fence: set FLEETWATCH_WRITE_TEAM_ID and/or FLEETWATCH_WRITE_DEVICE_IDS in /etc/$NAME/$NAME.env
  2. People: usermod -a -G $OPERATORS <person>   (the CLI and asking; then log in again)
     Approvers: usermod -a -G $APPROVERS <person>   (may read the approval page's secret)
  3. systemctl daemon-reload && systemd-tmpfiles --create /etc/tmpfiles.d/$NAME.conf
  4. Sign in (as root): $NAME login --paste   then   $NAME login --sandbox --paste
  5. systemctl enable --now $NAME.target   and check:   $NAME doctor
EOF
