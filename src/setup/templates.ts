// What `topo setup` writes into an adopting repository: four short caller workflows that call this
// version's reusable workflows, and a commented clusters.yaml skeleton. Pure: text in, text out.

export interface SetupOptions {
  /** owner/name of alpasim-topo on GitHub (package.json's repository). */
  repository: string;
  /** The version to call: a tag (v1 follows every 1.x release), a full tag (v1.2.0) or a commit SHA. */
  ref: string;
  cluster: string;
  transport: 'local' | 'ssh';
}

export interface SetupFile {
  path: string;
  text: string;
}

const header = (o: SetupOptions, what: string) =>
  `# ${what}\n# Written by \`topo setup\`: calls alpasim-topo's reusable workflow at ${o.ref}; upgrade by changing the tag.\n`;

export function callerWorkflows(o: SetupOptions): SetupFile[] {
  const uses = (name: string) => `${o.repository}/.github/workflows/reusable-${name}.yml@${o.ref}`;
  const write = `    permissions:\n      contents: read\n      checks: write\n      issues: write\n      pull-requests: write\n`;
  const secret = `    secrets:\n      TOPO_SSH_PRIVATE_KEY: \${{ secrets.TOPO_SSH_PRIVATE_KEY }}\n`;
  return [
    {
      path: '.github/workflows/topology-validate.yml',
      text: `${header(o, 'Validate candidate topologies in pull requests (GitHub-hosted, no secrets).')}name: topology-validate\n\non:\n  pull_request:\n    types: [opened, synchronize, reopened]\n    paths:\n      - 'topologies/**'\n\npermissions: {}\n\njobs:\n  validate:\n    permissions:\n      checks: write\n      contents: read\n      pull-requests: read\n    uses: ${uses('validate')}\n`,
    },
    {
      path: '.github/workflows/topology-submit.yml',
      text: `${header(o, '/topo comment commands and the submit label (self-hosted runner labelled slurm).')}name: topology-submit\n\non:\n  issue_comment:\n    types: [created]\n  pull_request:\n    types: [labeled]\n\npermissions: {}\n\njobs:\n  submit:\n${write}    uses: ${uses('submit')}\n${secret}`,
    },
    {
      path: '.github/workflows/topology-monitor.yml',
      text: `${header(o, 'One reconcile pass every 5 minutes and on demand (self-hosted runner labelled slurm).')}name: topology-monitor\n\non:\n  schedule:\n    - cron: '*/5 * * * *'\n  workflow_dispatch: {}\n\npermissions: {}\n\njobs:\n  monitor:\n${write}    uses: ${uses('monitor')}\n${secret}`,
    },
    {
      path: '.github/workflows/topology-record.yml',
      text: `${header(o, 'The experiment record when a candidate pull request closes, or by hand for one pull request.')}name: topology-record\n\non:\n  pull_request:\n    types: [closed]\n    paths:\n      - 'topologies/**'\n  workflow_dispatch:\n    inputs:\n      pr:\n        description: Number of the closed pull request to record again\n        type: number\n        required: true\n\npermissions: {}\n\njobs:\n  record:\n    permissions:\n      contents: write\n      pull-requests: write\n    uses: ${uses('record')}\n    with:\n      pr: \${{ inputs.pr && format('{0}', inputs.pr) || '' }}\n${secret}`,
    },
  ];
}

/** A clusters.yaml that validates as written, every value to replace marked TODO. */
export function clustersSkeleton(o: SetupOptions): SetupFile {
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
# Written by \`topo setup\`. Replace every TODO, then check it with \`npx topo validate topologies/clusters.yaml\`
# and, on the runner host, \`npx topo doctor --cluster ${o.cluster}\`. Schema: topologies/schema/clusters.schema.json
# of alpasim-topo (docs/topology.md).
clusters:
  ${o.cluster}:
    # local: the runner sits on a login node with sbatch, squeue, sacct and scancel on PATH.
    # ssh: the runner reaches a login node over SSH.
    transport: ${o.transport}
${ssh}    alpasim_checkout: /path/to/alpasim               # TODO: AlpaSim's checkout on the cluster
    submit_script: src/tools/run-on-slurm/submit.sh  # relative to alpasim_checkout
    run_dir: /path/to/runs                           # TODO: where runs write their logs
    file_sd: /path/to/prometheus/file-sd             # TODO: the folder Prometheus discovers targets in (or host:/path)
    prometheus_url: http://prometheus.example.org:9090   # TODO: reachable from the runner
    grafana_url: http://grafana.example.org:3000         # TODO: shown in the comments' links
    gpus_per_node: 8
    gpu_memory_gib: 80
    cpus_per_node: 128
    slurm:
      account: my_account     # TODO
      partition: my_partition # TODO
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
  return [...callerWorkflows(o), clustersSkeleton(o)];
}
