// What `topo setup` writes into an adopting repository: four short caller workflows that call this
// version's reusable workflows, pages.yml for the experiments site, and a commented clusters.yaml
// skeleton. Pure: text in, text out.

export interface SetupOptions {
  /** owner/name of alpasim-topo on GitHub (package.json's repository, or `topo setup --repo`). */
  repository: string;
  /** The version to call: a tag (v1 follows every 1.x release), a full tag (v1.2.0) or a commit SHA. */
  ref: string;
  /** The full commit SHA `ref` names: when set, every reference is pinned `@<sha> # <ref>`. */
  sha?: string;
  cluster: string;
  transport: 'local' | 'ssh';
  /** Label of the self-hosted runner (with `self-hosted`); default `slurm`. */
  runnerLabel?: string;
}

export interface SetupFile {
  path: string;
  text: string;
}

/** The project's own command, at the version the callers call (never `npx topo`: another package). */
export function topoCommand(o: Pick<SetupOptions, 'repository' | 'ref' | 'sha'>): string {
  return `npx --yes github:${o.repository}#${o.sha ?? o.ref}`;
}

/** `<sha> # <tag>` when pinned (Dependabot and Renovate bump both), else the ref as given. */
export function pinnedRef(o: Pick<SetupOptions, 'ref' | 'sha'>): string {
  return o.sha && o.sha !== o.ref ? `${o.sha} # ${o.ref}` : o.ref;
}

const header = (o: SetupOptions, what: string) =>
  `# ${what}\n# Written by \`topo setup\`: calls alpasim-topo's reusable workflow at ${o.sha ? `commit ${o.sha}${o.sha !== o.ref ? ` (${o.ref})` : ''}` : o.ref}.\n# ${
    o.sha
      ? 'Pinned by full SHA: that tagged tree names its actions by SHA too, so nothing that runs can move. Upgrade by running topo setup --force at the new version (or let Dependabot/Renovate bump the SHA and its tag comment).'
      : `${o.ref} is a moving tag: every release under it runs here without review. \`topo setup\` without --ref pins a SHA.`
  }\n`;

export function callerWorkflows(o: SetupOptions): SetupFile[] {
  const uses = (name: string) => `${o.repository}/.github/workflows/reusable-${name}.yml@${pinnedRef(o)}`;
  const label = o.runnerLabel ?? 'slurm';
  const write = `    permissions:\n      contents: read\n      checks: write\n      issues: write\n      pull-requests: write\n`;
  // An environment secret must still be passed by name: the reusable job, which enters the
  // environment, then reads the environment's value (a repository secret would reach any branch).
  const secret = `    secrets:\n      # A secret of the "slurm" environment (deployment branches: the default branch only), never a\n      # repository secret; passed by name, the job that enters the environment reads its value.\n      TOPO_SSH_PRIVATE_KEY: \${{ secrets.TOPO_SSH_PRIVATE_KEY }}\n`;
  // the monitor's watch loop also lists the queued workflow runs it yields the runner to; its
  // autopilot pushes its bot branches (one candidate file each; docs/security.md)
  const monitorWrite = write
    .replace('    permissions:\n', '    permissions:\n      actions: read\n')
    .replace('contents: read', 'contents: write');
  const runner = `      runner-label: ${label}\n`;
  return [
    {
      path: '.github/workflows/topology-validate.yml',
      text: `${header(o, 'Validate candidate topologies in pull requests (GitHub-hosted, no secrets).')}name: topology-validate\n\non:\n  pull_request:\n    types: [opened, synchronize, reopened]\n    paths:\n      - 'topologies/**'\n\npermissions: {}\n\njobs:\n  validate:\n    permissions:\n      checks: write\n      contents: read\n      pull-requests: read\n    uses: ${uses('validate')}\n`,
    },
    {
      path: '.github/workflows/topology-submit.yml',
      text: `${header(o, `/topo comment commands and the submit label (self-hosted runner labelled ${label}).`)}name: topology-submit\n\non:\n  issue_comment:\n    types: [created]\n  pull_request:\n    types: [labeled]\n\npermissions: {}\n\njobs:\n  submit:\n${write}    uses: ${uses('submit')}\n    with:\n${runner}${secret}`,
    },
    {
      path: '.github/workflows/topology-monitor.yml',
      text: `${header(o, `One reconcile pass every 5 minutes and on demand, then a look every minute while candidates run (self-hosted runner labelled ${label}).`)}name: topology-monitor\n\non:\n  schedule:\n    - cron: '*/5 * * * *'\n  workflow_dispatch: {}\n\npermissions: {}\n\njobs:\n  monitor:\n${monitorWrite}    uses: ${uses('monitor')}\n    with:\n${runner}${secret}`,
    },
    {
      path: '.github/workflows/topology-record.yml',
      text: `${header(o, 'The experiment record when a candidate pull request closes, or by hand for one pull request.')}name: topology-record\n\non:\n  pull_request:\n    types: [closed]\n    paths:\n      - 'topologies/**'\n  workflow_dispatch:\n    inputs:\n      pr:\n        description: Number of the closed pull request to record again\n        type: number\n        required: true\n\npermissions: {}\n\njobs:\n  record:\n    permissions:\n      contents: write\n      pull-requests: write\n    uses: ${uses('record')}\n    with:\n      pr: \${{ inputs.pr && format('{0}', inputs.pr) || '' }}\n${runner}${secret}`,
    },
  ];
}

