// THE list of `/topo` commands: each one file of this folder, on a pull request or on an autopilot
// experiment's dashboard issue. Adding a command is one file exporting its `Command` and one line
// here; the parser, the router, the help, the dashboard's controls and the record read this list.
import { cancel } from './cancel.js';
import type { Command } from './command.js';
import { conclude } from './conclude.js';
import { help } from './help.js';
import { learn } from './learn.js';
import { pause } from './pause.js';
import { reject } from './reject.js';
import { report } from './report.js';
import { resume } from './resume.js';
import { state } from './state.js';
import { status } from './status.js';
import { stop } from './stop.js';
import { submit } from './submit.js';
import { why } from './why.js';

export const COMMANDS: readonly Command[] = [
  submit,
  cancel,
  status,
  stop,
  reject,
  learn,
  report,
  state,
  why,
  help,
  pause,
  resume,
  conclude,
];
