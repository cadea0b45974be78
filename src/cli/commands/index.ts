// Every `topo` subcommand, in the order `topo help` lists them.
import type { Command } from '../command.js';
import { analyzeCommand } from './analyze.js';
import { autopilotCommand } from './autopilot.js';
import { cancelCommand } from './cancel.js';
import { demoCommand } from './demo.js';
import { doctorCommand } from './doctor.js';
import { initCommand } from './init.js';
import { jobsCommand } from './jobs.js';
import { recordCommand } from './record.js';
import { renderCommand } from './render.js';
import { reportCommand } from './report.js';
import { setupCommand } from './setup.js';
import { simCommand } from './sim.js';
import { siteCommand } from './site.js';
import { statusCommand } from './status.js';
import { submitCommand } from './submit.js';
import { suggestCommand } from './suggest.js';
import { validateCommand } from './validate.js';
import { watchCommand } from './watch.js';

export const commands: readonly Command[] = [
  setupCommand,
  doctorCommand,
  initCommand,
  validateCommand,
  renderCommand,
  submitCommand,
  cancelCommand,
  jobsCommand,
  statusCommand,
  analyzeCommand,
  recordCommand,
  watchCommand,
  reportCommand,
  suggestCommand,
  autopilotCommand,
  siteCommand,
  simCommand,
  demoCommand,
];
