#!/bin/sh
# A stand-in for python:3.12-slim-bookworm, for a host that cannot pull it (tests/container/smoke.py
# --base localhost/prbot-base-standin): Debian bookworm (minbase, from deb.debian.org) with Debian's
# python3 (3.11, prbot's minimum) and venv, `python` on PATH as in the official image, and this
# host's certificate bundle (pip then trusts what the host trusts: a proxy's own authority, say).
# Needs root and debootstrap; prints the image's name.
set -eu
name=localhost/prbot-base-standin:bookworm
root=$(mktemp -d /tmp/prbot-standin-XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root/rootfs" \
    http://deb.debian.org/debian >"$root/debootstrap.log"
ln -s python3 "$root/rootfs/usr/bin/python"
cp /etc/ssl/certs/ca-certificates.crt "$root/rootfs/etc/ssl/certs/ca-certificates.crt"
rm -rf "$root/rootfs/var/cache/apt/archives/"*.deb "$root/rootfs/var/lib/apt/lists/"*
bundle=/etc/ssl/certs/ca-certificates.crt
tar -C "$root/rootfs" -c . |
    podman import --change 'CMD ["python3"]' --change "ENV PIP_CERT=$bundle" --change "ENV SSL_CERT_FILE=$bundle" \
        - "$name" >/dev/null
echo "$name"
