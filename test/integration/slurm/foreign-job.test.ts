// Issue 40 item 1: another user's UNLIMITED job on a private cluster without accounting (foreign-job.ts).
import { foreignJobSuite } from './foreign-job.js';

foreignJobSuite(false);
