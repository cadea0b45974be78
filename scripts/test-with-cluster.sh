#!/usr/bin/env bash
# `npm run test:all`: everything the tests need, then the tests. Brings the local clusters up (as root
# it installs the missing Debian packages itself: Chromium for the browser test, and slurmdbd with
# MariaDB for the private cluster with accounting that the adoption test runs `topo doctor` against),
# runs `npm test` with any extra arguments, and takes down again only the clusters it started.
#
# The integration files run TOPO_TEST_CLUSTERS at a time (default 2), each on a local cluster of its own
# (scripts/test-clusters.mjs: cluster 1 is the usual one, cluster k its own state folder and ports);
# TOPO_TEST_CLUSTERS=1 runs them one after another on one cluster.
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

export TOPO_TEST_CLUSTERS="${TOPO_TEST_CLUSTERS:-2}"
node scripts/test-clusters.mjs env "$TOPO_TEST_CLUSTERS" >/dev/null # a clear error for a bad count

# Runs scripts/local-cluster for test cluster $1 (1 = the environment as it is).
cluster() {
  local k="$1"
  shift
  (
    if ((k > 1)); then eval "$(node scripts/test-clusters.mjs env "$k")"; fi
    bash scripts/local-cluster "$@"
  )
}

started=()
stop_started() {
  local k
  for k in "${started[@]}"; do cluster "$k" down >/dev/null 2>&1 || true; done
}
trap stop_started EXIT
for ((k = 1; k <= TOPO_TEST_CLUSTERS; k++)); do
  was_up=$(cluster "$k" env --json 2>/dev/null | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).up?"yes":"no")}catch{console.log("no")}})')
  [[ "$was_up" == yes ]] || started+=("$k")
  cluster "$k" up
done
# Slurm commands in the tests reach cluster 1 even when /etc/slurm/slurm.conf belongs to another one
# (the other workers' SLURM_CONF comes from test/support/worker-cluster.ts).
eval "$(bash scripts/local-cluster env | grep '^export SLURM_CONF=')"

npm test -- "$@"
