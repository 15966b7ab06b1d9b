#!/usr/bin/env bash
# The two base images the Dockerfile names, made on this machine and stored in buildah's local
# storage under their official names, so that `buildah build --pull=never` takes them as they are.
# The official node:20-bookworm(-slim) images cannot be pulled here (only Debian's packages and the
# npm registry are reached), so each is what the official one is built from: Debian bookworm
# debootstrapped from Debian's mirror (minbase for -slim; for the full image the buildpack-deps
# packages that matter: build-essential, python3, git, ca-certificates, curl) with Debian's image
# set-up (debuerreotype's apt and dpkg settings), plus the host's Node.js laid out in /usr/local as
# the official image lays it out. Two lines of npm's global config are this machine's network, not
# the image: `nodedir`, because nodejs.org (headers, prebuilt binaries) is out of reach, so native
# modules compile against the copied headers; `cafile`, the host's CA bundle, because the npm
# registry is reached through a TLS-intercepting proxy.
#
# Needs root, debootstrap and buildah. A base already in the storage is kept (REBUILD=1 makes it anew).
#   bash scripts/image/base-images.sh
set -euo pipefail

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
WORK=${QUIRE_IMAGE_WORK:-/var/tmp/quire-image-check}
mkdir -p "$WORK"

have_image() { buildah inspect --type image "$1" >/dev/null 2>&1; }

debian_setup() { # root variant — what Debian's own images add to a debootstrapped tree
  local root=$1 variant=$2
  rm -f "$root/etc/apt/sources.list"
  mkdir -p "$root/etc/apt/sources.list.d"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  # Packages installed during a build never start services.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 755 "$root/usr/sbin/policy-rc.d"
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'CLEAN'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CLEAN
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  if [ "$variant" = slim ]; then
    mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
SLIM
  fi
  rm -rf "$root/var/cache/apt/archives" "$root/var/lib/apt/lists"
  mkdir -p "$root/var/cache/apt/archives/partial" "$root/var/lib/apt/lists/partial"
}

install_node() { # root — the host's Node.js where the official image has its own
  local root=$1
  install -m 755 /usr/bin/node "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules" "$root/usr/local/include" "$root/usr/local/etc"
  cp -a /usr/lib/node_modules/npm /usr/lib/node_modules/corepack "$root/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$root/usr/local/bin/corepack"
  cp -a /usr/include/node "$root/usr/local/include/node"
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/etc/host-ca.pem"
  printf 'nodedir=/usr/local\ncafile=/usr/local/etc/host-ca.pem\n' >"$root/usr/local/etc/npmrc"
}

make_base() { # variant name
  local variant=$1 name=$2
  if [ -z "${REBUILD:-}" ] && have_image "$name"; then
    echo "base $name: already in buildah's storage"
    return
  fi
  local dir="$WORK/base-$variant"
  rm -rf "$dir" && mkdir -p "$dir"
  local extra=(--include=build-essential,python3,git,ca-certificates,curl)
  [ "$variant" = slim ] && extra=(--variant=minbase)
  echo "base $name: debootstrap bookworm (${extra[*]}) from $MIRROR"
  debootstrap "${extra[@]}" bookworm "$dir" "$MIRROR" >"$WORK/debootstrap-$variant.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap-$variant.log"; exit 1; }
  debian_setup "$dir" "$variant"
  install_node "$dir"
  local ctr mnt
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  tar -C "$dir" --numeric-owner -cf - . | tar -C "$mnt" --numeric-owner -xpf -
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$(node -p process.versions.node)" --cmd node \
    --os linux --arch "$(buildah info --format '{{.host.arch}}')" "$ctr"
  buildah commit --quiet --rm --format docker "$ctr" "$name" >/dev/null
  rm -rf "$dir"
  echo "base $name: committed"
}

make_base slim docker.io/library/node:20-bookworm-slim
make_base full docker.io/library/node:20-bookworm
