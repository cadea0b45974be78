#!/usr/bin/env node
// The `topo` command: runs the committed CLI bundle (built by `npm run build`).
import { runCli } from '../dist/topo.js';

await runCli();
