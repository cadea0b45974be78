import { createRequire as __topoCreateRequire } from 'node:module';
import { fileURLToPath as __topoFileURLToPath } from 'node:url';
import { dirname as __topoDirname } from 'node:path';
const require = __topoCreateRequire(import.meta.url);
const __filename = __topoFileURLToPath(import.meta.url);
const __dirname = __topoDirname(__filename);

// src/cli/command.ts
var UsageError = class extends Error {
};

// src/cli/commands/init.ts
var initCommand = {
  name: "init",
  summary: "Create an experiment from a full AlpaSim run command",
  usage: 'topo init --command "<full run command>" [--dir topologies] [--date YYYYMMDD]',
  async run(_args, io) {
    io.stderr("topo init: not implemented yet (issue 2)\n");
    return 1;
  }
};

// src/cli/commands/validate.ts
var validateCommand = {
  name: "validate",
  summary: "Validate candidate, experiment and cluster files",
  usage: "topo validate [--json] <paths\u2026>",
  async run(_args, io) {
    io.stderr("topo validate: not implemented yet (issue 2)\n");
    return 1;
  }
};

// src/cli/commands/render.ts
var renderCommand = {
  name: "render",
  summary: "Print the sbatch argv of a candidate",
  usage: "topo render [--json] [--cluster NAME] <candidate.yaml>",
  async run(_args, io) {
    io.stderr("topo render: not implemented yet (issue 2)\n");
    return 1;
  }
};

// src/cli/commands/submit.ts
var submitCommand = {
  name: "submit",
  summary: "Submit a candidate to Slurm (idempotent)",
  usage: "topo submit <candidate.yaml> [--cluster NAME] [--dry-run]",
  async run(_args, io) {
    io.stderr("topo submit: not implemented yet (issue 3)\n");
    return 1;
  }
};

// src/cli/commands/cancel.ts
var cancelCommand = {
  name: "cancel",
  summary: "Cancel the Slurm job of a candidate",
  usage: "topo cancel <candidate.yaml> [--cluster NAME]",
  async run(_args, io) {
    io.stderr("topo cancel: not implemented yet (issue 3)\n");
    return 1;
  }
};

// src/cli/commands/jobs.ts
var jobsCommand = {
  name: "jobs",
  summary: "List the Slurm jobs of an experiment",
  usage: "topo jobs <experiment> [--cluster NAME] [--json]",
  async run(_args, io) {
    io.stderr("topo jobs: not implemented yet (issue 3)\n");
    return 1;
  }
};

// src/cli/commands/status.ts
var statusCommand = {
  name: "status",
  summary: "Show the live candidates of an experiment",
  usage: "topo status <experiment> [--watch]",
  async run(_args, io) {
    io.stderr("topo status: not implemented yet (issue 5)\n");
    return 1;
  }
};

// src/cli/commands/analyze.ts
var analyzeCommand = {
  name: "analyze",
  summary: "Analyse one run from Prometheus",
  usage: "topo analyze <run_name> [--json]",
  async run(_args, io) {
    io.stderr("topo analyze: not implemented yet (issue 5)\n");
    return 1;
  }
};

// src/cli/commands/report.ts
var reportCommand = {
  name: "report",
  summary: "Render the final report of an experiment",
  usage: "topo report <experiment> [--out FILE]",
  async run(_args, io) {
    io.stderr("topo report: not implemented yet (issue 6)\n");
    return 1;
  }
};

// src/cli/commands/suggest.ts
var suggestCommand = {
  name: "suggest",
  summary: "Propose the next candidates",
  usage: "topo suggest <experiment> [--count N] [--open-prs] [--json]",
  async run(_args, io) {
    io.stderr("topo suggest: not implemented yet (issue 8)\n");
    return 1;
  }
};

// src/cli/commands/sim.ts
var simCommand = {
  name: "sim",
  summary: "Run or export the AlpaSim twin",
  usage: "topo sim run <hydra overrides\u2026> | topo sim --export-openmetrics <file> [options]",
  async run(_args, io) {
    io.stderr("topo sim: not implemented yet (issue 4)\n");
    return 1;
  }
};

// src/cli/commands/demo.ts
var demoCommand = {
  name: "demo",
  summary: "Run the whole loop on a local Slurm with the AlpaSim twin",
  usage: "topo demo [--quick] [--out DIR]",
  async run(_args, io) {
    io.stderr("topo demo: not implemented yet (issue 9)\n");
    return 1;
  }
};

// src/cli/commands/index.ts
var commands = [
  initCommand,
  validateCommand,
  renderCommand,
  submitCommand,
  cancelCommand,
  jobsCommand,
  statusCommand,
  analyzeCommand,
  reportCommand,
  suggestCommand,
  simCommand,
  demoCommand
];

// src/cli/main.ts
async function main(argv, io) {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    io.stdout(helpText(commands));
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`topo: unknown command "${name}"

${helpText(commands)}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(`${command.usage}
`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`topo ${name}: ${error.message}

usage: ${command.usage}
`);
      return 2;
    }
    io.stderr(`topo ${name}: ${error instanceof Error ? error.message : String(error)}
`);
    return 1;
  }
}
function helpText(list) {
  const width = Math.max(...list.map((c) => c.name.length));
  const lines = list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `topo: AlpaSim Slurm topology experiments as pull requests

usage: topo <command> [options]

${lines.join("\n")}

Run \`topo <command> --help\` for a command's options.
`;
}
async function runCli() {
  const code = await main(process.argv.slice(2), {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    cwd: process.cwd(),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY)
  });
  process.exitCode = code;
}
export {
  helpText,
  main,
  runCli
};
