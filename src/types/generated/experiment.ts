/* Generated from topologies/schema/experiment.schema.json by scripts/gen-types.mjs. Do not edit. */

/**
 * topologies/<experiment>/experiment.yaml: what is fixed across the candidates of one experiment.
 */
export interface Experiment {
  /**
   * topology-opt-<driver>-<cluster>-<YYYYMMDD>
   */
  experiment_id: string;
  objective?: string;
  /**
   * The full AlpaSim run command the experiment started from.
   */
  command?: string;
  /**
   * A cluster name from topologies/clusters.yaml.
   */
  cluster: string;
  /**
   * The AlpaSim topology preset candidates start from (topology=<name>).
   */
  base_topology: string;
  /**
   * Live candidates at once (the seed's limit is 3).
   */
  max_parallel?: number;
  /**
   * Cancel the reference's job (the baseline running beside the candidates) once its verdict is stable, to save GPU-hours. A candidate is never stopped as stable: it is stopped on its decision (stop_when_decided).
   */
  stop_when_stable?: boolean;
  /**
   * Relative change of seconds per rollout below which two candidates are called equivalent (0.02 = 2%).
   */
  min_improvement?: number;
  /**
   * How a decision stays valid while the monitor looks every minute: `alpha-spending` (one-sided group-sequential boundaries, Lan–DeMets Pocock-type, spending the error over max_decision_minutes) or `always-valid` (a two-sided confidence sequence with no horizon, slower). See docs/monitor.md.
   */
  decision_boundary?: 'alpha-spending' | 'always-valid';
  /**
   * Run-minutes over which the alpha-spending boundary spends the error allowed; a candidate still undecided then stays `measuring` (no claim is made any more).
   */
  max_decision_minutes?: number;
  /**
   * What a round's candidates are decided against. `beside` (default): one job of the current best (the record's best, else its baseline) runs beside them, started with them, and each candidate is decided against it at equal run age; it counts in max_parallel and is stopped when no open decision needs it (docs/monitor.md). `recorded`: no reference job; candidates are decided against the record's best as it was measured, with a between-run term in the interval (estimated from repeated runs of one topology in the record, else assumed).
   */
  reference?: 'beside' | 'recorded';
  /**
   * Cancel a candidate's job as soon as its comparison with the baseline and the current best is decided, to save GPU time.
   */
  stop_when_decided?: boolean;
  /**
   * Accept candidates whose predicted GPU memory is above a GPU's capacity while the memory model is clusters.yaml's estimate (not yet fitted from this experiment's measured runs): a warning instead of an error. Once the record fits the model from measured runs, above capacity is an error whatever this says.
   */
  allow_unmeasured_memory?: boolean;
  /**
   * A running candidate's comment is rewritten at most this often unless its state or decision changes (GitHub API budget).
   */
  comment_interval_minutes?: number;
  /**
   * The autopilot (docs/autopilot.md): the experiment runs its own rounds of candidates as bot pull requests under this policy. Read from the default branch only: editing it in a pull request changes nothing until merged; a change applies from the next round (the budget at once), and enabled: false pauses.
   */
  autopilot?: {
    /**
     * Run rounds by themselves. false pauses: no new run starts, running ones go on to their decision.
     */
    enabled: boolean;
    /**
     * Rounds after the baseline at most; then the autopilot concludes.
     */
    max_rounds?: number;
    /**
     * Hard budget of the experiment in GPU-hours (every run counts, the baseline and people's candidates included). A run starts only when spent + the expected cost of the live runs + its own fit; at the budget the autopilot stops its live runs and concludes.
     */
    gpu_hours: number;
    /**
     * Candidates per round (the seed's at most 3); at most max_parallel, which it defaults to.
     */
    parallel?: number;
    /**
     * Rounds in a row without a decided gain after which the autopilot concludes (the seed's stop rule).
     */
    stop_after?: number;
    /**
     * auto: the autopilot makes each bot pull request's Request itself; approval: a writer's /topo submit or approving review starts each one.
     */
    submit?: 'auto' | 'approval';
    /**
     * manual: the concluded winner's pull request is labelled and marked ready for review; auto: merged once every check in required_checks passed.
     */
    merge?: 'manual' | 'auto';
    /**
     * The status checks branch protection requires on the default branch (e.g. topo/validate, topo/monitor). merge: auto needs them listed, topo/monitor among them, and merges only once each passed on the winner's head.
     *
     * @maxItems 32
     */
    required_checks?: string[];
  };
  fixed_inputs: {
    deploy: string;
    driver: string;
    /**
     * scenes.test_suite_id
     */
    scenes?: string;
    /**
     * Scenes in the suite (e.g. 913 for public_2601); with rollouts_per_scene gives the run's length.
     */
    scene_count?: number;
    rollouts_per_scene?: number;
    /**
     * Camera preset (+cameras=<preset>).
     */
    cameras?: string;
    control_timestep_us?: number;
    simulation_duration_s?: number;
    git_commit?: string;
    /**
     * Other Hydra overrides of the command that stay fixed across candidates ([+|++]key=value; a value may hold spaces). Each key must exist in AlpaSim's config tree (rule override-unknown); hydra.*, _target_, _args_, env_set and callbacks are refused (override-forbidden).
     *
     * @maxItems 200
     */
    overrides?: string[];
    /**
     * Variables of the command that AlpaSim's submit.sh reads (LOGDIR=... DESCRIPTION=... sbatch ...). Render passes them through the sbatch export allowlist; each run gets LOGDIR/<job name>.
     */
    submit_env?: {
      LOGDIR?: string;
      DESCRIPTION?: string;
    };
    slurm?: {
      account?: string;
      partition?: string;
      gpus_per_node?: number;
      /**
       * sbatch --gpus=N of the command (one node: the GPUs of the job); rendered as --gpus=N.
       */
      gpus?: number;
      time?: string;
    };
  };
  /**
   * Detector thresholds; defaults suit AlpaSim's 5-second scrape.
   */
  stabilisation?: {
    warmup_floor_minutes?: number;
    window_minutes?: number;
    max_relative_range?: number;
    max_relative_slope_per_hour?: number;
    consecutive_windows?: number;
    max_ci_relative?: number;
  };
}
