#!/bin/sh
# A stand-in for python:3.12-slim-bookworm, for a host that cannot pull it (tests/container/smoke.py
# --base localhost/prbot-base-standin:bookworm): Debian bookworm (minbase, from deb.debian.org)
# with Debian's python3 (3.11, prbot's minimum) and venv, `python` on PATH as in the official
# image, and this host's certificate bundle (pip then trusts what the host trusts: a proxy's own
# authority, say). Like Debian's slim container images it keeps no apt caches or downloaded
# packages and has no documentation, manual pages or translations, so the image's size is
# comparable to one built on the official base (without this, `apt-get install git` left 92 MB of
# apt caches in the image). Needs root and debootstrap; prints the image's name.
set -eu
name=localhost/prbot-base-standin:bookworm
root=$(mktemp -d /tmp/prbot-standin-XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root/rootfs" \
    http://deb.debian.org/debian >"$root/debootstrap.log"
ln -s python3 "$root/rootfs/usr/bin/python"
cp /etc/ssl/certs/ca-certificates.crt "$root/rootfs/etc/ssl/certs/ca-certificates.crt"
cat >"$root/rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
# No package cache files, and no downloaded .deb kept after an install.
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT
cat >"$root/rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'DPKG'
# No documentation, manual pages or translations from packages installed later.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
DPKG
find "$root/rootfs/usr/share/doc" ! -type d ! -name copyright -delete
rm -rf "$root/rootfs/usr/share/man/"* "$root/rootfs/usr/share/info/"* "$root/rootfs/usr/share/locale/"* \
    "$root/rootfs/var/cache/apt/"*.bin "$root/rootfs/var/cache/apt/archives/"*.deb \
    "$root/rootfs/var/lib/apt/lists/"*
bundle=/etc/ssl/certs/ca-certificates.crt
tar -C "$root/rootfs" -c . |
    podman import --change 'CMD ["python3"]' --change "ENV PIP_CERT=$bundle" --change "ENV SSL_CERT_FILE=$bundle" \
        - "$name" >/dev/null
echo "$name"
