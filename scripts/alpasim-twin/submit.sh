#!/usr/bin/env bash
# The AlpaSim twin's stand-in for AlpaSim's src/tools/run-on-slurm/submit.sh: Slurm runs it with exactly the
# Hydra overrides AlpaSim's script would receive (deploy= topology= driver= …). deploy=<name> picks the twin's
# hardware profile src/sim/profiles/<name>.yaml. Settings come from the twin.env of the local cluster that
# runs the job: beside its slurm.conf (Slurm sets SLURM_CONF in every job), so each private cluster's
# twin publishes into its own state folder; TOPO_TWIN_ENV names another file. The file sets:
#   TOPO_TWIN_FILE_SD_DIR   where the run publishes <run_uuid>.json for Prometheus file-SD
#   TOPO_TWIN_TIME_SCALE    simulated seconds per wall second (60: a 45-minute run in 45 s)
#SBATCH --nodes=1
#SBATCH --requeue
set -euo pipefail

# Under Slurm the script runs from a spool copy: find the checkout from the submit directory or the env.
if [[ -n "${TOPO_REPO_ROOT:-}" ]]; then
  REPO_ROOT="$TOPO_REPO_ROOT"
elif [[ -n "${SLURM_JOB_ID:-}" && -f "${BASH_SOURCE[0]%/*}/../../package.json" && -d "${BASH_SOURCE[0]%/*}/../../src/sim" ]]; then
  REPO_ROOT="$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)"
elif [[ -z "${SLURM_JOB_ID:-}" ]]; then
  REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
else
  # Slurm copies the batch script to its spool directory; scontrol knows the original path.
  ORIG="$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=\([^ ]*\).*/\1/p' | head -n1)"
  if [[ -n "$ORIG" && -f "$ORIG" ]]; then
    REPO_ROOT="$(cd "$(dirname "$ORIG")/../.." && pwd)"
  else
    REPO_ROOT="$(cd "${SLURM_SUBMIT_DIR:-.}" && pwd)"
  fi
fi

if [[ -n "${TOPO_TWIN_ENV:-}" ]]; then
  ENV_FILE="$TOPO_TWIN_ENV"
elif [[ -n "${SLURM_CONF:-}" && -f "$(dirname "$SLURM_CONF")/twin.env" ]]; then
  ENV_FILE="$(dirname "$SLURM_CONF")/twin.env"
else
  ENV_FILE="$REPO_ROOT/.state/local-cluster/twin.env"
fi
if [[ -f "$ENV_FILE" ]]; then
  # shellcheck disable=SC1090
  set -a && source "$ENV_FILE" && set +a
else
  echo "[twin] no $ENV_FILE (none beside SLURM_CONF=${SLURM_CONF:-unset} either): running without file-SD publication at time scale ${TOPO_TWIN_TIME_SCALE:-1}, so Prometheus sees no telemetry" >&2
fi

# AlpaSim keeps service logs in <run_dir>/txt-logs; the run dir is the parent of the job's slurm_output folder.
if [[ -z "${TOPO_TWIN_RUN_DIR:-}" && -n "${SLURM_JOB_ID:-}" ]]; then
  STDOUT_PATH="$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *StdOut=\(.*\)$/\1/p' | head -n1)"
  if [[ "$STDOUT_PATH" == */slurm_output/* ]]; then export TOPO_TWIN_RUN_DIR="${STDOUT_PATH%/slurm_output/*}"; fi
fi

if [[ ! -f "$REPO_ROOT/dist/topo.js" ]]; then
  echo "[twin] $REPO_ROOT/dist/topo.js is missing: run \`npm run build\` in $REPO_ROOT" >&2
  exit 1
fi
# bin/topo.js runs the bundle dist/topo.js (the bundle itself only exports the CLI).
exec node "$REPO_ROOT/bin/topo.js" sim run "$@"
