#!/usr/bin/env bash
# `npm run test:all`: everything the tests need, then the tests. Brings the local cluster up (as root
# it installs the missing Debian packages itself: Chromium for the browser test, and slurmdbd with
# MariaDB for the private cluster with accounting that the adoption test runs `topo doctor` against),
# runs `npm test` with any extra arguments, and takes the cluster down again only if it started it.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for pkg in chromium slurmdbd mariadb-server-core mariadb-client-core; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ "$(id -u)" == 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "the tests need: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  fi
fi

was_up=$(bash scripts/local-cluster env --json 2>/dev/null | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).up?"yes":"no")}catch{console.log("no")}})')
if [[ "$was_up" != yes ]]; then
  trap 'bash scripts/local-cluster down >/dev/null 2>&1 || true' EXIT
fi
bash scripts/local-cluster up
# Slurm commands in the tests reach this cluster even when /etc/slurm/slurm.conf belongs to another one.
eval "$(bash scripts/local-cluster env | grep '^export SLURM_CONF=')"

npm test -- "$@"
