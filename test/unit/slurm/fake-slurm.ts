// An in-memory Slurm for unit tests of the pure orchestration (the integration tests use the real one).
import {
  type JobListing,
  type SlurmClient,
  type SlurmJob,
  type SlurmJobState,
  statusOf,
  type Transport,
} from '../../../src/slurm/types.js';

export class FakeSlurm implements SlurmClient {
  jobsById = new Map<string, SlurmJob>();
  nextId = 100;
  calls: string[] = [];
  /** Run before sbatch returns (e.g. another runner submitting at the same moment). */
  beforeSubmitReturns?: () => void;
  readonly transport: Transport = {
    description: 'fake',
    run: async () => ({ stdout: '', stderr: '', code: 0 }),
    close: async () => {},
  };

  add(
    name: string,
    state: SlurmJobState = 'RUNNING',
    reason: string | null = null,
    fixedId?: string,
  ): SlurmJob {
    const id = fixedId ?? String(this.nextId++);
    const job: SlurmJob = {
      id,
      name,
      state,
      status: statusOf(state, reason),
      reason,
      exitCode: null,
      signal: null,
      restarts: 0,
      submitTime: null,
      startTime: null,
      endTime: null,
      timeLimit: null,
      elapsed: null,
      gpus: null,
      gpuMinutes: null,
      heldSeconds: null,
      nodes: null,
      user: 'root',
      comment: null,
      stdoutPath: null,
      source: 'squeue',
    };
    this.jobsById.set(id, job);
    return job;
  }
  async submit(argv: readonly string[]) {
    this.calls.push('submit');
    const name = argv.find((a) => a.startsWith('--job-name='))?.slice('--job-name='.length) ?? 'x';
    const held = argv.includes('--hold');
    const job = this.add(name, 'PENDING', held ? 'JobHeldUser' : 'Priority');
    job.comment = argv.find((a) => a.startsWith('--comment='))?.slice('--comment='.length) ?? null;
    this.beforeSubmitReturns?.();
    return job.id;
  }
  async listing(prefix: string): Promise<JobListing> {
    this.calls.push('jobs');
    const jobs = [...this.jobsById.values()].filter((j) => j.name.startsWith(prefix)).map((j) => ({ ...j }));
    return { jobs, accounting: 'off', skipped: [] };
  }
  async jobs(prefix: string) {
    return (await this.listing(prefix)).jobs;
  }
  async cancel(id: string) {
    this.calls.push(`cancel ${id}`);
    const j = this.jobsById.get(id);
    if (j) Object.assign(j, { state: 'CANCELLED', status: 'cancelled' });
  }
  async release(id: string) {
    this.calls.push(`release ${id}`);
    const j = this.jobsById.get(id);
    if (j) Object.assign(j, { reason: 'Priority', status: statusOf(j.state, 'Priority') });
  }
  async rename(id: string, name: string) {
    this.calls.push(`rename ${id}`);
    const j = this.jobsById.get(id);
    if (j) j.name = name;
  }
  async tail() {
    return [];
  }
  async ensureDir() {
    this.calls.push('mkdir');
  }
  async close() {}
}
