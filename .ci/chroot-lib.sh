# Sourced by .ci/fresh-chroot and tests/dist/bare_debian.sh: a fresh, minimal
# Debian 12 (debootstrap --variant=minbase bookworm) under /var/tmp, with
# /proc, /sys, /dev, a tmpfs /dev/shm, the host's apt sources, resolv.conf
# and local CA certificates, and a cleanup on EXIT that ends what still runs
# in there, unmounts and deletes it (kept, unmounted, with keep=1).
#
#   chroot_new      makes $root from the saved pristine tree (debootstraps
#                   and saves it first when there is none, or with refresh=1)
#   chroot_setup    mounts, apt sources, DNS, CA certificates
#   mnt ARGS TARGET mounts one more thing, unmounted by the cleanup
#
# The caller sets keep, refresh (0/1) and needs root.
base=/var/tmp/onnxzip-fresh-chroot
pristine=$base/bookworm-minbase.tar
mirror=http://deb.debian.org/debian
keep=${keep:-0} refresh=${refresh:-0}

say() { printf '\n==== %s ====\n' "$*"; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

root= phases=
mounts=()   # mounted inside $root, in mount order

# Processes whose root directory is the chroot: the ones this script started
# there (a command interrupted mid-way may leave children behind).
chroot_pids() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$r" = "$root" ] && echo "${p#/proc/}"
    done
    return 0
}

still_mounted() { # mount points at or under $root still in the mount table
    awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo
}

cleanup() {
    local status=$? i pids
    trap - EXIT INT TERM
    [ -z "$phases" ] || rm -f "$phases"
    [ -n "$root" ] || exit "$status"
    pids=$(chroot_pids)
    if [ -n "$pids" ]; then
        echo "${0##*/}: ending processes left in the chroot: $pids" >&2
        # shellcheck disable=SC2086  # one pid per word
        kill -TERM $pids 2>/dev/null || true
        sleep 2
        pids=$(chroot_pids)
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" ||
            echo "${0##*/}: could not unmount ${mounts[$i]}" >&2
    done
    # Whatever else is mounted in there (debootstrap's own /proc and /sys when
    # it was interrupted), deepest first.
    for i in $(still_mounted | sort -r); do
        umount "$i" 2>/dev/null || umount -l "$i" || true
    done
    if [ -n "$(still_mounted)" ]; then
        # Never delete through a mount (/dev, shared/ are the host's own).
        echo "${0##*/}: still mounted, chroot left in place: $(still_mounted | tr '\n' ' ')" >&2
    elif [ "$keep" = 1 ]; then
        echo "${0##*/}: chroot kept (unmounted): $root"
    else
        rm -rf --one-file-system "$root"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mnt() { # mount ARGS... TARGET: records TARGET for cleanup
    mount "$@"
    mounts+=("${!#}")
}

chroot_new() {
    mkdir -p "$base"
    root=$(mktemp -d "$base/run.XXXXXX")
    chmod 755 "$root"   # mktemp's 0700 would lock users such as _apt out of /
    say "chroot $root"
    t0=$(now)
    if [ "$refresh" = 0 ] && [ -f "$pristine" ]; then
        echo "unpacking $pristine (saved $(date -r "$pristine" '+%F %T'))"
        tar -xpf "$pristine" --numeric-owner --xattrs -C "$root"
        chmod 755 "$root"
        echo "TIME unpack pristine tree: $(since "$t0") s"
    else
        if ! command -v debootstrap >/dev/null 2>&1; then
            apt-get update
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
        fi
        debootstrap --variant=minbase bookworm "$root" "$mirror"
        echo "TIME debootstrap: $(since "$t0") s"
        # Saved before anything else touches the tree; renamed when complete.
        t1=$(now)
        tar -cpf "$pristine.part" --numeric-owner --xattrs --one-file-system -C "$root" .
        mv "$pristine.part" "$pristine"
        echo "TIME save $pristine: $(since "$t1") s"
    fi
}

chroot_setup() {
    mnt -t proc proc "$root/proc"
    mnt -t sysfs sysfs "$root/sys"
    mnt --bind /dev "$root/dev"
    mnt --bind /dev/pts "$root/dev/pts"
    mkdir -p "$root/dev/shm"
    mnt -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"

    # The host's apt sources replace debootstrap's one-line sources.list (both
    # would list bookworm twice), with the keyrings they name.
    rm -f "$root/etc/apt/sources.list"
    [ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/"
    for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        cp "$f" "$root/etc/apt/sources.list.d/"
        for k in $(sed -n 's/^ *Signed-By: *\(\/[^ ]*\).*/\1/p; s/.*signed-by=\([^] ]*\).*/\1/p' "$f"); do
            [ -f "$k" ] && [ ! -e "$root$k" ] && install -D -m 644 "$k" "$root$k"
        done
    done
    echo "apt sources: $(cd "$root/etc/apt" && ls sources.list sources.list.d/* 2>/dev/null | tr '\n' ' ')"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
    # The host's local CA certificates, which update-ca-certificates adds to the
    # chroot's trust store when install-deps installs ca-certificates: on a
    # network that intercepts TLS, HTTPS (npm ci) fails without them, as name
    # lookups would without resolv.conf.
    cas=(/usr/local/share/ca-certificates/*.crt)
    if [ -f "${cas[0]}" ]; then
        mkdir -p "$root/usr/local/share/ca-certificates"
        cp "${cas[@]}" "$root/usr/local/share/ca-certificates/"
        echo "local CA certificates: ${cas[*]##*/}"
    fi
}