/** When the pages workflow runs: after every record, on a push to experiments/, by hand; one deployment at a time. */
const PAGES_TRIGGERS = `name: pages

on:
  push:
    paths:
      - 'experiments/**'
  workflow_run:
    workflows: [topology-record]
    types: [completed]
  workflow_dispatch: {}

permissions: {}

concurrency:
  group: pages
  cancel-in-progress: false
`;

/**
 * The experiments site on GitHub Pages: `topo site` of the same alpasim-topo version as the callers
 * (checked out at the ref, its committed bundle run with node: no npm install), after every record.
 */
export function pagesWorkflow(o: SetupOptions): SetupFile {
  return {
    path: '.github/workflows/pages.yml',
    text: `# The experiments site (topo site) on GitHub Pages, rebuilt after every topology-record run, on a
# push to experiments/ of the default branch, and by hand. Written by \`topo setup\`: runs
# alpasim-topo's \`topo site\` at ${o.sha ? `${o.sha}${o.sha !== o.ref ? ` (${o.ref})` : ''}` : o.ref}, checked out beside the records. Enable Pages with source
# "GitHub Actions" (Settings → Pages).
${PAGES_TRIGGERS}
jobs:
  publish:
    if: github.event_name != 'push' || github.ref_name == github.event.repository.default_branch
    runs-on: ubuntu-latest
    timeout-minutes: 10
    permissions:
      contents: read
      pages: write
      id-token: write
    environment:
      name: github-pages
      url: \${{ steps.deployment.outputs.page_url }}
    steps:
      - name: Check out the default branch (the records)
        uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          ref: \${{ github.event.repository.default_branch }}
          persist-credentials: false
      - name: Check out alpasim-topo ${o.ref}
        uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          repository: ${o.repository}
          ref: ${pinnedRef(o)}
          path: .alpasim-topo
          persist-credentials: false
      - uses: actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0
        with:
          node-version: 24
      - name: Render every experiment record
        run: node .alpasim-topo/bin/topo.js site --records experiments --out site
      - uses: actions/upload-pages-artifact@56afc609e74202658d3ffba0e8f6dda462b719fa # v3.0.1
        with:
          path: site
      - id: deployment
        uses: actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e # v4.0.5
`,
  };
}

/**
 * A clusters.yaml that validates as written (with warnings): every value to replace holds TODO,
 * example.org or PLACEHOLDER, so `topo validate` warns and `topo doctor` fails until it is replaced.
 */
export function clustersSkeleton(o: SetupOptions): SetupFile {
  const topo = topoCommand(o);
  const ssh =
    o.transport === 'ssh'
      ? `    # How the runner reaches the login node. The private key is the TOPO_SSH_PRIVATE_KEY secret of the
    # "slurm" environment (limited to the default branch); the host key is pinned here, reviewed like code.
    host: login.example.org          # TODO: the login node
    user: alpasim-bot                # TODO: the cluster account the runner submits as
    port: 22
    known_host_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPLACEHOLDERPLACEHOLDERPLACEHOLDERPLACEHOLDE   # TODO: ssh-keyscan -t ed25519 <host>
`
      : '';
  return {
    path: 'topologies/clusters.yaml',
    text: `# Where candidates run: one entry per cluster; an experiment names its cluster in experiment.yaml.
# Written by \`topo setup\`. Replace every TODO (topo validate warns about each one left, topo doctor
# fails on them), then check it with
#   ${topo} validate topologies/clusters.yaml
# and, on the runner host,
#   ${topo} doctor --cluster ${o.cluster}
# Schema: topologies/schema/clusters.schema.json of alpasim-topo (docs/topology.md).
clusters:
  ${o.cluster}:
    # local: the runner sits on a login node with sbatch, squeue, sacct and scancel on PATH.
    # ssh: the runner reaches a login node over SSH.
    transport: ${o.transport}
${ssh}    alpasim_checkout: /TODO/path/to/alpasim           # TODO: AlpaSim's checkout on the cluster
    submit_script: src/tools/run-on-slurm/submit.sh  # relative to alpasim_checkout
    run_dir: /TODO/path/to/runs                      # TODO: where runs write their logs
    file_sd: /TODO/path/to/prometheus/file-sd        # TODO: the folder Prometheus discovers targets in (or host:/path)
    prometheus_url: http://prometheus.example.org:9090   # TODO: reachable from the runner
    # grafana_url: http://grafana.internal:3000  # optional: the dashboard linked from the comments (doctor skips it when absent)
    gpus_per_node: 8
    gpu_memory_gib: 80
    cpus_per_node: 128
    slurm:
      account: TODO_account     # TODO
      partition: TODO_partition # TODO
      time: "03:59:00"
    # Predicted GPU memory (GiB) until measured runs teach a better model: per replica, per cached
    # scene, and an overhead per GPU in use. Unmeasured guesses: replace them with your own numbers.
    memory_model:
      per_replica_gib: { renderer: 12, driver: 5, physics: 1.5, trafficsim: 8, controller: 0 }
      per_cached_scene_gib: { renderer: 1.5, physics: 0.25 }
      per_gpu_overhead_gib: 1
`,
  };
}

export function setupFiles(o: SetupOptions): SetupFile[] {
  return [...callerWorkflows(o), pagesWorkflow(o), clustersSkeleton(o)];
}
